"""The reference conversion: sanitised records to Arrow columns, one record at a time.

This is the slow, obviously-correct path.  The loader uses it for every line its vectorised fast path
does not accept (hand edits, foreign spellings) and for annotations and trend points; tests compare the
fast path against it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from ..clock import ts_millis
from ..jsonfmt import dumps
from ..privacy.catalog import CatalogRecord, CatalogTool
from ..privacy.catalog_schema import skeleton_size
from ..privacy.errorinfo import code_text
from ..privacy.records import AnnotationRecord, CallRecord, TrendPoint
from .extcols import ext_row, server_ms
from .schemas import ANNOTATIONS_SCHEMA, CALLS_SCHEMA, CATALOGS_SCHEMA, TRENDS_SCHEMA

__all__ = ["annotation_batch", "call_batch", "call_row", "catalog_batch", "catalog_rows", "trend_batch"]


def _json(value: Any) -> str | None:
    return None if value is None else dumps(value, sort_keys=True)


def call_row(record: CallRecord) -> dict[str, Any]:
    """One sanitised call record as a row of ``CALLS_SCHEMA`` (plain Python values)."""
    err = record.error
    ext = ext_row(record.ext)
    return {
        **ext, "server_ms": server_ms(record.latency_ms, ext["wait_ms"]), "ts": ts_millis(record.ts),
        "session": record.session, "seq": record.seq, "server": record.server, "method": record.method,
        "tool": record.tool,
        "args": _json(record.args), "latency_ms": record.latency_ms, "outcome": record.outcome,
        "has_error": err is not None,
        "error_code": None if err is None or "code" not in err else code_text(err["code"]),
        "error_layer": None if err is None else err.get("layer"),
        "error_retryable": None if err is None else err.get("retryable"),
        "error_kind": None if err is None else err.get("kind"),
        "error_template": None if err is None else err.get("template"),
        "error_template_id": None if err is None else err.get("template_id"),
        "shim_self_us": record.shim_self_us, "kind": record.kind,
        "capture_id": None if record.identity is None else record.identity.capture_id,
        "event_id": None if record.identity is None else record.identity.event_id,
    }


def _batch(schema: pa.Schema, rows: Sequence[dict[str, Any]]) -> pa.RecordBatch:
    arrays = []
    for f in schema:
        values = [r[f.name] for r in rows]
        if pa.types.is_dictionary(f.type):
            arrays.append(pa.array(values, type=pa.string()).dictionary_encode())
        elif pa.types.is_timestamp(f.type):
            arrays.append(pa.array(values, type=pa.int64()).cast(f.type))
        else:
            arrays.append(pa.array(values, type=f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def call_batch(records: Sequence[CallRecord]) -> pa.RecordBatch:
    """A ``CALLS_SCHEMA`` batch from already-sanitised call records."""
    return _batch(CALLS_SCHEMA, [call_row(r) for r in records])


def annotation_batch(records: Sequence[AnnotationRecord]) -> pa.RecordBatch:
    """An ``ANNOTATIONS_SCHEMA`` batch from already-sanitised annotations."""
    rows = [{"ts": ts_millis(r.ts), "session": r.session, "seq": r.seq, "event_id": r.event_id,
             "kind": r.kind, "note": r.note} for r in records]
    return _batch(ANNOTATIONS_SCHEMA, rows)


def trend_batch(records: Sequence[TrendPoint]) -> pa.RecordBatch:
    """A ``TRENDS_SCHEMA`` batch from already-sanitised trend points."""
    rows = [{"ts": ts_millis(r.ts), "server": r.server, "passed": r.passed, "cases_total": r.cases_total,
             "cases_passed": r.cases_passed, "score": r.score, "manifest_sha256": r.manifest_sha256,
             "standard": r.standard,
             "measurement_profile": None if r.measurement_profile is None
             else dumps(r.measurement_profile.to_dict(), sort_keys=False)} for r in records]
    return _batch(TRENDS_SCHEMA, rows)


_HINT_COLUMNS = (("readOnlyHint", "read_only_hint"), ("destructiveHint", "destructive_hint"),
                 ("idempotentHint", "idempotent_hint"), ("openWorldHint", "open_world_hint"))


def _tool_columns(tool: CatalogTool | None, position: int | None) -> dict[str, Any]:
    if tool is None:
        return {"position": None, "tool": None, "flags": None}
    row: dict[str, Any] = {
        "position": position, "tool": tool.name, "def_digest": tool.def_digest,
        "desc_digest": tool.desc_digest,
        "schema_digest": tool.schema_digest, "annotations_digest": tool.annotations_digest,
        "desc_bucket": tool.desc_bucket,
        "skeleton": None if tool.skeleton is None else dumps(tool.skeleton, sort_keys=False),
        "depth": tool.depth, "properties": skeleton_size(tool.skeleton), "icons": tool.icons,
        "tokens": tool.tokens, "flags": list(tool.flags)}
    row.update({column: tool.hints.get(hint) for hint, column in _HINT_COLUMNS})
    return row


def catalog_rows(record: CatalogRecord) -> list[dict[str, Any]]:
    """One sanitised catalog record as ``CATALOGS_SCHEMA`` rows: one per tool, in listing order (one row
    with a null tool for an empty listing)."""
    base = {"ts": ts_millis(record.ts), "session": record.session, "seq": record.seq, "server": record.server,
            "complete": record.complete, "listing_tools": len(record.tools),
            "capture_id": None if record.identity is None else record.identity.capture_id,
            "event_id": None if record.identity is None else record.identity.event_id}
    tools: list[tuple[int | None, CatalogTool | None]] = list(enumerate(record.tools)) or [(None, None)]
    empty = dict.fromkeys(CATALOGS_SCHEMA.names)
    return [{**empty, **base, **_tool_columns(tool, position)} for position, tool in tools]


def catalog_batch(records: Sequence[CatalogRecord]) -> pa.RecordBatch:
    """A ``CATALOGS_SCHEMA`` batch from already-sanitised catalog records."""
    return _batch(CATALOGS_SCHEMA, [row for record in records for row in catalog_rows(record)])
