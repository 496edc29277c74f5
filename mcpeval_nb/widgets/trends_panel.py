"""``TrendsPanel(store)``: readiness history per server, with markers where scores stop being comparable.

Pick servers and a window (the newest N points per server).  Each point shows its score, gate result and
the SPEC 7.3 delta against the previous shown point: a number, or ``standard changed``, ``measurement
profile changed``/``unavailable`` or ``manifest changed``; the chart marks those points with diamonds.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

import ipywidgets as w
import pyarrow as pa
import pyarrow.compute as pc

from mcpeval_nb import readiness_history
from mcpeval_nb.charts import plot_readiness_history

from ._base import Panel, error_html
from ._figure import css_width, figure_png
from ._html import badge, esc, table

__all__ = ["TrendRow", "TrendsPanel", "TrendsState"]


class TrendsStore(Protocol):
    """What the trends panel needs from a store (``mcpeval_nb.open_store`` returns one)."""

    @property
    def trends(self) -> pa.Table:
        """The trends table."""

    def refresh(self) -> int:
        """Read appended records; returns rows added."""


@dataclass(frozen=True)
class TrendRow:
    """One readiness point as shown: time, server, score, gate, standard, delta, comparability flag."""

    ts: str
    server: str
    score: int
    gate: str
    standard: str
    delta: str
    changed: bool


@dataclass
class TrendsState:
    """What the trends panel shows.

    Attributes:
        servers: every server with history. selected: the servers shown (empty: all).
        last: newest points per server. rows: the points shown. history: the same points as the
            ``readiness_history`` table (what the chart draws). status: one short line.
    """

    servers: list[str] = field(default_factory=list)
    selected: tuple[str, ...] = ()
    last: int = 10
    rows: list[TrendRow] = field(default_factory=list)
    history: pa.Table | None = None
    status: str = "loading..."

    def compute(self, trends: pa.Table) -> None:
        """Recompute the rows from the trends table under the current selection and window."""
        self.servers = sorted({s for s in trends.column("server").to_pylist() if isinstance(s, str)})
        keep = set(self.selected) or set(self.servers)
        history = readiness_history(trends, last=self.last)
        self.history = history.filter(pc.is_in(history.column("server"), pa.array(sorted(keep), pa.string())))
        self.rows = []
        for r in self.history.to_pylist():
            ts = r["ts"]
            changed = bool(r["standard_changed"] or r["profile_changed"] or r["manifest_changed"])
            self.rows.append(TrendRow(
                ts="unknown" if ts is None else ts.strftime("%Y-%m-%d %H:%M"), server=r["server"],
                score=int(r["score"]), gate=f"{r['cases_passed']}/{r['cases_total']}",
                standard=r["standard"] or "", delta=r["delta"] or "first shown point", changed=changed))
        self.status = f"{len(self.rows)} point(s) from {len(keep & set(self.servers))} server(s)"


class TrendsPanel(Panel):
    """Readiness history per server with change markers.

    Args:
        store: an opened store (``mcpeval_nb.open_store(root)``).
        last: the initial window (newest points per server).

    Attributes:
        state: the ``TrendsState`` the view renders.
    """

    def __init__(self, store: TrendsStore, *, last: int = 10) -> None:
        self.store = store
        self.state = TrendsState(last=last)
        self._quiet = False
        self.servers = w.SelectMultiple(options=[], description="Servers", rows=4)
        self.last = w.IntSlider(value=last, min=1, max=100, description="Last N")
        self.refresh_button = w.Button(description="Refresh", icon="refresh")
        self.status = w.HTML()
        self.chart = w.Image(format="png", width=css_width(7), layout=w.Layout(max_width="100%"))
        self.points = w.HTML()
        super().__init__([w.HTML("<h3>Readiness history</h3>"),
                          w.HBox([self.servers, self.last, self.refresh_button]), self.status, self.chart,
                          self.points], job_name="mcpeval-nb-trends")
        self.servers.observe(self._on_change, names="value")
        self.last.observe(self._on_change, names="value")
        self.refresh_button.on_click(lambda _b: self.refresh())
        self._start(refresh=False)
        self._settle_first_view()

    def _on_change(self, _change: Any) -> None:
        if not self._quiet:
            self._start(refresh=False)

    def refresh(self) -> None:
        """Read appended trend points and redraw (the Refresh button)."""
        self._start(refresh=True)

    def _start(self, *, refresh: bool) -> None:
        previous = self._job
        if previous is not None:
            previous.wait(120)
        selected, last = tuple(self.servers.value), int(self.last.value)

        def work(_cancel: threading.Event) -> None:
            if refresh:
                self.store.refresh()
            trends = self.store.trends
            with self._lock:
                self.state.selected, self.state.last = selected, last
                self.state.compute(trends)

        self._launch(work, on_done=lambda _r: self._render(), on_error=self._failed)

    def _failed(self, exc: BaseException) -> None:
        self.status.value = error_html(self.error_text(exc))

    @staticmethod
    def chart_png(history: pa.Table) -> bytes:
        """The chart: ``charts.plot_readiness_history`` of the points shown, as PNG bytes."""
        return figure_png(lambda ax: plot_readiness_history(history, ax=ax), height=3.2)

    def _render(self) -> None:
        with self._lock:
            s = self.state
            self._quiet = True
            try:
                if list(self.servers.options) != s.servers:
                    keep = tuple(v for v in self.servers.value if v in s.servers)
                    self.servers.options = s.servers
                    self.servers.value = keep
            finally:
                self._quiet = False
            self.status.value = esc(s.status)
            if s.history is not None:
                self.chart.value = self.chart_png(s.history)
            self.points.value = table(
                ("when (UTC)", "server", "score", "gate", "standard", "delta"),
                [(r.ts, r.server, r.score, r.gate, r.standard,
                  badge(r.delta, "#9a6700") if r.changed else esc(r.delta)) for r in s.rows],
                raw_columns=(5,), css_class="mcpeval-trends")
