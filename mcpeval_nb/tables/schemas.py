"""Arrow schemas of the store's tables (calls, annotations, trends, load report).

Every table carries ``mcpeval_nb.schema`` (the table name and version) in its schema metadata.
Low-cardinality text columns are dictionary encoded; ``ts`` is a UTC timestamp (null where the stored
timestamp was not RFC 3339, i.e. sanitised to ``unknown``).  JSON-valued fields (``args``, the error
code, the measurement profile) are compact serde_json text with sorted keys, exactly as the journal
holds them after sanitisation.
"""

from __future__ import annotations

import pyarrow as pa

from .extcols import EXT_FIELDS

__all__ = [
    "ANNOTATIONS_SCHEMA",
    "CALLS_SCHEMA",
    "CATALOGS_SCHEMA",
    "LOAD_REPORT_SCHEMA",
    "SCHEMA_VERSION",
    "TRENDS_SCHEMA",
]

#: Version of the table layouts below; bumped on any incompatible change.
SCHEMA_VERSION = "2"

_TS = pa.timestamp("ms", tz="UTC")
_DICT = pa.dictionary(pa.int32(), pa.string())


def _schema(name: str, fields: list[pa.Field]) -> pa.Schema:
    meta = {b"mcpeval_nb.schema": f"mcpeval-nb.{name}/{SCHEMA_VERSION}".encode()}
    return pa.schema(fields, metadata=meta)


#: One row per call record (SPEC 2.1), after ``CallRecord.sanitized()``; then the columns of its ``ext``
#: object (``extcols``) and ``server_ms`` (version 2 added those).
CALLS_SCHEMA = _schema("calls", [
    pa.field("ts", _TS),
    pa.field("session", _DICT, nullable=False),
    pa.field("seq", pa.uint64(), nullable=False),
    pa.field("server", _DICT, nullable=False),
    pa.field("method", _DICT, nullable=False),
    pa.field("tool", _DICT),
    pa.field("args", _DICT),
    pa.field("latency_ms", pa.uint64()),
    pa.field("outcome", _DICT, nullable=False),
    pa.field("has_error", pa.bool_(), nullable=False),
    pa.field("error_code", _DICT),
    pa.field("error_layer", _DICT),
    pa.field("error_retryable", pa.bool_()),
    pa.field("error_kind", _DICT),
    pa.field("error_template", _DICT),
    pa.field("error_template_id", _DICT),
    pa.field("shim_self_us", pa.uint64(), nullable=False),
    pa.field("kind", _DICT, nullable=False),
    pa.field("capture_id", pa.string()),
    pa.field("event_id", pa.string()),
    *(pa.field(name, typ, nullable=name != "era") for name, typ, _ in EXT_FIELDS),
    pa.field("server_ms", pa.uint64()),
])

#: One row per annotation (SPEC 5), after ``AnnotationRecord.sanitized()``.
ANNOTATIONS_SCHEMA = _schema("annotations", [
    pa.field("ts", _TS),
    pa.field("session", pa.string(), nullable=False),
    pa.field("seq", pa.uint64()),
    pa.field("event_id", pa.string()),
    pa.field("kind", pa.string(), nullable=False),
    pa.field("note", pa.string(), nullable=False),
])

#: One row per readiness trend point (SPEC 7.1), after ``TrendPoint.sanitized()``.
TRENDS_SCHEMA = _schema("trends", [
    pa.field("ts", _TS),
    pa.field("server", pa.string(), nullable=False),
    pa.field("passed", pa.bool_(), nullable=False),
    pa.field("cases_total", pa.uint64(), nullable=False),
    pa.field("cases_passed", pa.uint64(), nullable=False),
    pa.field("score", pa.uint64(), nullable=False),
    pa.field("manifest_sha256", pa.string()),
    pa.field("standard", pa.string()),
    pa.field("measurement_profile", pa.string()),
])

#: One row per (catalog record, listed tool), after ``CatalogRecord.sanitized()`` (docs/catalog.md): the
#: listing's columns, then the tool's ``position`` in the listing (from 0) and its facts.  A listing of
#: no tools is one row whose ``tool`` and ``position`` are null.  ``skeleton`` is the stored skeleton's
#: compact JSON text (its keys in the schema's own order); the hints are true, false or null.
CATALOGS_SCHEMA = _schema("catalogs", [
    pa.field("ts", _TS),
    pa.field("session", _DICT, nullable=False),
    pa.field("seq", pa.uint64(), nullable=False),
    pa.field("server", _DICT, nullable=False),
    pa.field("complete", pa.bool_(), nullable=False),
    pa.field("capture_id", pa.string()),
    pa.field("event_id", pa.string()),
    pa.field("listing_tools", pa.uint64(), nullable=False),
    pa.field("position", pa.uint64()),
    pa.field("tool", _DICT),
    pa.field("def_digest", pa.string()),
    pa.field("desc_digest", pa.string()),
    pa.field("schema_digest", pa.string()),
    pa.field("annotations_digest", pa.string()),
    pa.field("desc_bucket", _DICT),
    pa.field("skeleton", pa.string()),
    pa.field("depth", pa.uint64()),
    pa.field("properties", pa.uint64()),
    pa.field("read_only_hint", pa.bool_()),
    pa.field("destructive_hint", pa.bool_()),
    pa.field("idempotent_hint", pa.bool_()),
    pa.field("open_world_hint", pa.bool_()),
    pa.field("icons", pa.uint64()),
    pa.field("tokens", pa.uint64()),
    pa.field("flags", pa.list_(pa.string())),
])

#: The load report (``Store.report``): lines skipped by ``errors="report"``, where and why, never what.
#: (Not the probe report: that is a JSON document, see ``report_schema()``.)
LOAD_REPORT_SCHEMA = _schema("load-report", [
    pa.field("file", pa.string(), nullable=False),
    pa.field("line", pa.uint64(), nullable=False),
    pa.field("reason", pa.string(), nullable=False),
])
