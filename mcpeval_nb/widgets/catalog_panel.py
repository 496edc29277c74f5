"""``CatalogPanel(store)``: each server's tool catalog, what changed, what is flagged, what is never used.

Pick a server (or all) and a picture: the catalog timeline (``plot_catalog_timeline``), tools listed
against called (``plot_tool_usage``) or what follows what (``plot_tool_transitions``).  Below: the current
catalog (latest complete listing: tools in the order listed, their flags, skeleton sizes and tokens), the
drift against the pin where there is one, the dead tools with their token cost, and the tools called
together.  Labels, digests and counts only (docs/catalog.md).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as w
import pyarrow as pa
import pyarrow.compute as pc

from mcpeval_nb import (
    DEAD_BELOW,
    RootLike,
    Store,
    catalog_drift,
    catalog_history,
    catalog_status,
    open_store,
    tool_clusters,
    tool_transitions,
    tool_usage,
)
from mcpeval_nb.charts import plot_catalog_timeline, plot_tool_transitions, plot_tool_usage, usage_height

from ._base import Panel, error_html
from ._figure import css_width, figure_png
from ._html import badge, esc, table

__all__ = ["VIEWS", "CatalogPanel", "CatalogState"]

#: The pictures the panel draws, by toggle label.
VIEWS = ("timeline", "usage", "transitions")
_FLAG_COLOUR = "#cf222e"
_WIDTH = 8.0  # inches: the timeline's legend sits beside the plot


def _only(table_: pa.Table, server: str | None) -> pa.Table:
    if server is None or table_.num_rows == 0:
        return table_
    return table_.filter(pc.equal(table_["server"], server))


@dataclass
class CatalogState:
    """What the catalog panel shows (computed on the worker thread, rendered on the main one).

    Attributes:
        servers: every server with a listing or a pin. server: the one shown (None: all).
        view: the picture.
        tools: the current catalog, ``(server, tool, flags, properties, tokens)`` in the order listed.
        changes: drift rows (against the pin where there is one). dead / clusters: ``tool_usage`` rows
            with verdict ``dead`` and ``tool_clusters`` rows. pins: server -> ``pinned at <ts>`` or
            ``unpinned``.
        history, drift, usage, transitions: the tables the pictures draw. status: one short line.
    """

    servers: list[str] = field(default_factory=list)
    server: str | None = None
    view: str = "timeline"
    tools: list[tuple[str, str, tuple[str, ...], int, int]] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)
    dead: list[dict[str, Any]] = field(default_factory=list)
    clusters: list[dict[str, Any]] = field(default_factory=list)
    pins: dict[str, str] = field(default_factory=dict)
    history: pa.Table | None = None
    drift: pa.Table | None = None
    usage: pa.Table | None = None
    transitions: pa.Table | None = None
    status: str = "loading..."

    def compute(self, store: Any) -> None:
        """Read the store's catalogs and calls and recompute everything shown."""
        status = catalog_status(store)
        self.pins = {s.server: f"pinned at {s.pinned_at}" if s.pinned else "unpinned"
                     for s in status.servers}
        history = catalog_history(store)
        self.servers = sorted(set(history["server"].to_pylist()) | set(self.pins))
        server = self.server if self.server in self.servers else None
        self.history = _only(history, server)
        self.drift = _only(catalog_drift(store, pins=True), server)
        self.usage = _only(tool_usage(store), server)
        self.transitions = _only(tool_transitions(store), server)
        self.changes = [r for r in self.drift.to_pylist() if r["change"] != "mid-session"]
        self.dead = [r for r in self.usage.to_pylist() if r["verdict"] == "dead"]
        self.clusters = _only(tool_clusters(store), server).to_pylist()
        self.tools = self._current(self.history)
        self.status = (f"{len(self.tools)} tool(s) listed now, {len(self.changes)} change(s), "
                       f"{sum(bool(t[2]) for t in self.tools)} flagged, {len(self.dead)} dead")

    @staticmethod
    def _current(history: pa.Table) -> list[tuple[str, str, tuple[str, ...], int, int]]:
        latest: dict[str, tuple[Any, ...]] = {}
        for r in history.to_pylist():
            if r["complete"]:
                key = (r["ts"], r["session"], r["seq"])
                if r["server"] not in latest or latest[r["server"]] < key:
                    latest[r["server"]] = key
        return [(r["server"], r["tool"], tuple(r["flags"] or ()), r["properties"] or 0, r["tokens"] or 0)
                for r in history.to_pylist()
                if r["tool"] is not None and latest.get(r["server"]) == (r["ts"], r["session"], r["seq"])]


