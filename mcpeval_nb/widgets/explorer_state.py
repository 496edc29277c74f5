"""The explorer panel's state: filter choices over the calls table and what the filtered view shows.

``ExplorerState.compute(calls)`` filters the Arrow calls table with pyarrow compute and summarises it
with the public analysis functions: latency percentiles per tool, outcome counts per tool, and the
error-template table with a daily trend per template.  Only labels, template ids and numbers are kept.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from mcpeval_nb import error_templates, latency_summary, outcome_rates, template_daily

__all__ = ["ANY", "ExplorerFilters", "ExplorerState", "TemplateRow", "filter_calls"]

#: The "no filter" choice of every dropdown.
ANY = "(any)"
_TEXT_FILTERS = ("server", "tool", "method", "outcome")


@dataclass(frozen=True)
class ExplorerFilters:
    """One filter selection; ``None`` means any value.  Days are inclusive UTC dates."""

    server: str | None = None
    tool: str | None = None
    method: str | None = None
    outcome: str | None = None
    day_from: dt.date | None = None
    day_to: dt.date | None = None


@dataclass(frozen=True)
class TemplateRow:
    """One error template as the panel lists it (no error prose: id, counts, tools, codes, times)."""

    template_id: str
    count: int
    sessions: int
    tools: tuple[str, ...]
    codes: tuple[str, ...]
    first_seen: str
    last_seen: str
    daily: tuple[int, ...]


def _text(column: pa.ChunkedArray) -> pa.ChunkedArray:
    return column.cast(pa.string()) if pa.types.is_dictionary(column.type) else column


def _label(calls: pa.Table) -> Any:
    """The tool name, or the method for calls without a tool (``tools/list``, notifications)."""
    return pc.coalesce(_text(calls.column("tool")), _text(calls.column("method")))


def filter_calls(calls: pa.Table, filters: ExplorerFilters) -> pa.Table:
    """The calls matching ``filters`` (text equality per column, inclusive UTC day range on ``ts``)."""
    mask: Any = None
    for name in _TEXT_FILTERS:
        value = getattr(filters, name)
        if value is None:
            continue
        cond = pc.fill_null(pc.equal(_text(calls.column(name)), value), False)
        mask = cond if mask is None else pc.and_(mask, cond)
    ts = calls.column("ts")
    if filters.day_from is not None:
        start = pa.scalar(dt.datetime.combine(filters.day_from, dt.time(), dt.UTC), ts.type)
        cond = pc.fill_null(pc.greater_equal(ts, start), False)
        mask = cond if mask is None else pc.and_(mask, cond)
    if filters.day_to is not None:
        after = filters.day_to + dt.timedelta(days=1)
        end = pa.scalar(dt.datetime.combine(after, dt.time(), dt.UTC), ts.type)
        cond = pc.fill_null(pc.less(ts, end), False)
        mask = cond if mask is None else pc.and_(mask, cond)
    return calls if mask is None else calls.filter(mask)


def _distinct(calls: pa.Table, name: str) -> list[str]:
    values = pc.unique(_text(calls.column(name))).to_pylist()
    return sorted(v for v in values if isinstance(v, str))


def _days(calls: pa.Table) -> list[dt.date]:
    if calls.num_rows == 0:
        return []
    days = pc.unique(pc.cast(pc.drop_null(calls.column("ts")), pa.date32())).to_pylist()
    return sorted(d for d in days if d is not None)


@dataclass
class ExplorerState:
    """Everything the explorer shows.

    Attributes:
        filters: the current selection. choices: the values each dropdown offers. days: UTC days present.
        total / shown: rows in the store / after filtering.
        latency: ``{tool: [latency_ms, ...]}`` for the chart. percentiles: latency summary rows
            ``(tool, count, p50, p95, p99, max)``.
        outcomes: ``{tool: {outcome: count}}``. templates: the error-template rows.
        loading: a load or refresh is running. status: one short line (counts only).
    """

    filters: ExplorerFilters = field(default_factory=ExplorerFilters)
    choices: dict[str, list[str]] = field(default_factory=dict)
    days: list[dt.date] = field(default_factory=list)
    total: int = 0
    shown: int = 0
    latency: dict[str, list[float]] = field(default_factory=dict)
    percentiles: list[tuple[str, int, float, float, float, int]] = field(default_factory=list)
    outcomes: dict[str, dict[str, int]] = field(default_factory=dict)
    templates: list[TemplateRow] = field(default_factory=list)
    loading: bool = False
    status: str = "loading..."

    def compute(self, calls: pa.Table) -> None:
        """Recompute every view of ``calls`` under the current filters."""
        self.total = calls.num_rows
        self.choices = {name: _distinct(calls, name) for name in _TEXT_FILTERS}
        self.days = _days(calls)
        view = filter_calls(calls, self.filters)
        self.shown = view.num_rows
        self._latency(view)
        self._outcomes(view)
        self._templates(view)
        self.status = f"{self.shown} of {self.total} calls shown"

    def _latency(self, view: pa.Table) -> None:
        labelled = pa.table({"tool": _label(view), "latency_ms": view.column("latency_ms")})
        self.latency = {}
        for tool, lat in zip(labelled.column("tool").to_pylist(), labelled.column("latency_ms").to_pylist(),
                             strict=True):
            if lat is not None:
                self.latency.setdefault(tool, []).append(float(lat))
        summary = latency_summary(labelled.select(["tool", "latency_ms"]), by=("tool",))
        self.percentiles = [(r["tool"], r["count"], r["p50"], r["p95"], r["p99"], r["max"])
                            for r in summary.to_pylist()]

    def _outcomes(self, view: pa.Table) -> None:
        if view.num_rows == 0:
            self.outcomes = {}
            return
        frame = pa.table({"tool": _label(view), "outcome": _text(view.column("outcome"))})
        rates = outcome_rates(frame, by=("tool",))
        self.outcomes = {r["tool"]: {o: r[o] for o in ("ok", "error", "unknown", "unparsed")}
                         for r in rates.to_pylist()}

    def _templates(self, view: pa.Table) -> None:
        table = error_templates(view)
        daily: dict[str, dict[dt.date, int]] = {}
        for r in template_daily(view).to_pylist():
            daily.setdefault(r["template_id"], {})[r["day"]] = r["count"]
        span = self.days or []
        self.templates = [
            TemplateRow(template_id=r["template_id"], count=r["count"], sessions=r["sessions"],
                        tools=tuple(r["tools"]), codes=tuple(r["codes"]), first_seen=_stamp(r["first_seen"]),
                        last_seen=_stamp(r["last_seen"]),
                        daily=tuple(daily.get(r["template_id"], {}).get(d, 0) for d in span))
            for r in table.to_pylist()]


def _stamp(value: Any) -> str:
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M")
