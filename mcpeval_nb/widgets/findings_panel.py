"""``FindingsPanel(root)``: ranked findings, one finding in detail, re-index / re-promote / generate.

The table shows severity, class, score, the failure rate with its Wilson interval, sessions, last seen
and the lifecycle state.  The detail view shows why the finding scores what it does (the factors chart
and the explanation), its failure windows as a timeline, its verify history and the ``generate``
preview with its placeholders.  Re-index runs on a worker thread with a byte progress bar and Cancel
(a cancelled index changes nothing); Generate writes only after the read-only attestation is ticked.
"""

from __future__ import annotations

import threading
from typing import Any

import ipywidgets as w

from mcpeval_nb import Cancelled, RootLike, build_index, promote, resolve_root
from mcpeval_nb.charts import plot_failure_windows, plot_finding_factors

from ._base import Panel, error_html
from ._figure import css_width, figure_png
from ._html import badge, esc, pre, table
from .findings_state import FindingsState

__all__ = ["FindingsPanel"]

_SEVERITY = {"high": "#cf222e", "medium": "#9a6700", "low": "#6e7781"}


class FindingsPanel(Panel):
    """The findings panel.

    Args:
        root: the capture root (default ``$MCPEVAL_HOME`` or ``~/.mcp-eval``).

    Attributes:
        state: the ``FindingsState`` the view renders.
    """

    def __init__(self, root: RootLike = None) -> None:
        base = resolve_root(root)
        self.state = FindingsState(root=base, output=str(base.parent / "finding.manifest.json"))
        super().__init__(self._build(), job_name="mcpeval-nb-findings")
        self._quiet = False
        self._start("load", lambda _c: self.state.load())
        self._settle_first_view()

    def _build(self) -> list[Any]:
        self.index_button = w.Button(description="Re-index", icon="database")
        self.promote_button = w.Button(description="Re-promote", icon="sort-amount-desc")
        self.cancel_button = w.Button(description="Cancel", icon="stop", disabled=True)
        self.progress = w.FloatProgress(value=0.0, min=0.0, max=1.0, description="Index")
        self.status = w.HTML()
        self.rows = w.HTML()
        self.factors = w.Image(format="png", width=css_width(7), layout=w.Layout(max_width="100%"))
        self.selector = w.Dropdown(options=[], description="Finding", layout=w.Layout(width="95%"))
        self.explanation = w.HTML()
        self.windows = w.Image(format="png", width=css_width(7), layout=w.Layout(max_width="100%"))
        self.history = w.HTML()
        self.preview = w.HTML()
        self.output = w.Text(value=self.state.output, description="Manifest", layout=w.Layout(width="95%"))
        self.confirm = w.Checkbox(
            value=False,
            indent=False,
            layout=w.Layout(width="95%"),
            description="I attest this tool is read-only: write the manifest",
        )
        self.generate_button = w.Button(description="Generate manifest", icon="file", disabled=True)
        self.result = w.HTML()
        self.index_button.on_click(lambda _b: self.reindex())
        self.promote_button.on_click(lambda _b: self.repromote())
        self.cancel_button.on_click(lambda _b: self.cancel())
        self.generate_button.on_click(lambda _b: self.generate())
        self.selector.observe(self._on_select, names="value")
        self.confirm.observe(self._on_confirm, names="value")
        self.output.observe(self._on_output, names="value")
        return [
            w.HTML("<h3>Findings</h3>"),
            w.HBox([self.index_button, self.promote_button, self.cancel_button, self.progress]),
            self.status,
            self.rows,
            self.factors,
            self.selector,
            self.explanation,
            self.windows,
            self.history,
            self.preview,
            self.output,
            self.confirm,
            w.HBox([self.generate_button]),
            self.result,
        ]

    # -- events ------------------------------------------------------------------------------------
    def _on_select(self, change: Any) -> None:
        if self._quiet or change["new"] in (None, self.state.selected):
            return
        selected = change["new"]

        def work(_cancel: threading.Event) -> None:
            self.state.selected = selected
            self.state.detail = self.state.detail_of(selected)

        self._start("detail", work)

    def _on_confirm(self, change: Any) -> None:
        self.state.confirmed = bool(change["new"])
        self._render()

    def _on_output(self, change: Any) -> None:
        self.state.output = str(change["new"])
        self.state.confirmed = False
        self._render()

    # -- work --------------------------------------------------------------------------------------
    def _start(self, name: str, work: Any) -> bool:
        if self.busy:
            return False
        self.state.busy, self.state.done, self.state.total = name, 0, 0
        self._launch(work, on_done=lambda _r: self._finish(), on_error=self._failed)
        self._render()
        return True

    def reindex(self) -> bool:
        """Refresh ``index.db`` on a worker thread (the Re-index button), then reload.

        Returns:
            True when the job started (False while another runs).
        """

        def work(cancel: threading.Event) -> None:
            def report(done: int, total: int) -> None:
                with self._lock:
                    self.state.done, self.state.total = done, total
                    self.progress.max = float(max(total, 1))
                    self.progress.value = float(min(done, max(total, 1)))

            result = build_index(self.state.root, progress=report, cancel=cancel)
            self.state.load()
            self.state.status = result.line() + "; " + self.state.status

        return self._start("index", work)

    def repromote(self) -> bool:
        """Re-run ``promote`` on a worker thread (the Re-promote button), then reload.

        Returns:
            True when the job started.
        """

        def work(_cancel: threading.Event) -> None:
            line = promote(self.state.root).line()
            self.state.load()
            self.state.status = line + "; " + self.state.status

        return self._start("promote", work)

    def generate(self) -> bool:
        """Write the selected finding's manifest (the Generate button; only after the attestation).

        Returns:
            True when the job started.
        """
        if not self.state.confirmed:
            return False

        def work(_cancel: threading.Event) -> None:
            message = self.state.generate()
            with self._lock:
                self.state.status = message
                self.state.confirmed = False

        return self._start("generate", work)

    def _finish(self) -> None:
        with self._lock:
            self.state.busy = ""
            self._render()
            if self.confirm.value and not self.state.confirmed:
                self.confirm.value = False

    def _failed(self, exc: BaseException) -> None:
        with self._lock:
            self.state.busy = ""
            self.state.status = (
                "cancelled: index.db is unchanged" if isinstance(exc, Cancelled) else self.error_text(exc)
            )
            self._render(error=not isinstance(exc, Cancelled))

    # -- rendering ---------------------------------------------------------------------------------
    def _render(self, *, error: bool = False) -> None:
        with self._lock:
            s = self.state
            busy = bool(s.busy)
            self.index_button.disabled = self.promote_button.disabled = busy
            self.cancel_button.disabled = s.busy != "index"
            self.status.value = error_html(s.status) if error else f"<b>{esc(s.status)}</b>"
            self.rows.value = table(
                (
                    "severity",
                    "class",
                    "score",
                    "rate (95% CI)",
                    "sessions",
                    "last seen",
                    "state",
                    "server/tool",
                ),
                [
                    (
                        badge(r.severity, _SEVERITY.get(r.severity, "#6e7781")),
                        r.klass,
                        f"{r.score:.3f}",
                        f"{r.rate:.1%} ({r.rate_low:.1%}-{r.rate_high:.1%})",
                        r.sessions,
                        r.last_seen,
                        r.state,
                        r.where,
                    )
                    for r in s.rows
                ],
                raw_columns=(0,),
                css_class="mcpeval-findings",
            )
            if not busy and s.table is not None:
                self.factors.value = figure_png(lambda ax: plot_finding_factors(s.table, ax=ax), height=3.2)
            self._quiet = True
            try:
                options = [(r.label, r.finding_id) for r in s.rows]
                if list(self.selector.options) != options:
                    self.selector.options = options
                if s.selected is not None and self.selector.value != s.selected:
                    self.selector.value = s.selected
            finally:
                self._quiet = False
            self._render_detail()
            self.generate_button.disabled = busy or not (
                s.confirmed and s.selected and s.detail and s.detail.preview
            )
            self.result.value = f"<p>Written: <code>{esc(s.generated)}</code></p>" if s.generated else ""

    def _render_detail(self) -> None:
        d = self.state.detail
        if d is None or self.state.busy:
            if d is None:
                self.explanation.value = self.history.value = self.preview.value = ""
            return
        self.explanation.value = pre("\n".join(d.explanation), css_class="mcpeval-explain")
        if d.windows is not None:
            windows = d.windows
            self.windows.value = figure_png(lambda ax: plot_failure_windows(windows, ax=ax), height=3.0)
        self.history.value = "<b>Verify history</b>" + (
            table(("when (UTC)", "probe", "result"), d.history, css_class="mcpeval-history")
            if d.history
            else "<p>No verify run yet.</p>"
        )
        body = d.preview_error or d.preview + "\n".join(d.fills)
        self.preview.value = "<b>generate preview</b>" + pre(body, css_class="mcpeval-preview")
