"""``ReviewPanel``: run the redaction check, review, confirm, and export a share envelope.

The Export button stays disabled until the last sweep was clean, every checklist item is ticked and
the user confirmed the review.  Both the sweep and the export run on a worker thread with a byte
progress bar and a Cancel button (cancelling an export leaves any previous envelope untouched: the
staging directory is removed and nothing is published).  The panel lists flagged locations
(``path:line`` and detector ids) and counts, never matched text.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import ipywidgets as w

from mcpeval_nb import (
    MCPEvalError,
    RedactionReport,
    RootLike,
    ShareResult,
    check_redaction,
    export_share,
    read_audit,
    resolve_root,
)

from ._base import Panel
from ._html import esc, pre
from .review_state import CHECKLIST, ReviewState

__all__ = ["ReviewPanel"]


class _Stopped(Exception):
    """Raised from a progress callback to stop a cancelled sweep or export."""


class ReviewPanel(Panel):
    """The review-and-share panel.

    Args:
        root: the capture root (default ``$MCPEVAL_HOME`` or ``~/.mcp-eval``).
        dest: the envelope directory to prefill (default ``<root>/../share-envelope``).

    Attributes:
        state: the ``ReviewState`` the view renders.
    """

    def __init__(self, root: RootLike = None, *, dest: str | Path | None = None) -> None:
        base = resolve_root(root)
        default = dest if dest is not None else base.parent / "share-envelope"
        self.state = ReviewState(root=base, dest=str(default))
        self._load_exports()
        super().__init__(self._build(), job_name="mcpeval-nb-review")
        self._render()

    def _load_exports(self) -> None:
        """The last exports, from the audit log (an unreadable log shows none)."""
        try:
            self.state.set_exports(read_audit(self.state.root))
        except MCPEvalError:
            self.state.set_exports([])

    def _build(self) -> list[Any]:
        s = self.state
        self.check_button = w.Button(description="Run redaction check", icon="search", button_style="primary",
                                     layout=w.Layout(width="auto"))
        self.cancel_button = w.Button(description="Cancel", icon="stop", disabled=True)
        self.progress = w.FloatProgress(value=0.0, min=0.0, max=1.0, description="Bytes")
        self.status = w.HTML()
        self.flagged = w.HTML()
        auto = w.Layout(width="auto")
        self.history = w.Checkbox(value=False, indent=False, description="Include probe history", layout=auto)
        self.notes = w.Checkbox(value=False, indent=False, description="Include annotation notes (prose!)",
                                layout=auto)
        self.force = w.Checkbox(value=False, indent=False, description="Replace an existing envelope",
                                layout=auto)
        self.dest = w.Text(value=s.dest, description="Envelope", layout=w.Layout(width="95%"))
        self.checklist = [w.Checkbox(value=False, indent=False, description=label,
                                     layout=w.Layout(width="95%")) for _, label in CHECKLIST]
        self.confirm = w.Checkbox(value=False, indent=False, layout=w.Layout(width="95%"),
                                  description="I reviewed the sweep and the checklist: export this envelope")
        self.export_button = w.Button(description="Export envelope", icon="share", disabled=True,
                                      layout=w.Layout(width="auto"))
        self.result = w.HTML()
        self.exports = w.HTML()
        self.check_button.on_click(lambda _b: self.run_check())
        self.cancel_button.on_click(lambda _b: self.cancel())
        self.export_button.on_click(lambda _b: self.export())
        for box, name in ((self.history, "include_probe_history"), (self.notes, "include_annotation_notes"),
                          (self.force, "force")):
            box.observe(lambda change, name=name: self._on_option(name, change["new"]), names="value")
        for box, (key, _) in zip(self.checklist, CHECKLIST, strict=True):
            box.observe(lambda change, key=key: self._on_check(key, change["new"]), names="value")
        self.confirm.observe(self._on_confirm, names="value")
        self.dest.observe(self._on_dest, names="value")
        return [
            w.HTML("<h3>Review and share</h3>"),
            w.HBox([self.check_button, self.cancel_button, self.progress]),
            self.status, self.flagged, w.HTML("<b>Share options</b>"),
            w.HBox([self.history, self.notes, self.force]), self.dest, w.HTML("<b>Review checklist</b>"),
            *self.checklist, self.confirm, w.HBox([self.export_button]), self.result, self.exports]

    # -- events ------------------------------------------------------------------------------------
    def _on_option(self, name: str, value: bool) -> None:
        self.state.set_option(name, value)
        self._render()

    def _on_check(self, key: str, value: bool) -> None:
        (self.state.checks.add if value else self.state.checks.discard)(key)
        self._render()

    def _on_confirm(self, change: Any) -> None:
        self.state.confirmed = bool(change["new"]) and self.state.clean and self.state.checklist_complete
        self._render()

    def _on_dest(self, change: Any) -> None:
        self.state.dest = change["new"]
        self.state.confirmed = False
        self._render()

    def _progress(self, cancel: threading.Event) -> Any:
        def report(done: int, total: int) -> None:
            if cancel.is_set():
                raise _Stopped()
            with self._lock:
                self.state.done, self.state.total = done, total
                self.progress.max, self.progress.value = float(max(total, 1)), float(min(done, max(total, 1)))
        return report

    # -- work --------------------------------------------------------------------------------------
    def run_check(self) -> bool:
        """Start the redaction check on a worker thread (the Run button).

        Returns:
            True when the check started (False while other work is running).
        """
        if self.busy:
            return False
        self.state.start_sweep()
        root = self.state.root

        def work(cancel: threading.Event) -> RedactionReport:
            return check_redaction(root, progress=self._progress(cancel))

        self._launch(work, on_done=self._sweep_done, on_error=self._failed)
        self._render()
        return True

    def export(self) -> bool:
        """Publish the envelope on a worker thread (the Export button; only when allowed).

        Returns:
            True when the export started.
        """
        s = self.state
        if self.busy or not s.can_export:
            return False
        s.start_export()
        root, dest, options = s.root, Path(s.dest).expanduser(), s.options()

        def work(cancel: threading.Event) -> tuple[ShareResult, str]:
            result = export_share(root, dest=dest, options=options, progress=self._progress(cancel))
            return result, (result.dest / "SHARE.md").read_text(encoding="utf-8")

        self._launch(work, on_done=self._export_done, on_error=self._failed)
        self._render()
        return True

    def _sweep_done(self, report: RedactionReport) -> None:
        with self._lock:
            self.state.finish_sweep(report)
            self._render()

    def _export_done(self, outcome: tuple[ShareResult, str]) -> None:
        with self._lock:
            self.state.finish_export(*outcome)
            self._load_exports()
            self.confirm.value = False
            self._render()

    def _failed(self, exc: BaseException) -> None:
        with self._lock:
            self.state.fail("cancelled: nothing was published" if isinstance(exc, _Stopped)
                            else self.error_text(exc))
            self._load_exports()
            self._render()

    # -- rendering ---------------------------------------------------------------------------------
    def _render(self) -> None:
        with self._lock:
            s = self.state
            busy = s.sweeping or s.exporting
            self.check_button.disabled = busy
            self.cancel_button.disabled = not busy
            self.status.value = f"<b>{esc(s.status)}</b>"
            self.flagged.value = self._flagged_html()
            self.confirm.disabled = not (s.clean and s.checklist_complete)
            if self.confirm.value and not s.confirmed:
                self.confirm.value = False
            self.export_button.disabled = not s.can_export
            self.export_button.button_style = "success" if s.can_export else ""
            self.result.value = self._result_html()
            self.exports.value = self._exports_html()

    def _flagged_html(self) -> str:
        s = self.state
        if s.sweep is None:
            return ""
        items = "".join(f"<li><code>{esc(line)}</code></li>" for line in s.flagged)
        out = f"<ul class='mcpeval-flagged'>{items}</ul>" if items else ""
        if s.notes:
            out += (f"<p>{s.notes} annotation note(s) contain agent prose: review them before sharing "
                    "(they are excluded unless you include them).</p>")
        out += f"<p>Never share <code>{esc(s.sweep.salt)}</code> (the fingerprint salt).</p>"
        return out

    def _result_html(self) -> str:
        s = self.state
        if s.result is None:
            return ""
        return (f"<p>Envelope: <code class='mcpeval-envelope'>{esc(s.result.dest)}</code></p>"
                + pre(s.share_md, css_class="mcpeval-share-md"))

    def _exports_html(self) -> str:
        rows = []
        for e in reversed(self.state.exports):
            counts = e.get("counts") or {}
            outcome = str(e.get("outcome")) + (f" ({e['reason']})" if e.get("reason") else "")
            paths = ", ".join(str(p) for p in e.get("paths") or [])
            rows.append(f"<tr><td>{esc(e.get('ts'))}</td><td>{esc(outcome)}</td>"
                        f"<td>{esc(counts.get('files', ''))}</td><td>{esc(counts.get('records', ''))}</td>"
                        f"<td>{esc(e.get('user'))}</td><td><code>{esc(paths)}</code></td></tr>")
        if not rows:
            return "<p class='mcpeval-exports'>No exports recorded in the audit log yet.</p>"
        head = ("<tr><th>when</th><th>outcome</th><th>files</th><th>records</th><th>user</th>"
                "<th>envelope</th></tr>")
        return (f"<b>Last exports (audit log)</b><table class='mcpeval-exports'>{head}{''.join(rows)}"
                "</table>")
