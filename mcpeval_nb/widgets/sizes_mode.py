"""The probe panel's ``result sizes`` run mode: a call manifest file, ``probe_result_sizes``, the table.

``SizesMode`` is the part of ``ProbePanel`` that builds, runs and renders this mode; the panel shares its
target, label and background job with it (one job at a time, the same Cancel).
"""

from __future__ import annotations

import threading
from typing import Any

import ipywidgets as w

from mcpeval_nb import CallSize, MCPEvalError, ResultSizes, RootLike, UsageError, probe_result_sizes

from ._base import Panel, error_html
from ._html import esc
from .probe_state import ProbeState
from .sizes_state import SizesState, sizes_table

__all__ = ["SizesMode"]


class SizesMode(Panel):
    """The result-sizes widgets and their run; ``ProbePanel`` provides ``state``, ``sizes`` and ``root``."""

    state: ProbeState
    sizes: SizesState
    root: RootLike

    def _render(self) -> None:  # pragma: no cover - ProbePanel renders
        raise NotImplementedError

    def _build_sizes(self) -> Any:
        self.call_path = w.Text(
            description="Calls", placeholder="path/to/safe.yaml", layout=w.Layout(width="70%")
        )
        self.call_load = w.Button(description="Load calls", icon="folder-open")
        self.call_status = w.HTML()
        self.sizes_mutation = w.Checkbox(
            value=False,
            indent=False,
            disabled=True,
            layout=w.Layout(width="auto"),
            description="Allow mutation: make the sandboxed mutating calls",
        )
        self.sizes_run = w.Button(description="Measure result sizes", button_style="primary", icon="play")
        self.sizes_cancel = w.Button(description="Cancel", icon="stop", disabled=True)
        self.sizes_progress = w.IntProgress(value=0, min=0, max=1, description="Calls")
        self.sizes_status = w.HTML()
        self.sizes_results = w.HTML()
        self.call_load.on_click(lambda _b: self._load_calls())
        self.sizes_mutation.observe(self._on_sizes_mutation, names="value")
        self.sizes_run.on_click(lambda _b: self.run_sizes())
        self.sizes_cancel.on_click(lambda _b: self.cancel())
        return w.VBox(
            [
                w.HBox([self.call_path, self.call_load]),
                self.call_status,
                self.sizes_mutation,
                w.HBox([self.sizes_run, self.sizes_cancel, self.sizes_progress]),
                self.sizes_status,
                self.sizes_results,
            ]
        )

    def _load_calls(self) -> None:
        self.sizes.load(self.call_path.value)
        self._render()

    def _on_sizes_mutation(self, change: Any) -> None:
        kept = self.sizes.set_allow_mutation(change["new"])
        if kept != change["new"]:
            self.sizes_mutation.value = kept
        self._render()

    def run_sizes(self) -> bool:
        """Measure the loaded call manifest's results on a worker thread (the result-sizes Run button).

        Returns:
            True when a run started; False when the inputs were refused (the status line says why).
        """
        z = self.sizes
        if self.busy:
            return False
        try:
            target = self.state.target()
            if z.manifest is None:
                raise UsageError("calls: load a valid call manifest first")
            options = z.options(server=self.state.server, root=self.root, protocol=self.state.protocol)
        except MCPEvalError as exc:
            z.status = str(exc)
            self._render()
            return False
        manifest = z.manifest
        z.start()

        def work(cancel: threading.Event) -> ResultSizes:
            return probe_result_sizes(
                target,
                call_manifest=manifest,
                options=options,
                progress=self._on_sizes_progress,
                cancel=cancel,
            )

        self._launch(work, on_done=self._on_sizes_done, on_error=self._on_sizes_error)
        self._render()
        return True

    def _on_sizes_progress(self, index: int, total: int, row: CallSize) -> None:
        with self._lock:
            self.sizes.apply(index, total, row)
            self._render()

    def _on_sizes_done(self, result: ResultSizes) -> None:
        with self._lock:
            self.sizes.finish(result)
            self._render()

    def _on_sizes_error(self, exc: BaseException) -> None:
        with self._lock:
            self.sizes.fail(self.error_text(exc))
            self._render()

    def _render_sizes(self) -> None:
        z = self.sizes
        self.call_status.value = (
            error_html(f"\u2717 {z.error}")
            if z.error is not None
            else ""
            if z.manifest is None
            else f"<span style='color:#1a7f37'>&#10003; {esc(z.status)}</span>"
        )
        self.sizes_mutation.disabled = not z.mutation_available
        if self.sizes_mutation.value != z.allow_mutation:
            self.sizes_mutation.value = z.allow_mutation
        running = self.busy and z.running
        self.sizes_run.disabled = running or z.manifest is None
        self.sizes_cancel.disabled = not running
        self.sizes_progress.max, self.sizes_progress.value = max(1, z.total), z.done
        self.sizes_status.value = f"<b>{esc(z.status)}</b>"
        self.sizes_results.value = sizes_table(z.rows)
