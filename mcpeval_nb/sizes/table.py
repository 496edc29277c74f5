"""The result-size history as an Arrow table (one row per call per run), for notebooks and charts."""

from __future__ import annotations

import pyarrow as pa

from ..clock import ts_millis
from ..root import RootLike
from ..schemacheck import packaged_text
from .history import load_size_history

__all__ = ["SIZES_SCHEMA", "result_size_history", "sizes_schema_text"]

#: The columns of ``result_size_history``.
SIZES_SCHEMA = pa.schema(
    [
        pa.field("ts", pa.timestamp("ms", tz="UTC")),
        pa.field("server", pa.string()),
        pa.field("run", pa.int64()),
        pa.field("index", pa.int64()),
        pa.field("tool", pa.string()),
        pa.field("outcome", pa.string()),
        pa.field("reason", pa.string()),
        pa.field("result_bytes", pa.int64()),
        pa.field("text_chars", pa.int64()),
        pa.field("tokens", pa.int64()),
        pa.field("structured_bytes", pa.int64()),
        pa.field("latency_ms", pa.int64()),
    ]
)
_NAMES = {"calls": "calls", "capture": "capture", "result-sizes": "result-sizes"}


def result_size_history(*, root: RootLike = None, server: str | None = None) -> pa.Table:
    """Every call of every sizes run in ``store/probes/sizes.jsonl`` (``run`` numbers the runs from 1).

    Args:
        root: the capture root (default ``$MCPEVAL_HOME``). server: keep only this label.

    Returns:
        A table with ``SIZES_SCHEMA`` (empty when there is no history); a point whose time is
        ``unknown`` has a null ``ts``.

    Raises:
        TrendHistoryCorrupt: a complete line is not a sizes point.
    """
    rows = []
    for run, point in enumerate(load_size_history(root=root), start=1):
        if server is not None and point.server != server:
            continue
        ts = ts_millis(point.ts)  # None for "unknown"
        rows += [
            {"ts": ts, "server": point.server, "run": run, **{k: c.get(k) for k in SIZES_SCHEMA.names[3:]}}
            for c in point.calls
        ]
    return pa.Table.from_pylist(rows, schema=SIZES_SCHEMA)


def sizes_schema_text(name: str) -> str:
    """A published schema of this capability, exactly as shipped: ``calls`` (call manifests),
    ``capture`` (capture manifests) or ``result-sizes`` (the JSON document).

    Raises:
        KeyError: another name.
    """
    return packaged_text(_NAMES[name])
