"""Error templates: who hits them, since when, how often per day, and which are new or bursting.

A template is an ``error_template_id`` (salted fingerprint of the error message skeleton); records
whose error carried no message have no template id and are left out.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa

from ..errors import UsageError
from ._frames import as_frame, to_table

__all__ = ["DAILY_SCHEMA", "TEMPLATES_SCHEMA", "error_templates", "template_changes", "template_daily"]

_TS = pa.timestamp("ms", tz="UTC")
_COLS = ("error_template_id", "ts", "session", "tool", "error_code")
#: The columns of ``error_templates``.
TEMPLATES_SCHEMA = pa.schema([("template_id", pa.string()), ("count", pa.int64()), ("sessions", pa.int64()),
                              ("tools", pa.list_(pa.string())), ("codes", pa.list_(pa.string())),
                              ("first_seen", _TS), ("last_seen", _TS)])
#: The columns of ``template_daily``.
DAILY_SCHEMA = pa.schema([("template_id", pa.string()), ("day", pa.date32()), ("count", pa.int64())])


def _errors(calls: Any) -> pd.DataFrame:
    frame = as_frame(calls, _COLS)
    return frame[frame["error_template_id"].notna()]


def error_templates(calls: Any) -> pa.Table:
    """One row per template id.

    Returns:
        Columns ``template_id``, ``count``, ``sessions`` (distinct), ``tools`` and ``codes`` (sorted
        distinct lists; the code is compact JSON text), ``first_seen``, ``last_seen``; most frequent first.
    """
    schema = TEMPLATES_SCHEMA
    frame = _errors(calls)
    if frame.empty:
        return schema.empty_table()
    g = frame.groupby("error_template_id", sort=True)
    out = pd.DataFrame({
        "count": g.size(), "sessions": g["session"].nunique(),
        "tools": g["tool"].agg(lambda s: sorted(set(s.dropna()))),
        "codes": g["error_code"].agg(lambda s: sorted(set(s.dropna()))),
        "first_seen": g["ts"].min(), "last_seen": g["ts"].max(),
    }).reset_index(names="template_id")
    out = out.sort_values(["count", "template_id"], ascending=[False, True], kind="stable")
    return to_table(out, schema)


def template_daily(calls: Any) -> pa.Table:
    """Counts per template id and UTC day.

    Returns:
        Columns ``template_id``, ``day`` (date), ``count``; sorted by template then day.  Records with an
        unknown timestamp are left out.
    """
    schema = DAILY_SCHEMA
    frame = _errors(calls)
    frame = frame[frame["ts"].notna()]
    if frame.empty:
        return schema.empty_table()
    frame = frame.assign(day=frame["ts"].dt.tz_convert("UTC").dt.date)
    out = frame.groupby(["error_template_id", "day"], sort=True).size().reset_index(name="count")
    return to_table(out.rename(columns={"error_template_id": "template_id"}), schema)


def _window(frame: pd.DataFrame, bounds: tuple[Any, Any], name: str) -> tuple[pd.Series, float]:
    try:
        start, end = (pd.Timestamp(b) for b in bounds)
    except (TypeError, ValueError):
        raise UsageError(f"{name} must be a (start, end) pair of timestamps") from None
    start = start.tz_localize("UTC") if start.tzinfo is None else start
    end = end.tz_localize("UTC") if end.tzinfo is None else end
    if end <= start:
        raise UsageError(f"{name} must end after it starts")
    inside = frame[(frame["ts"] >= start) & (frame["ts"] < end)]
    return inside.groupby("error_template_id").size(), (end - start).total_seconds() / 3600


def template_changes(calls: Any, *, window: tuple[Any, Any], baseline: tuple[Any, Any],
                     burst_factor: float = 3.0, min_count: int = 3) -> pa.Table:
    """Templates that are new in ``window`` or occur much more often than in ``baseline``.

    Args:
        calls: the calls table.
        window: ``(start, end)`` of the period to inspect (end exclusive; naive times are UTC).
        baseline: ``(start, end)`` of the comparison period.
        burst_factor: a template bursts when its hourly rate in the window is at least this multiple of
            its baseline rate (and it occurred at least ``min_count`` times in the window).
        min_count: minimum occurrences in the window for a burst.

    Returns:
        Columns ``template_id``, ``status`` (``new`` or ``burst``), ``window_count``, ``baseline_count``,
        ``window_rate`` and ``baseline_rate`` (per hour), ``ratio`` (null for new); new first, then by
        ratio.

    Raises:
        UsageError: a malformed window.
    """
    schema = pa.schema([("template_id", pa.string()), ("status", pa.string()), ("window_count", pa.int64()),
                        ("baseline_count", pa.int64()), ("window_rate", pa.float64()),
                        ("baseline_rate", pa.float64()), ("ratio", pa.float64())])
    frame = _errors(calls)
    frame = frame[frame["ts"].notna()]
    now, now_hours = _window(frame, window, "window")
    base, base_hours = _window(frame, baseline, "baseline")
    rows = []
    for template, count in now.items():
        before = int(base.get(template, 0))
        rate, base_rate = count / now_hours, before / base_hours
        if before == 0:
            rows.append((template, "new", int(count), 0, rate, 0.0, None))
        elif count >= min_count and rate >= burst_factor * base_rate:
            rows.append((template, "burst", int(count), before, rate, base_rate, rate / base_rate))
    rows.sort(key=lambda r: (r[1] != "new", -(r[6] or 0.0), r[0]))
    return pa.Table.from_pylist([dict(zip(schema.names, r, strict=True)) for r in rows], schema=schema)
