"""The JSON Schema pieces serve's tool table (``table.py``) builds its input and output schemas from.

Input schemas are checked with ``schemacheck`` before a handler runs, so they use only its keywords.
A finding's output schema is derived from its row (``triage.rows``); the run tools return the
``mcpeval.probe-report/v2`` document and declare its published schema.
"""

from __future__ import annotations

from typing import Any

from ..privacy.records import ANNOTATION_KINDS
from ..probe.doc_schemas import report_schema
from ..triage.rows import FINDING_ID_SCHEMA, FINDING_JSON_SCHEMA, STATES

__all__ = ["ANNOTATION", "CATALOG_STATUS", "FINDING", "FINDING_ID", "IDENTIFIER", "LABEL", "MANIFEST",
           "POINT", "REPORT", "STATE", "TARGET", "nullable", "obj"]

LABEL = {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{1,128}$",
         "description": "Server label for the report, the journal and the trend history (default probed)."}
FINDING_ID = FINDING_ID_SCHEMA
FINDING = FINDING_JSON_SCHEMA
STATE = {"type": "string", "enum": list(STATES)}
IDENTIFIER = {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_.:-]{0,63}$"}
#: The target arguments of the spawn tools (exactly one is checked by ``spawn_tools``).
TARGET = {
    "command": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                "description": "A stdio server command (argv); give this or url."},
    "url": {"type": "string", "description": "A loopback Streamable HTTP endpoint; give this or command."},
}
MANIFEST = {"type": "object",
            "description": "A probe manifest document (mcpeval-nb schema manifest); held in memory only."}
#: ``record_annotation``'s arguments.
ANNOTATION = {
    "session": {"type": "string", "minLength": 1,
                "description": "The raw session value or its stored session:<hex> token (hashed)."},
    "seq": {"type": "integer", "minimum": 0, "maximum": 2**64 - 1,
            "description": "The call's sequence number (an integer: 1.0 is refused)."},
    "kind": {"type": "string", "enum": list(ANNOTATION_KINDS)},
    "note": {"type": "string", "maxLength": 240, "description": "At most 240 characters."},
}
REPORT = report_schema()


def obj(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """An object schema with these properties and no others."""
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


def nullable(kind: str) -> dict[str, Any]:
    """A value of this JSON type, or null."""
    return {"type": [kind, "null"]}


#: One readiness trend point of ``get_readiness_trends``.
POINT = obj({
    "ts": {"type": "string"}, "passed": {"type": "boolean"}, "cases_total": {"type": "integer"},
    "cases_passed": {"type": "integer"}, "score": {"type": "integer"}, "manifest_sha256": nullable("string"),
    "standard": nullable("string"), "delta": nullable("string"),
}, ("ts", "passed", "cases_total", "cases_passed", "score", "manifest_sha256", "standard", "delta"))


_DIGEST = nullable("string")
_WHEN = nullable("string")
#: One server of ``get_catalog_status`` (``catalog.ServerStatus.to_json``).
CATALOG_STATUS = obj({
    "server": {"type": "string"}, "pinned": {"type": "boolean"}, "pinned_at": _WHEN,
    "latest_listing": _WHEN, "tools": {"type": "integer"},
    "changes": {"type": "array", "items": obj({
        "tool": {"type": "string"}, "change": {"type": "string"}, "previous_tool": nullable("string"),
        "first_seen": _WHEN, "sessions": {"type": "integer"}, "before": _DIGEST, "after": _DIGEST},
        ("tool", "change", "previous_tool", "first_seen", "sessions", "before", "after"))},
    "new_flags": {"type": "array", "items": obj({"tool": {"type": "string"}, "flag": {"type": "string"},
                                                 "first_seen": _WHEN}, ("tool", "flag", "first_seen"))},
    "dead_tools": {"type": "array", "items": obj(
        {"tool": {"type": "string"}, "listed_sessions": {"type": "integer"},
         "catalog_tokens": nullable("integer")}, ("tool", "listed_sessions", "catalog_tokens"))},
}, ("server", "pinned", "pinned_at", "latest_listing", "tools", "changes", "new_flags", "dead_tools"))
