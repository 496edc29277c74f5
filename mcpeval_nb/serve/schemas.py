"""The input and output JSON Schemas of serve's tools (data only; ``tools.py`` pairs them with handlers).

Input schemas are checked with ``schemacheck`` before a handler runs, so they use only its keywords.
Output schemas describe the ``structuredContent`` a tool returns; the run tools return the
``mcpeval.probe-report/v2`` document and declare its published schema.
"""

from __future__ import annotations

from typing import Any

from ..privacy.records import ANNOTATION_KINDS
from ..probe.doc_schemas import report_schema
from ..triage.lifecycle import STATES

__all__ = ["INPUTS", "OUTPUTS", "TARGET_KEYS"]

_LABEL = {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{1,128}$",
          "description": "Server label for the report, the journal and the trend history (default probed)."}
_FINDING_ID = {"type": "string", "pattern": "^finding-[0-9a-f]{16}$"}
_IDENTIFIER = {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_.:-]{0,63}$"}
_TARGET = {
    "command": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                "description": "A stdio server command (argv); give this or url."},
    "url": {"type": "string", "description": "A loopback Streamable HTTP endpoint; give this or command."},
}
TARGET_KEYS = ("command", "url")
_MANIFEST = {"type": "object",
             "description": "A probe manifest document (mcpeval-nb schema manifest); held in memory only."}


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


def _nullable(kind: str) -> dict[str, Any]:
    return {"type": [kind, "null"]}


INPUTS: dict[str, dict[str, Any]] = {
    "list_findings": _object({"state": {"type": "string", "enum": list(STATES),
                                        "description": "Only findings in this lifecycle state."}}),
    "get_finding": _object({"finding_id": _FINDING_ID}, ("finding_id",)),
    "get_readiness_trends": _object({}),
    "run_probe": _object({"manifest": _MANIFEST, **_TARGET, "server_label": _LABEL}, ("manifest",)),
    "scaffold": _object({**_TARGET, "server_label": _LABEL, "confirm_read_only": {
        "type": "boolean", "description": "Attest that unannotated tools are read-only."}}),
    "score": _object({**_TARGET, "server_label": _LABEL}),
    "verify_finding": _object({"finding_id": _FINDING_ID, "case": _IDENTIFIER, "manifest": _MANIFEST,
                               **_TARGET}, ("finding_id", "case", "manifest")),
    "record_annotation": _object({
        "session": {"type": "string", "minLength": 1,
                    "description": "The raw session value or its stored session:<hex> token (hashed)."},
        "seq": {"type": "integer", "minimum": 0, "maximum": 2**64 - 1,
                "description": "The call's sequence number (an integer: 1.0 is refused)."},
        "kind": {"type": "string", "enum": list(ANNOTATION_KINDS)},
        "note": {"type": "string", "maxLength": 240, "description": "At most 240 characters."},
    }, ("session", "seq", "kind", "note")),
}

_FINDING = _object({
    "finding_id": _FINDING_ID, "state": {"type": "string", "enum": list(STATES)},
    "probe_id": _nullable("string"), "consecutive_passes": {"type": "integer"},
    "server": _nullable("string"), "tool": _nullable("string"), "err_code": {},
    "err_template_id": _nullable("string"), "failures": {"type": "integer"}, "calls": {"type": "integer"},
    "sessions": {"type": "integer"}, "last_seen": _nullable("string"), "cost": {"type": "number"},
    "blast": {"type": "integer"}, "rate": {"type": "number"}, "confidence": {"type": "number"},
    "recency": {"type": "number"}, "score": {"type": "number"}, "threshold": {"type": "number"},
    "severity": {"type": "string"}, "repro": {}, "class": {"type": "string"}, "hint": {"type": "string"},
    "err_codes": {"type": "array"}, "retryable": _nullable("boolean"),
}, ("finding_id", "state", "server", "tool", "severity", "failures", "calls", "sessions", "class"))
_POINT = _object({
    "ts": {"type": "string"}, "passed": {"type": "boolean"}, "cases_total": {"type": "integer"},
    "cases_passed": {"type": "integer"}, "score": {"type": "integer"}, "manifest_sha256": _nullable("string"),
    "standard": _nullable("string"), "delta": _nullable("string"),
}, ("ts", "passed", "cases_total", "cases_passed", "score", "manifest_sha256", "standard", "delta"))

OUTPUTS: dict[str, dict[str, Any]] = {
    "list_findings": _object({"findings": {"type": "array", "items": _FINDING}}, ("findings",)),
    "get_finding": _object({"finding": _FINDING}, ("finding",)),
    "get_readiness_trends": _object({"servers": {"type": "array", "items": _object(
        {"server": {"type": "string"}, "points": {"type": "array", "items": _POINT}}, ("server", "points"))}},
        ("servers",)),
    "run_probe": report_schema(),
    "scaffold": _object({"manifest": {"type": "object"}, "decisions": {"type": "array", "items": _object(
        {"tool": {"type": "string"}, "decision": {"type": "string"}}, ("tool", "decision"))}},
        ("manifest", "decisions")),
    "score": report_schema(),
    "verify_finding": _object({
        "finding_id": _FINDING_ID, "case": _IDENTIFIER, "state": {"type": "string", "enum": list(STATES)},
        "consecutive_passes": {"type": "integer"}, "passed": {"type": "boolean"},
        "errored": {"type": "boolean"}, "reason": _nullable("string"),
    }, ("finding_id", "case", "state", "consecutive_passes", "passed", "errored", "reason")),
    "record_annotation": _object({"kind": {"type": "string"}, "session": {"type": "string"},
                                  "seq": {"type": "integer"}}, ("kind", "session", "seq")),
}
