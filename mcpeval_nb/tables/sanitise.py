"""Sanitising proven columns: every distinct value once, through the reference functions.

The fast strategies (``canon``, ``rebuild``) prove that a line parses to the values they cut out; what
``CallRecord.sanitized()`` would make of those values is decided here, per distinct value, by the same
grammar checks the reference path applies record by record.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ..privacy.grammar import opaque_session, valid_method, valid_server, valid_tool
from ..privacy.records import KINDS, OUTCOMES

__all__ = ["remap", "sanitise_columns"]


def remap(enc: pa.DictionaryArray, mapped: list[str | None]) -> pa.DictionaryArray:
    """Replace dictionary values by ``mapped`` (same order), merging duplicates; None becomes a null."""
    unique: dict[str, int] = {}
    index = [None if m is None else unique.setdefault(m, len(unique)) for m in mapped]
    indices = pa.array(index, type=pa.int32()).take(enc.indices) if index else enc.indices
    return pa.DictionaryArray.from_arrays(indices, pa.array(list(unique), type=pa.string()))


def _map_unique(column: pa.Array, fn: Any) -> pa.Array:
    enc = column.dictionary_encode()
    return remap(enc, [None if v is None else fn(v) for v in enc.dictionary.to_pylist()])


def sanitise_columns(*, ts: pa.Array, seq: pa.Array, latency_ms: pa.Array, shim_self_us: pa.Array,
                     session: pa.Array, server: pa.Array, method: pa.Array, tool: pa.Array, outcome: pa.Array,
                     kind: pa.Array, capture_id: pa.Array, event_id: pa.Array) -> dict[str, pa.Array]:
    """The scalar columns of proven lines, sanitised once per distinct value by the reference functions.

    ``ts`` must already be the timestamp column; the numbers and identity ids pass through unchanged.
    """
    return {
        "ts": ts, "session": _map_unique(session, opaque_session), "seq": seq,
        "server": _map_unique(server, lambda v: v if valid_server(v) else "invalid"),
        "method": _map_unique(method, lambda v: v if valid_method(v) else "unparsed/metadata"),
        "tool": _map_unique(tool, lambda v: v if valid_tool(v) else None),
        "latency_ms": latency_ms,
        "outcome": _map_unique(outcome, lambda v: v if v in OUTCOMES else "unknown"),
        "shim_self_us": shim_self_us,
        "kind": _map_unique(kind, lambda v: v if v in KINDS else "unparsed"),
        "capture_id": capture_id, "event_id": event_id,
    }
