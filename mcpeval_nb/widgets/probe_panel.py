"""``ProbePanel``: pick a target and a manifest, run the probe in the background, read the verdicts.

Two run modes share the target and the label: ``probe`` (a probe manifest, then the readiness battery)
and ``result sizes`` (a call manifest file, each call made once: ``probe_result_sizes``, docs/sizes.md).

The view is thin: every widget event updates ``ProbeState`` and re-renders from it.  The run happens on
a worker thread (``run_probes`` with progress and a cancel event), so the kernel stays responsive and
the Cancel button works; ``wait(timeout)`` blocks until a run settles (for notebooks and tests).
Nothing shown comes from the server's payloads: verdicts, reason labels, fixed hints and numbers only.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import ipywidgets as w

from mcpeval_nb import (
    MCPEvalError,
    ProbeReport,
    ProgressEvent,
    RootLike,
    UsageError,
    probe_kinds,
    run_probes,
    select_cases,
)

from ._html import esc
from .probe_render import case_table, readiness_html
from .probe_state import ProbeState, mutating_cases
from .sizes_mode import SizesMode
from .sizes_state import SizesState

__all__ = ["ProbePanel"]

_ALL = "(every case)"
MODES = ("probe", "result sizes")


def _red(text: str, *, raw_tail: str = "") -> str:
    return f"<span style='color:#cf222e'>{esc(text)}{raw_tail}</span>"


class ProbePanel(SizesMode):
    """A probe runner panel.

    Args:
        root: the capture root for the synthetic journal and history (default ``$MCPEVAL_HOME``).
        command: a stdio command line to prefill (``python -m ...``), or None.
        url: a loopback Streamable HTTP URL to prefill (selects the HTTP target), or None.
        manifest: a manifest file to load into the editor, or None.
        server: the server label for the report and journal.
        call_manifest: a call manifest file for the ``result sizes`` mode (selects that mode), or None.

    Attributes:
        state: the ``ProbeState`` the view renders. sizes: the ``SizesState`` of the result-sizes mode.
    """

    def __init__(self, root: RootLike = None, *, command: str | None = None, url: str | None = None,
                 manifest: str | Path | None = None, server: str = "probe",
                 call_manifest: str | Path | None = None) -> None:
        self.root = root
        self.state = ProbeState(server=server, command=command or "", url=url or "",
                                target_kind="http" if url else "stdio")
        self.sizes = SizesState()
        super().__init__(self._build(), job_name="mcpeval-nb-probe")
        if manifest is not None:
            self.manifest_path.value = str(manifest)
            self._load_file()
        if call_manifest is not None:
            self.call_path.value = str(call_manifest)
            self._load_calls()
            self.mode.value = "result sizes"
        self._render()

    # -- layout ------------------------------------------------------------------------------------
    def _build(self) -> list[Any]:
        s = self.state
        self.target_kind = w.ToggleButtons(options=["stdio", "http"], value=s.target_kind,
                                           description="Target")
        self.command = w.Text(value=s.command, description="Command", placeholder="python -m my_server",
                              layout=w.Layout(width="95%"))
        self.url = w.Text(value=s.url, description="URL", placeholder="http://127.0.0.1:8000/mcp",
                          layout=w.Layout(width="95%"))
        self.server = w.Text(value=s.server, description="Label")
        self.protocol = w.Dropdown(options=["auto", "legacy", "2026-07-28"], value=s.protocol,
                                   description="Protocol")
        self.manifest_path = w.Text(description="Manifest", placeholder="path/to/mcp-eval.manifest.json",
                                    layout=w.Layout(width="70%"))
        self.load_button = w.Button(description="Load file", icon="folder-open")
        self.upload = w.FileUpload(accept=".json", multiple=False, description="Upload")
        self.editor = w.Textarea(placeholder="or paste a manifest here", rows=12,
                                 layout=w.Layout(width="95%"))
        self.manifest_status = w.HTML()
        self.kind = w.Dropdown(options=[_ALL, *probe_kinds()], value=_ALL, description="Probe kind")
        self.gate_only = w.Checkbox(value=False, description="Gate only (no readiness battery)", indent=False,
                                    layout=w.Layout(width="auto"))
        self.confirm_read_only = w.Checkbox(value=False, indent=False, layout=w.Layout(width="auto"),
                                            description="Confirm unannotated tools are read-only")
        self.skip = w.Text(description="Skip tools", placeholder="tool_a, tool_b")
        self.allow_mutation = w.Checkbox(value=False, indent=False, disabled=True,
                                         layout=w.Layout(width="auto"),
                                         description="Allow mutation: run the sandboxed mutating cases")
        self.mutation_note = w.HTML()
        self.run_button = w.Button(description="Run probe", button_style="primary", icon="play")
        self.cancel_button = w.Button(description="Cancel", icon="stop", disabled=True)
        self.progress = w.IntProgress(value=0, min=0, max=1, description="Cases")
        self.status = w.HTML()
        self.results = w.HTML()
        self.readiness = w.HTML()
        self.save_path = w.Text(description="Save as", value="probe-report.json")
        self.save_button = w.Button(description="Save report JSON", icon="save", disabled=True,
                                    layout=w.Layout(width="auto"))
        self.save_status = w.HTML()
        mutation = w.VBox([w.HTML("<b>Mutation</b> (off unless the manifest declares a sandboxed mutating "
                                  "case and you tick this box)"), self.allow_mutation, self.mutation_note],
                          layout=w.Layout(border="1px solid #cf222e", padding="4px", margin="4px 0"))
        self.probe_box = w.VBox([
            w.HBox([self.manifest_path, self.load_button, self.upload]), self.editor, self.manifest_status,
            w.HBox([self.kind, self.skip]), w.HBox([self.gate_only, self.confirm_read_only]), mutation,
            w.HBox([self.run_button, self.cancel_button, self.progress]), self.status, self.results,
            self.readiness, w.HBox([self.save_path, self.save_button]), self.save_status])
        self.mode = w.ToggleButtons(options=list(MODES), value="probe", description="Run mode")
        self.sizes_box = self._build_sizes()
        children = [w.HTML("<h3>Probe a server</h3>"), self.target_kind, self.command, self.url,
                    w.HBox([self.server, self.protocol]), self.mode, self.probe_box, self.sizes_box]
        self.mode.observe(lambda _c: self._render(), names="value")
        self.target_kind.observe(self._on_target, names="value")
        self.command.observe(self._on_target, names="value")
        self.url.observe(self._on_target, names="value")
        self.server.observe(self._on_target, names="value")
        self.protocol.observe(self._on_target, names="value")
        self.editor.observe(self._on_editor, names="value")
        self.upload.observe(self._on_upload, names="value")
        self.load_button.on_click(lambda _b: self._load_file())
        self.kind.observe(self._on_options, names="value")
        self.gate_only.observe(self._on_options, names="value")
        self.confirm_read_only.observe(self._on_options, names="value")
        self.skip.observe(self._on_options, names="value")
        self.allow_mutation.observe(self._on_mutation, names="value")
        self.run_button.on_click(lambda _b: self.run())
        self.cancel_button.on_click(lambda _b: self.cancel())
        self.save_button.on_click(lambda _b: self.save())
        return children

    # -- events ------------------------------------------------------------------------------------
    def _on_target(self, _change: Any) -> None:
        s = self.state
        s.target_kind, s.command, s.url, s.server = (self.target_kind.value, self.command.value,
                                                     self.url.value, self.server.value)
        s.protocol = self.protocol.value
        self._render()

    def _on_editor(self, change: Any) -> None:
        self.state.set_manifest_text(change["new"], source="editor")
        self._render()

    def _load_file(self) -> None:
        path = Path(self.manifest_path.value).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.manifest_status.value = _red(f"cannot read the manifest file ({type(exc).__name__})")
            return
        self.editor.value = text  # validates through _on_editor

    def _on_upload(self, change: Any) -> None:
        files = change["new"]
        if not files:
            return
        content = files[0]["content"]
        try:
            self.editor.value = bytes(content).decode("utf-8")
        except UnicodeDecodeError:
            self.manifest_status.value = _red("the uploaded file is not UTF-8")

    def _on_options(self, _change: Any) -> None:
        s = self.state
        s.probe_kind = None if self.kind.value == _ALL else self.kind.value
        s.gate_only, s.confirm_read_only = self.gate_only.value, self.confirm_read_only.value
        s.skip_tools = ProbeState.parse_skip(self.skip.value)
        self._render()

    def _on_mutation(self, change: Any) -> None:
        kept = self.state.set_allow_mutation(change["new"])
        if kept != change["new"]:
            self.allow_mutation.value = kept
        self._render()

    # -- running -----------------------------------------------------------------------------------
    def run(self) -> bool:
        """Start a run on a worker thread (the Run button).

        Returns:
            True when a run started; False when the inputs were refused (the status line says why).
        """
        s = self.state
        if self.busy:
            return False
        try:
            target = s.target()
            if s.manifest is None:
                raise UsageError("manifest: fix the manifest first")
            cases = select_cases(s.manifest, probe=s.probe_kind, allow_mutation=s.effective_allow_mutation)
            options = s.options(root=self.root)
        except MCPEvalError as exc:
            s.status = str(exc)
            self._render()
            return False
        manifest = s.manifest
        s.start([(c.id, c.probe) for c in cases])
        self._render()

        def work(cancel: threading.Event) -> ProbeReport:
            return run_probes(target, manifest=manifest, options=options, progress=self._on_progress,
                              cancel=cancel)

        self._launch(work, on_done=self._on_done, on_error=self._on_error)
        self._render()
        return True

    def cancel(self) -> None:
        """Ask the running probe to stop between cases and calls (the Cancel button)."""
        if self.busy:
            super().cancel()
            self.state.status = "cancelling..."
            self._render()

    def _on_progress(self, event: ProgressEvent) -> None:
        with self._lock:
            self.state.apply(event)
            self._render()

    def _on_done(self, report: ProbeReport) -> None:
        with self._lock:
            self.state.finish(report)
            self._render()

    def _on_error(self, exc: BaseException) -> None:
        with self._lock:
            self.state.fail(self.error_text(exc))
            self._render()

    def save(self, path: str | Path | None = None) -> Path | None:
        """Write the last report as probe-report/v2 JSON (the Save button).

        Args:
            path: where to write (default: the panel's "Save as" field).

        Returns:
            The path written, or None when there is no report or the write failed.
        """
        report = self.state.report
        if report is None:
            return None
        dest = Path(path if path is not None else self.save_path.value).expanduser()
        try:
            dest.write_text(report.dumps(), encoding="utf-8")
        except OSError as exc:
            self.save_status.value = _red(f"not saved ({type(exc).__name__})")
            return None
        self.save_status.value = f"saved <code>{esc(dest)}</code>"
        return dest

    # -- rendering ---------------------------------------------------------------------------------
    def _render(self) -> None:
        with self._lock:
            s = self.state
            self.command.layout.display = "none" if s.target_kind == "http" else None
            self.url.layout.display = None if s.target_kind == "http" else "none"
            self._render_manifest()
            running = self.busy and s.running
            self.run_button.disabled = running or s.manifest is None
            self.cancel_button.disabled = not running
            self.progress.max, self.progress.value = max(1, s.total), s.done
            self.status.value = f"<b>{esc(s.status)}</b>"
            self.results.value = case_table(s.rows)
            self.readiness.value = readiness_html(s.report)
            self.save_button.disabled = s.report is None
            sizes_mode = self.mode.value == "result sizes"
            self.probe_box.layout.display = "none" if sizes_mode else None
            self.sizes_box.layout.display = None if sizes_mode else "none"
            self._render_sizes()

    def _render_kinds(self) -> None:
        """Offer the kinds the manifest uses (every kind while there is no valid manifest)."""
        manifest = self.state.manifest
        kinds = list(probe_kinds()) if manifest is None else \
            list(dict.fromkeys(c.probe for c in manifest.cases))
        options = [_ALL, *kinds]
        if list(self.kind.options) != options:
            keep = self.kind.value if self.kind.value in options else _ALL
            self.kind.options = options
            self.kind.value = keep

    def _render_manifest(self) -> None:
        s = self.state
        self._render_kinds()
        if s.manifest_error is not None:
            where = "" if s.manifest_error_path is None else f" at <code>{esc(s.manifest_error_path)}</code>"
            self.manifest_status.value = _red(f"\u2717 {s.manifest_error}", raw_tail=where)
        elif s.manifest is not None:
            self.manifest_status.value = (f"<span style='color:#1a7f37'>&#10003; valid manifest: "
                                          f"{len(s.manifest.cases)} case(s)</span>")
        else:
            self.manifest_status.value = ""
        ids = mutating_cases(s.manifest)
        self.allow_mutation.disabled = not ids
        if self.allow_mutation.value != s.allow_mutation:
            self.allow_mutation.value = s.allow_mutation
        if ids:
            self.mutation_note.value = (f"sandboxed mutating case(s): {esc(', '.join(ids))}. "
                                        + ("<b>They will run.</b>" if s.allow_mutation else
                                           "They are refused unless you tick the box."))
        else:
            self.mutation_note.value = "this manifest declares no sandboxed mutating case: mutation stays off"

