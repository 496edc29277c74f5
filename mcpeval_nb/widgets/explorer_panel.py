"""``ExplorerPanel(store)``: filter captured calls and see latency, outcomes and error templates.

Above ``engine_threshold`` bytes of calls journals (default ``ENGINE_THRESHOLD``, 1 GB) the panel
switches to the DuckDB engine by itself (``mcpeval_nb.duckdb_engine`` over the store's incremental
Parquet export, ``<root>/calls.parquet``) and says so in its status line; the charts then draw a uniform
sample of the selected calls.  Without the ``scale`` extra it stays in memory and says that too.

Filters (server, tool, method, outcome, a UTC day range) recompute the view on a worker thread; the
Refresh button calls the store's incremental ``refresh()`` (only appended bytes are read) and then
recomputes.  ``wait(timeout)`` blocks until the panel has settled.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Sequence
from typing import Any, Protocol

import ipywidgets as w
import pyarrow as pa

from mcpeval_nb import MissingExtra, duckdb_engine, format_ms
from mcpeval_nb.charts import plot_latency_distribution, plot_outcome_mix

from ._base import Panel, error_html
from ._figure import css_width, figure_png
from ._html import esc, sparkline_svg, table
from .explorer_state import ANY, ExplorerFilters, ExplorerState

__all__ = ["ENGINE_THRESHOLD", "CallsStore", "ExplorerPanel"]

#: Bytes of calls journals above which the panel computes with DuckDB instead of the loaded tables.
ENGINE_THRESHOLD = 1_000_000_000


class CallsStore(Protocol):
    """What the explorer needs from a store (``mcpeval_nb.open_store`` returns one)."""

    @property
    def calls(self) -> pa.Table:
        """The calls table."""

    def refresh(self) -> int:
        """Read appended records; returns rows added."""


class ExplorerPanel(Panel):
    """Latency, outcomes and error templates of a capture root, with filters and a refresh button.

    Args:
        store: an opened store (``mcpeval_nb.open_store(root)``).
        engine_threshold: bytes of calls journals above which DuckDB computes the views (None: never).

    Attributes:
        state: the ``ExplorerState`` the view renders.
    """

    def __init__(self, store: CallsStore, *, engine_threshold: int | None = ENGINE_THRESHOLD) -> None:
        self.store = store
        self.engine_threshold = engine_threshold
        self._engine: Any = None
        self.state = ExplorerState()
        self._pending: bool | None = None  # None: nothing queued; else "refresh first?"
        self._quiet = False
        self._settled = threading.Event()
        super().__init__(self._build(), job_name="mcpeval-nb-explorer")
        self._schedule(refresh=False)
        self._settle_first_view()

    def _build(self) -> list[Any]:
        self.server = w.Dropdown(options=[ANY], value=ANY, description="Server")
        self.tool = w.Dropdown(options=[ANY], value=ANY, description="Tool")
        self.method = w.Dropdown(options=[ANY], value=ANY, description="Method")
        self.outcome = w.Dropdown(options=[ANY], value=ANY, description="Outcome")
        self.day_from = w.Dropdown(options=[ANY], value=ANY, description="From day")
        self.day_to = w.Dropdown(options=[ANY], value=ANY, description="To day")
        self.refresh_button = w.Button(description="Refresh", icon="refresh")
        self.status = w.HTML()
        self.latency_chart = w.Image(format="png", width=css_width(6), layout=w.Layout(max_width="100%"))
        self.outcome_chart = w.Image(format="png", width=css_width(6), layout=w.Layout(max_width="100%"))
        self.percentiles = w.HTML()
        self.templates = w.HTML()
        for box in (self.server, self.tool, self.method, self.outcome, self.day_from, self.day_to):
            box.observe(self._on_filter, names="value")
        self.refresh_button.on_click(lambda _b: self.refresh())
        return [
            w.HTML("<h3>Latency and errors</h3>"),
            w.HBox([self.server, self.tool, self.method]), w.HBox([self.outcome, self.day_from, self.day_to]),
            w.HBox([self.refresh_button, self.status]),
            w.HBox([self.latency_chart, self.outcome_chart]), self.percentiles,
            w.HTML("<b>Error templates</b> (salted template ids; never the error text)"), self.templates]

    # -- events and work ---------------------------------------------------------------------------
    def _filters(self) -> ExplorerFilters:
        def pick(box: w.Dropdown) -> str | None:
            return None if box.value == ANY else str(box.value)

        def day(box: w.Dropdown) -> dt.date | None:
            return None if box.value == ANY else dt.date.fromisoformat(str(box.value))

        return ExplorerFilters(server=pick(self.server), tool=pick(self.tool), method=pick(self.method),
                               outcome=pick(self.outcome), day_from=day(self.day_from),
                               day_to=day(self.day_to))

    def _on_filter(self, _change: Any) -> None:
        if not self._quiet:
            self._schedule(refresh=False)

    def refresh(self) -> None:
        """Read what was appended to the journals, then recompute (the Refresh button)."""
        self._schedule(refresh=True)

    def _schedule(self, *, refresh: bool) -> None:
        with self._lock:
            self._settled.clear()
            if self.busy:
                self._pending = bool(self._pending) or refresh
                return
            filters = self._filters()
            self.state.loading = True
            self.state.status = "refreshing..." if refresh else "computing..."
            self.status.value = esc(self.state.status)

            def work(_cancel: threading.Event) -> int:
                size = self._journal_bytes()
                if self.engine_threshold is not None and size > self.engine_threshold:
                    note = self._with_engine(filters, refresh=refresh, size=size)
                    if note is None:
                        return 0
                else:
                    note = ""
                added = self.store.refresh() if refresh else 0
                calls = self.store.calls
                with self._lock:
                    self.state.filters = filters
                    self.state.compute(calls)
                    self.state.status += note
                return added

            self._launch(work, on_done=self._done, on_error=self._failed)

    def _journal_bytes(self) -> int:
        measure = getattr(self.store, "journal_bytes", None)  # a Store has it: the store's one listing
        return 0 if measure is None else int(measure("calls"))

    def _with_engine(self, filters: ExplorerFilters, *, refresh: bool, size: int) -> str | None:
        """Compute with DuckDB (None: done); without the extra, the note the in-memory path adds."""
        try:
            if self._engine is None or refresh:
                if self._engine is not None:
                    self._engine.close()
                self._engine = duckdb_engine(self.store)  # type: ignore[arg-type]  # a Store (has .root)
        except MissingExtra:
            return (f" (store of {size / 1e6:,.0f} MB is above the DuckDB threshold; install "
                    "mcpeval-nb[scale] to analyse it there)")
        with self._lock:
            self.state.filters = filters
            self.state.compute_engine(self._engine)
            assert self.engine_threshold is not None
            self.state.status += (f": the store's {size / 1e6:,.0f} MB of journals are above the "
                                  f"{self.engine_threshold / 1e6:,.0f} MB in-memory threshold")
        return None

    def _done(self, added: int) -> None:
        with self._lock:
            self.state.loading = False
            if added:
                self.state.status += f" ({added} new row(s) read)"
            self._render()
            self._next()

    def _failed(self, exc: BaseException) -> None:
        with self._lock:
            self.state.loading = False
            self.state.status = self.error_text(exc)
            self.status.value = error_html(self.state.status)
            self._next()

    def _next(self) -> None:
        pending, self._pending, self._job = self._pending, None, None
        if pending is None:
            self._settled.set()
        else:
            self._schedule(refresh=pending)

    def wait(self, timeout: float | None = 60.0) -> bool:
        """Block until every queued load, refresh and recomputation has finished.

        Args:
            timeout: the longest wait in seconds.

        Returns:
            True when the panel settled within the timeout.
        """
        return self._settled.wait(timeout)

    # -- rendering ---------------------------------------------------------------------------------
    @staticmethod
    def latency_png(view: pa.Table) -> bytes:
        """The latency chart: ``charts.plot_latency_distribution`` of the selection, as PNG bytes."""
        groups = len(set(view.column("tool").to_pylist()))
        return figure_png(lambda ax: plot_latency_distribution(view, ax=ax), width=6,
                          height=0.45 * min(groups, 20) + 1.4)

    @staticmethod
    def outcome_png(view: pa.Table) -> bytes:
        """The outcome chart: ``charts.plot_outcome_mix`` of the selection, as PNG bytes."""
        groups = len(set(view.column("tool").to_pylist()))
        return figure_png(lambda ax: plot_outcome_mix(view, ax=ax), width=6, height=0.45 * groups + 1.4)

    def _set_options(self, box: w.Dropdown, values: list[str]) -> None:
        options = [ANY, *values]
        if list(box.options) != options:
            keep = box.value if box.value in options else ANY
            box.options = options
            box.value = keep

    def _render(self) -> None:
        s = self.state
        self._quiet = True
        try:
            for name in ("server", "tool", "method", "outcome"):
                self._set_options(getattr(self, name), s.choices.get(name, []))
            days = [d.isoformat() for d in s.days]
            self._set_options(self.day_from, days)
            self._set_options(self.day_to, days)
        finally:
            self._quiet = False
        self.status.value = esc(s.status)
        self.latency_chart.value = self.latency_png(s.view)
        self.outcome_chart.value = self.outcome_png(s.view)
        self.percentiles.value = table(
            ("tool or method", "calls", "p50 ms", "p95 ms", "p99 ms", "max ms"),
            [(t, n, *(format_ms(v) for v in (p50, p95, p99, mx)))
             for t, n, p50, p95, p99, mx in s.percentiles],
            css_class="mcpeval-latency")
        self.templates.value = table(
            ("template id", "count", "sessions", "tools", "codes", "first seen", "last seen", "per day"),
            [(t.template_id, t.count, t.sessions, ", ".join(t.tools), _codes(t.codes), t.first_seen,
              t.last_seen, sparkline_svg(t.daily)) for t in s.templates],
            raw_columns=(7,), css_class="mcpeval-templates") if s.templates else "<p>no errors here</p>"


def _codes(codes: Sequence[str]) -> str:
    """Error codes as the table shows them: ``tool-error``, ``-32602``."""
    return ", ".join(codes)
