"""The operation view of the 2026-07-28 revision: traffic per protocol era, and the operations that span
several requests (multi round-trip requests, task-augmented calls), with server time apart from the time
the server waited on its client (a person answering an elicitation, say).

A call record already *is* one operation (docs/capture.md): its ``latency_ms`` runs from the first request
to the final answer, so every other analysis counts and times operations.  These tables add what only an
operation has: its rounds, its client wait (``wait_ms``), its server time (``server_ms`` = latency less the
wait), tasks and their terminal statuses, operations the client abandoned, and flagged retries.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa

from ._frames import as_frame, to_table

__all__ = ["OPERATIONS_SCHEMA", "era_mix", "operation_summary"]

ABANDONED = "capture-operation-abandoned"  # error_code shows a string code as itself

_ERA_SCHEMA = pa.schema([("server", pa.string()), ("era", pa.string()), ("protocol", pa.string()),
                         ("calls", pa.int64()), ("share", pa.float64())])
#: Columns of ``operation_summary``.
OPERATIONS_SCHEMA = pa.schema([
    ("server", pa.string()), ("tool", pa.string()), ("method", pa.string()), ("operations", pa.int64()),
    ("multi_round", pa.int64()), ("tasks", pa.int64()), ("rounds_p50", pa.float64()),
    ("rounds_max", pa.int64()), ("latency_p50", pa.float64()), ("latency_p95", pa.float64()),
    ("server_p50", pa.float64()), ("server_p95", pa.float64()), ("wait_share", pa.float64()),
    ("abandoned", pa.int64()), ("flagged", pa.int64()), ("task_failed", pa.int64()),
    ("task_cancelled", pa.int64()),
])


def era_mix(calls: Any, *, by: tuple[str, ...] = ("server",)) -> pa.Table:
    """Calls per protocol era (``modern``: the request carried the 2026-07-28 per-request version;
    ``legacy`` otherwise) and protocol version, per group.

    Args:
        calls: the calls table (or a frame with its columns).
        by: group columns (``server`` by default; ``()`` for the whole store).

    Returns:
        Columns ``*by``, ``era``, ``protocol`` (null for legacy), ``calls``, ``share`` (of the group's
        calls); sorted by group, then era.
    """
    frame = as_frame(calls, (*by, "era", "protocol"))
    schema = pa.schema([f for f in _ERA_SCHEMA if f.name in (*by, "era", "protocol", "calls", "share")])
    if frame.empty:
        return schema.empty_table()
    keys = [*by, "era", "protocol"]
    counts = frame.groupby(keys, dropna=False, sort=True).size().rename("calls").reset_index()
    totals = counts.groupby(list(by), dropna=False)["calls"].transform("sum") if by else counts["calls"].sum()
    counts["share"] = counts["calls"] / totals
    return to_table(counts, schema)


def _operations(frame: pd.DataFrame) -> pd.DataFrame:
    multi = frame["rounds"].fillna(1) > 1
    task = frame["task_status"].notna()
    waited = frame["result_type"].notna() | frame["flags"].notna()
    return frame[multi | task | waited].copy()


def operation_summary(calls: Any) -> pa.Table:
    """Per (server, tool or method): the operations that spanned several requests or waited on their client.

    Args:
        calls: the calls table.

    Returns:
        ``OPERATIONS_SCHEMA`` rows: ``operations`` (all such records), ``multi_round``, ``tasks``,
        ``rounds_p50``/``rounds_max``, ``latency_p50``/``latency_p95`` (ms, first request to final answer),
        ``server_p50``/``server_p95`` (ms, less the client wait), ``wait_share`` (client wait over total
        latency), ``abandoned``, ``flagged`` (a state or header flag), ``task_failed``,
        ``task_cancelled``; most operations first.
    """
    cols = ("server", "tool", "method", "rounds", "task_status", "result_type", "flags", "latency_ms",
            "server_ms", "wait_ms", "error_code")
    frame = _operations(as_frame(calls, cols))
    if frame.empty:
        return OPERATIONS_SCHEMA.empty_table()
    frame["rounds"] = frame["rounds"].fillna(1).astype("float64")
    for col in ("latency_ms", "server_ms", "wait_ms"):
        frame[col] = frame[col].astype("float64")
    rows = []
    for (server, tool, method), group in frame.groupby(["server", "tool", "method"], dropna=False, sort=True):
        total = group["latency_ms"].sum()
        rows.append({
            "server": server, "tool": tool if isinstance(tool, str) else None, "method": method,
            "operations": len(group), "multi_round": int((group["rounds"] > 1).sum()),
            "tasks": int(group["task_status"].notna().sum()), "rounds_p50": group["rounds"].median(),
            "rounds_max": int(group["rounds"].max()), "latency_p50": group["latency_ms"].quantile(0.5),
            "latency_p95": group["latency_ms"].quantile(0.95), "server_p50": group["server_ms"].quantile(0.5),
            "server_p95": group["server_ms"].quantile(0.95),
            "wait_share": float(group["wait_ms"].fillna(0).sum() / total) if total else None,
            "abandoned": int((group["error_code"] == ABANDONED).sum()),
            "flagged": int(group["flags"].notna().sum()),
            "task_failed": int((group["task_status"] == "failed").sum()),
            "task_cancelled": int((group["task_status"] == "cancelled").sum())})
    out = pd.DataFrame(rows).sort_values(["operations", "server", "method"], ascending=[False, True, True])
    return to_table(out, OPERATIONS_SCHEMA)
