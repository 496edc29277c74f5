"""The explorer panel's state: filter choices over the calls table and what the filtered view shows.

``ExplorerState.compute(calls)`` selects calls with the public ``filter_calls`` and summarises them with
the public analysis functions: latency percentiles per tool, outcome counts per tool, and the
error-template table with a daily trend per template.  ``view`` keeps the selection (tool-or-method
label, latency, outcome: nothing else) for the ``charts`` functions the panel draws with.  Only labels,
template ids and numbers are kept.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from mcpeval_nb import (
    FILTER_COLUMNS,
    call_label,
    error_templates,
    filter_calls,
    latency_summary,
    outcome_rates,
    template_daily,
)

__all__ = ["ANY", "SAMPLE_ROWS", "ExplorerFilters", "ExplorerState", "TemplateRow"]

#: The "no filter" choice of every dropdown.
ANY = "(any)"
#: Calls drawn in the latency and outcome charts when the DuckDB engine serves the panel.
SAMPLE_ROWS = 100_000


_SUMMARY_TAIL = ("count", "p50", "p90", "p95", "p99", "max")


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


def _view(calls: pa.Table) -> pa.Table:
    """What the charts draw: the tool-or-method label as ``tool``, the latency and the outcome."""
    return pa.table({"tool": call_label(calls), "latency_ms": calls.column("latency_ms"),
                     "outcome": _text(calls.column("outcome"))})


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
        view: the selected calls as ``(tool, latency_ms, outcome)``, ``tool`` being the tool name or
            the method (what the charts draw). percentiles: latency summary rows
            ``(tool, count, p50, p95, p99, max)``.
        outcomes: ``{tool: {outcome: count}}``. templates: the error-template rows.
        loading: a load or refresh is running. status: one short line (counts only).
        engine: ``memory`` (the loaded tables) or ``duckdb`` (``compute_engine``: SQL over the Parquet
            dataset; the charts then draw a uniform sample of ``SAMPLE_ROWS`` calls).
    """

    filters: ExplorerFilters = field(default_factory=ExplorerFilters)
    choices: dict[str, list[str]] = field(default_factory=dict)
    days: list[dt.date] = field(default_factory=list)
    total: int = 0
    shown: int = 0
    view: pa.Table = field(default_factory=lambda: _view(pa.table({
        "tool": pa.array([], pa.string()), "method": pa.array([], pa.string()),
        "latency_ms": pa.array([], pa.uint64()), "outcome": pa.array([], pa.string())})))
    percentiles: list[tuple[str, int, float, float, float, int]] = field(default_factory=list)
    outcomes: dict[str, dict[str, int]] = field(default_factory=dict)
    templates: list[TemplateRow] = field(default_factory=list)
    loading: bool = False
    status: str = "loading..."
    engine: str = "memory"

    def compute(self, calls: pa.Table) -> None:
        """Recompute every view of ``calls`` under the current filters."""
        self.engine = "memory"
        self.total = calls.num_rows
        self.choices = {name: _distinct(calls, name) for name in FILTER_COLUMNS}
        self.days = _days(calls)
        selected = filter_calls(calls, **dataclasses.asdict(self.filters))
        self.shown = selected.num_rows
        self.view = _view(selected)
        self._latency()
        self._outcomes()
        self._templates(selected)
        self.status = f"{self.shown} of {self.total} calls shown"

    def compute_engine(self, engine: Any) -> None:
        """Recompute every view with a ``DuckDBEngine`` (the same tables, computed by SQL)."""
        self.engine = "duckdb"
        self.total = engine.count()
        self.choices = {name: engine.distinct(name) for name in FILTER_COLUMNS}
        self.days = engine.days()
        where = dataclasses.asdict(self.filters)
        self.shown = engine.count(**where)
        sample = engine.sample(("label", "latency_ms", "outcome"), rows=SAMPLE_ROWS, **where)
        self.view = pa.table({"tool": sample.column("label").cast(pa.string()),
                              "latency_ms": sample.column("latency_ms").cast(pa.uint64()),
                              "outcome": sample.column("outcome").cast(pa.string())})
        self._latency_rows(engine.latency_summary(by=("label",), **where).rename_columns(
            ["tool", *_SUMMARY_TAIL]))
        rates = engine.outcome_rates(by=("label",), **where) if self.shown else None
        self._outcome_rows(None if rates is None else rates.rename_columns(["tool", *rates.column_names[1:]]))
        self._template_rows(engine.error_templates(**where), engine.template_daily(**where))
        sampled = f"; charts from a sample of {self.view.num_rows}" if self.view.num_rows < self.shown else ""
        self.status = f"{self.shown} of {self.total} calls shown (DuckDB engine{sampled})"

    def _latency(self) -> None:
        self._latency_rows(latency_summary(self.view.select(["tool", "latency_ms"]), by=("tool",)))

    def _latency_rows(self, summary: pa.Table) -> None:
        self.percentiles = [(r["tool"], r["count"], r["p50"], r["p95"], r["p99"], r["max"])
                            for r in summary.to_pylist()]

    def _outcomes(self) -> None:
        self._outcome_rows(None if self.view.num_rows == 0 else
                           outcome_rates(self.view.select(["tool", "outcome"]), by=("tool",)))

    def _outcome_rows(self, rates: pa.Table | None) -> None:
        if rates is None:
            self.outcomes = {}
            return
        self.outcomes = {r["tool"]: {o: r[o] for o in ("ok", "error", "unknown", "unparsed")}
                         for r in rates.to_pylist()}

    def _templates(self, view: pa.Table) -> None:
        self._template_rows(error_templates(view), template_daily(view))

    def _template_rows(self, table: pa.Table, daily_table: pa.Table) -> None:
        daily: dict[str, dict[dt.date, int]] = {}
        for r in daily_table.to_pylist():
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
