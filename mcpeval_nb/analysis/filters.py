"""Selecting calls: ``filter_calls`` by label columns and an inclusive UTC day range, and ``call_label``
(the tool name, or the method for calls without a tool) that every per-tool view groups by."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..clock import day_start
from ..errors import UsageError
from ..tables.coerce import as_table

__all__ = ["FILTER_COLUMNS", "call_label", "filter_calls"]

#: The label columns ``filter_calls`` matches by equality.
FILTER_COLUMNS = ("server", "tool", "method", "outcome")


def _text(column: Any) -> Any:
    return column.cast(pa.string()) if pa.types.is_dictionary(column.type) else column


def _column(calls: pa.Table, name: str) -> Any:
    if name not in calls.column_names:
        raise UsageError(f"the calls table has no {name!r} column")
    return calls.column(name)


def call_label(calls: pa.Table) -> pa.ChunkedArray:
    """Per call: the tool name, or the method for calls without a tool (``tools/list``, ``ping``).

    Args:
        calls: a calls table (``open_store(root).calls``) or any table with ``tool`` and ``method``.

    Returns:
        A string column, one value per row.

    Raises:
        UsageError: a column is missing.
    """
    result: pa.ChunkedArray = pc.coalesce(_text(_column(calls, "tool")), _text(_column(calls, "method")))
    return result


def _and(mask: Any, cond: Any) -> Any:
    cond = pc.fill_null(cond, False)
    return cond if mask is None else pc.and_(mask, cond)


def _day_start(day: dt.date, ts: Any) -> pa.Scalar:
    return pa.scalar(day_start(day), ts.type)


def filter_calls(calls: Any, *, server: str | None = None, tool: str | None = None,
                 method: str | None = None, outcome: str | None = None, day_from: dt.date | None = None,
                 day_to: dt.date | None = None) -> pa.Table:
    """The calls that match every given filter; ``None`` matches anything.

    Args:
        calls: a calls table (dictionary-encoded or plain string columns), its pandas frame, or any
            Arrow stream (polars, DuckDB).
        server / tool / method / outcome: exact values of those columns (a null never matches).
        day_from / day_to: an inclusive range of UTC days on ``ts``.

    Returns:
        The matching rows, in their original order (the input itself when no filter is given).

    Raises:
        UsageError: a filtered column is missing.
    """
    calls = as_table(calls)
    mask: Any = None
    for name, value in zip(FILTER_COLUMNS, (server, tool, method, outcome), strict=True):
        if value is not None:
            mask = _and(mask, pc.equal(_text(_column(calls, name)), value))
    if day_from is not None or day_to is not None:
        ts = _column(calls, "ts")
        if day_from is not None:
            mask = _and(mask, pc.greater_equal(ts, _day_start(day_from, ts)))
        if day_to is not None:
            mask = _and(mask, pc.less(ts, _day_start(day_to + dt.timedelta(days=1), ts)))
    return calls if mask is None else calls.filter(mask)
