"""Sanitising proven columns: every distinct value once, through the privacy boundary's read rules.

The fast strategies (``canon``, ``rebuild``) prove that a line parses to the values they cut out; what
``CallRecord.sanitized()`` would make of those values is decided here by the very rule objects it
applies record by record (``privacy.read_rules.CALL_RULES``), mapped over each distinct value of a
column instead of over each row.
"""

from __future__ import annotations

import pyarrow as pa

from ..privacy.read_rules import CALL_RULES, ReadRule, rule_for

__all__ = ["remap", "sanitise_columns"]

#: The read rule of each scalar text column the loader maps.
_RULES: dict[str, ReadRule] = {name: rule_for(CALL_RULES, name)
                               for name in ("session", "server", "method", "tool", "outcome", "kind")}


def remap(enc: pa.DictionaryArray, mapped: list[str | None]) -> pa.DictionaryArray:
    """Replace dictionary values by ``mapped`` (same order), merging duplicates; None becomes a null."""
    unique: dict[str, int] = {}
    index = [None if m is None else unique.setdefault(m, len(unique)) for m in mapped]
    indices = pa.array(index, type=pa.int32()).take(enc.indices) if index else enc.indices
    return pa.DictionaryArray.from_arrays(indices, pa.array(list(unique), type=pa.string()))


def _map_unique(column: pa.Array, rule: ReadRule) -> pa.Array:
    enc = column.dictionary_encode()
    clean = rule.apply  # nulls stay null here, so the rule's own None handling is not needed
    return remap(enc, [None if v is None else clean(v) for v in enc.dictionary.to_pylist()])


def sanitise_columns(*, ts: pa.Array, seq: pa.Array, latency_ms: pa.Array, shim_self_us: pa.Array,
                     session: pa.Array, server: pa.Array, method: pa.Array, tool: pa.Array, outcome: pa.Array,
                     kind: pa.Array, capture_id: pa.Array, event_id: pa.Array) -> dict[str, pa.Array]:
    """The scalar columns of proven lines, sanitised once per distinct value by the read rules.

    ``ts`` must already be the timestamp column; the numbers and identity ids pass through unchanged.
    """
    text = {"session": session, "server": server, "method": method, "tool": tool, "outcome": outcome,
            "kind": kind}
    mapped = {name: _map_unique(column, _RULES[name]) for name, column in text.items()}
    return {
        "ts": ts, "session": mapped["session"], "seq": seq, "server": mapped["server"],
        "method": mapped["method"], "tool": mapped["tool"], "latency_ms": latency_ms,
        "outcome": mapped["outcome"], "shim_self_us": shim_self_us, "kind": mapped["kind"],
        "capture_id": capture_id, "event_id": event_id,
    }
