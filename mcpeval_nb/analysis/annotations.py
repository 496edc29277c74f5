"""Annotations joined to the calls they remark on: by event id when both sides have one, else by
``(session, seq)``."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa

from ._frames import as_frame, to_table

__all__ = ["join_annotations"]

_CALL_COLS = ("session", "seq", "event_id", "ts", "server", "tool", "method", "outcome", "latency_ms",
              "error_template_id")
_NOTE_COLS = ("ts", "session", "seq", "event_id", "kind", "note")
_SCHEMA = pa.schema([
    ("ts", pa.timestamp("ms", tz="UTC")), ("session", pa.string()), ("seq", pa.uint64()),
    ("event_id", pa.string()), ("kind", pa.string()), ("note", pa.string()), ("matched", pa.bool_()),
    ("call_ts", pa.timestamp("ms", tz="UTC")), ("server", pa.string()), ("tool", pa.string()),
    ("method", pa.string()), ("outcome", pa.string()), ("latency_ms", pa.float64()),
    ("error_template_id", pa.string()),
])


def join_annotations(calls: Any, annotations: Any, *, kinds: tuple[str, ...] | None = None) -> pa.Table:
    """Each annotation with the call it targets.

    Args:
        calls: the calls table.
        annotations: the annotations table.
        kinds: keep only these annotation kinds (e.g. ``("false-success", "workaround")``).

    Returns:
        The annotation columns, ``matched``, and the call's ``call_ts``, ``server``, ``tool``,
        ``method``, ``outcome``, ``latency_ms``, ``error_template_id`` (null when unmatched).  An
        annotation matching several calls (the same session and seq in two captures) gives several rows.

    Raises:
        UsageError: a missing column.
    """
    notes = as_frame(annotations, _NOTE_COLS)
    if kinds is not None:
        notes = notes[notes["kind"].isin(kinds)]
    call = as_frame(calls, _CALL_COLS).rename(columns={"ts": "call_ts"})
    notes = notes.reset_index(drop=True).reset_index(names="_row")
    notes["seq"] = notes["seq"].astype("Int64")
    call["seq"] = call["seq"].astype("Int64")
    by_event = notes[notes["event_id"].notna()].merge(
        call[call["event_id"].notna()].drop(columns=["session", "seq"]), on="event_id", how="inner")
    rest = notes[~notes["_row"].isin(by_event["_row"])]
    by_seq = rest.merge(call.drop(columns=["event_id"]), on=["session", "seq"], how="left",
                        indicator=True)
    by_seq["matched"] = by_seq.pop("_merge") == "both"
    by_event["matched"] = True
    out = pd.concat([by_event, by_seq], ignore_index=True).sort_values("_row", kind="stable")
    out["latency_ms"] = out["latency_ms"].astype("float64")
    return to_table(out, _SCHEMA)