class CatalogPanel(Panel):
    """Tool catalogs: drift, signal flags, dead tools and tool chains, without the catalog's text.

    Args:
        store: an opened store (``mcpeval_nb.open_store(root)``), or a capture root (default:
            ``$MCPEVAL_HOME``), opened once.
        server: the server shown first (default: all).
        view: the first picture (``timeline``, ``usage`` or ``transitions``).

    Attributes:
        state: the ``CatalogState`` the view renders.
    """

    def __init__(self, store: RootLike | Store = None, *, server: str | None = None,
                 view: str = "timeline") -> None:
        self.store = store if isinstance(store, Store) else open_store(store)
        self.state = CatalogState(server=server, view=view if view in VIEWS else "timeline")
        self._quiet = False
        self.server = w.Dropdown(options=[("all servers", "")], value="", description="Server")
        self.view = w.ToggleButtons(options=list(VIEWS), value=self.state.view)
        self.refresh_button = w.Button(description="Refresh", icon="refresh")
        self.status = w.HTML()
        self.chart = w.Image(format="png", width=css_width(_WIDTH), layout=w.Layout(max_width="100%"))
        self.details = w.HTML()
        super().__init__([w.HTML("<h3>Tool catalogs</h3>"),
                          w.HBox([self.server, self.view, self.refresh_button]), self.status, self.chart,
                          self.details], job_name="mcpeval-nb-catalog")
        self.server.observe(self._on_change, names="value")
        self.view.observe(self._on_view, names="value")
        self.refresh_button.on_click(lambda _b: self.refresh())
        self._start(refresh=False, server=self.state.server)
        self._settle_first_view()

    def _on_change(self, _change: Any) -> None:
        if not self._quiet:
            self._start(refresh=False, server=str(self.server.value) or None)

    def _on_view(self, _change: Any) -> None:
        with self._lock:
            self.state.view = str(self.view.value)
        self._render()

    def refresh(self) -> None:
        """Read what the shims appended and recompute (the Refresh button)."""
        self._start(refresh=True, server=self.state.server)

    def _start(self, *, refresh: bool, server: str | None) -> None:
        previous = self._job
        if previous is not None:
            previous.wait(120)

        def work(_cancel: threading.Event) -> None:
            if refresh:
                self.store.refresh()
            with self._lock:
                self.state.server = server
                self.state.compute(self.store)

        self._launch(work, on_done=lambda _r: self._render(), on_error=self._failed)

    def _failed(self, exc: BaseException) -> None:
        self.status.value = error_html(self.error_text(exc))

    def chart_png(self) -> bytes:
        """The picture of the current view: the ``charts`` function a notebook cell would call."""
        s = self.state
        if s.view == "usage" and s.usage is not None:
            usage = s.usage
            height = usage_height(min(usage.num_rows, 30))
            return figure_png(lambda ax: plot_tool_usage(usage, ax=ax), width=_WIDTH, height=height)
        if s.view == "transitions" and s.transitions is not None:
            transitions = s.transitions
            return figure_png(lambda ax: plot_tool_transitions(transitions, ax=ax), width=_WIDTH, height=4.5)
        drift, history = s.drift, s.history
        return figure_png(lambda ax: plot_catalog_timeline(drift, history=history, ax=ax), width=_WIDTH,
                          height=3.2)

    def _render(self) -> None:
        with self._lock:
            s = self.state
            self._quiet = True
            try:
                options = [("all servers", ""), *[(name, name) for name in s.servers]]
                if list(self.server.options) != options:
                    self.server.options = options
                self.server.value = s.server or ""
            finally:
                self._quiet = False
            self.status.value = esc(s.status)
            if s.drift is not None:
                self.chart.value = self.chart_png()
            self.details.value = self._details_html()

    def _details_html(self) -> str:
        s = self.state
        listed = [(t[0], s.pins.get(t[0], ""), t[1], " ".join(badge(f, _FLAG_COLOUR) for f in t[2]),
                   t[3], t[4]) for t in s.tools]
        changes = [(r["server"], r["tool"], r["change"], r["previous_tool"] or "", _when(r["first_seen"]),
                    r["sessions"], r["against"]) for r in s.changes]
        dead = [(r["server"], r["tool"], r["listed_sessions"], r["catalog_tokens"]) for r in s.dead]
        clusters = [(r["server"], r["cluster"], ", ".join(r["tools"]), r["sessions"], f"{r['lift_min']:.2f}")
                    for r in s.clusters]
        return "".join((
            _section("Now listed", ("server", "pin", "tool", "flags", "properties", "tokens"), listed,
                     css="mcpeval-catalog", raw=(3,), none="no complete listing recorded yet"),
            _section("Changes", ("server", "tool", "change", "was", "first seen (UTC)", "sessions",
                                 "against"), changes, css="mcpeval-drift",
                     none="no change since the pin or between listings"),
            _section("Dead tools", ("server", "tool", "listed in sessions", "tokens a session"), dead,
                     css="mcpeval-dead", none=_NO_DEAD),
            _section("Called together", ("server", "cluster", "tools", "sessions", "lift"), clusters,
                     css="mcpeval-clusters", none=_NO_CLUSTERS)))


_NO_DEAD = (f"none: a tool is dead only when so many listing sessions never called it that the Wilson 95% "
            f"upper bound of its call rate is under {DEAD_BELOW:.0%} (35 sessions or more)")
_NO_CLUSTERS = "none: no two tools are called together in enough sessions beyond chance (docs/catalog.md)"


def _section(title: str, headers: tuple[str, ...], rows: list[tuple[Any, ...]], *, css: str, none: str,
             raw: tuple[int, ...] = ()) -> str:
    """A titled table, or the sentence saying why there is nothing to show."""
    body = (table(headers, rows, raw_columns=raw, css_class=css) if rows
            else f'<p class="{css}-none" style="color:#57606a">{esc(none)}</p>')
    return f"<h4>{esc(title)}</h4>{body}"


def _when(value: Any) -> str:
    return "unknown" if value is None else value.strftime("%Y-%m-%d %H:%M")
