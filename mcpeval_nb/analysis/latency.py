"""Latency: count and percentiles per server, tool and method, optionally per time bucket.

Percentiles use linear interpolation between closest ranks (numpy's default).  Rows without
``latency_ms`` (notifications, unparsed frames) are left out.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UsageError
from ._frames import as_frame, to_table

__all__ = ["PERCENTILES", "bucket_ms", "format_ms", "latency_over_time", "latency_schema", "latency_summary",
           "slowest_tools"]

#: The percentiles every latency table carries, as ``p50`` ... ``p99`` columns.
PERCENTILES = (50, 90, 95, 99)
_KEYS = ("server", "tool", "method")


def format_ms(value: float | int | None) -> str:
    """A latency for people: whole milliseconds, ``<1`` below one millisecond, ``-`` when unknown.

    The journal's ``latency_ms`` is an integer, the difference of two millisecond clock readings, so a 0
    means "under a millisecond", and a percentile between 0 and 1 is interpolated between such calls.

    Args:
        value: milliseconds (a percentile, a maximum) or None.

    Returns:
        ``"-"``, ``"<1"`` or the rounded value (``"12"``).
    """
    if value is None:
        return "-"
    return "<1" if value < 1 else f"{value:.0f}"


def _bucketed(frame: pd.DataFrame, bucket: str | None) -> pd.DataFrame:
    if bucket is None:
        return frame
    try:
        frame["bucket"] = frame["ts"].dt.floor(bucket)
    except (ValueError, TypeError):
        raise UsageError(f"bucket {bucket!r} is not a pandas frequency such as '1h' or '1D'") from None
    return frame


def bucket_ms(bucket: str) -> int:
    """The width of a fixed time bucket in milliseconds (what the DuckDB and Dask engines floor by).

    Raises:
        UsageError: not a fixed pandas frequency such as ``15min``, ``1h`` or ``1D``.
    """
    try:
        width = pd.Timedelta(pd.tseries.frequencies.to_offset(bucket))  # type: ignore[arg-type]
    except (ValueError, TypeError):
        raise UsageError(f"bucket {bucket!r} is not a pandas frequency such as '1h' or '1D'") from None
    if width.value <= 0 or width.value % 1_000_000:
        raise UsageError(f"bucket {bucket!r} is not a whole number of milliseconds")
    return int(width.value // 1_000_000)


def latency_schema(keys: tuple[str, ...], bucket: bool) -> pa.Schema:
    """The columns of a ``latency_summary`` table grouped by ``keys`` (and a time bucket)."""
    fields = [pa.field(k, pa.string()) for k in keys]
    if bucket:
        fields.append(pa.field("bucket", pa.timestamp("ms", tz="UTC")))
    fields += [pa.field("count", pa.int64())]
    fields += [pa.field(f"p{p}", pa.float64()) for p in PERCENTILES]
    fields += [pa.field("max", pa.int64())]
    return pa.schema(fields)


def latency_summary(calls: Any, *, by: tuple[str, ...] = _KEYS, bucket: str | None = None,
                    value: str = "latency_ms") -> pa.Table:
    """Latency count, p50, p90, p95, p99 and max per group.

    Args:
        calls: the calls table (or a frame with its columns).
        by: group columns (any of the calls table's text columns).
        bucket: optional time bucket (a pandas frequency: ``15min``, ``1h``, ``1D``) on ``ts``.
        value: ``latency_ms`` (an operation's whole duration, first request to final answer) or
            ``server_ms`` (the same less the time the server waited on its client: a multi round-trip
            request's questions, a task waiting for input).

    Returns:
        Columns ``*by``, [``bucket``], ``count``, ``p50``, ``p90``, ``p95``, ``p99``, ``max``; sorted by
        the group keys.

    Raises:
        UsageError: a missing column or a bad bucket.
    """
    if value not in ("latency_ms", "server_ms"):
        raise UsageError("value must be latency_ms or server_ms")
    cols = (*by, value, *(("ts",) if bucket else ()))
    frame = as_frame(calls, tuple(dict.fromkeys(cols))).rename(columns={value: "latency_ms"})
    frame = frame[frame["latency_ms"].notna()].copy()
    frame["latency_ms"] = frame["latency_ms"].astype("float64")
    frame = _bucketed(frame, bucket)
    keys = [*by, *(["bucket"] if bucket else [])]
    schema = latency_schema(by, bucket is not None)
    if frame.empty:
        return schema.empty_table()
    grouped = frame.groupby(keys, dropna=False, sort=True)["latency_ms"]
    out = grouped.agg(["count", "max"])
    for p in PERCENTILES:
        out[f"p{p}"] = grouped.quantile(p / 100)
    out = out.reset_index()
    out["max"] = out["max"].astype("int64")
    return to_table(out, schema)


def slowest_tools(calls: Any, *, n: int = 10, percentile: int = 95) -> pa.Table:
    """The ``n`` (server, tool) pairs with the highest latency percentile.

    Args:
        calls: the calls table.
        n: how many rows to return.
        percentile: one of ``PERCENTILES``.

    Returns:
        ``latency_summary`` rows for ``by=("server", "tool")``, tool calls only, highest first.

    Raises:
        UsageError: an unsupported percentile.
    """
    if percentile not in PERCENTILES:
        raise UsageError(f"percentile must be one of {', '.join(map(str, PERCENTILES))}")
    table = latency_summary(calls, by=("server", "tool"))
    table = table.filter(pc.is_valid(table.column("tool")))
    return table.sort_by([(f"p{percentile}", "descending"), ("server", "ascending"), ("tool", "ascending")]
                         ).slice(0, n)


def latency_over_time(calls: Any, *, bucket: str = "1h", by: tuple[str, ...] = ("tool",)) -> pa.Table:
    """Latency percentiles per time bucket (and per ``by`` group): ``latency_summary`` with a bucket.

    Returns:
        Columns ``*by``, ``bucket``, ``count``, ``p50`` ... ``p99``, ``max``.
    """
    return latency_summary(calls, by=by, bucket=bucket)
