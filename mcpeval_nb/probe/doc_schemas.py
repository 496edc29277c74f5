"""Published JSON Schemas of the probe report (v2) and the probe diff (v2): ``mcpeval-nb schema report|diff``.

Built from the same label tables the code uses (reason labels, probe kinds, areas, check ids, readiness
reasons), so a schema can never drift from what the writer emits.  Draft 2020-12, strict objects.
"""

from __future__ import annotations

from typing import Any

from ..jsonfmt import dumps
from .diff import DIFF_SCHEMA, VERDICTS
from .kinds.table import PROBE_KINDS
from .readiness.labels import AREAS, CHECK_IDS, READINESS_REASONS
from .reasons import BOUND_NAMES, REASON_LABELS, TRANSPORT_REASONS
from .report import REPORT_SCHEMA_V2

__all__ = ["diff_schema", "diff_schema_text", "report_schema", "report_schema_text"]

_DRAFT = "https://json-schema.org/draft/2020-12/schema"
_U64 = {"type": "integer", "minimum": 0}
_NULL_U64 = {"type": ["integer", "null"], "minimum": 0}
_TOOL = {"type": "string", "pattern": "^[A-Za-z0-9_:.\\-]{1,128}$"}
_SERVER = {"type": "string", "minLength": 1}
_SHA = {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$"}


def _strict(required: list[str], properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": required, "properties": properties}


def _readiness() -> dict[str, Any]:
    check = _strict(["hint", "id", "observed", "reason", "score", "tool"], {
        "hint": {"type": "string"}, "id": {"enum": [c for ids in CHECK_IDS.values() for c in ids]},
        "observed": _NULL_U64, "reason": {"enum": sorted(READINESS_REASONS)},
        "score": {"type": "integer", "minimum": 0, "maximum": 99},
        "tool": {"oneOf": [{"type": "null"}, _TOOL]}})
    area = _strict(["checks", "measurements", "name", "score", "weight"], {
        "checks": {"type": "array", "items": check},
        "measurements": {"type": "object", "additionalProperties": _U64},
        "name": {"enum": [name for name, _ in AREAS]},
        "score": {"type": "integer", "minimum": 0, "maximum": 100},
        "weight": {"enum": sorted({w for _, w in AREAS})}})
    surface = _strict(["exercised", "read_only", "tools", "writers"],
                      {k: _U64 for k in ("exercised", "read_only", "tools", "writers")})
    assessment = _strict(["read_only_tools", "scope", "semantic_correctness", "tools_exercised",
                          "writer_tools_excluded"], {
        "read_only_tools": _U64, "scope": {"const": "read-only-structural"},
        "semantic_correctness": {"const": "requires-reviewed-oracle"}, "tools_exercised": _U64,
        "writer_tools_excluded": _U64})
    return {"type": "object", "required": ["score", "standard"], "properties": {
        "areas": {"type": "array", "items": area}, "assessment": assessment,
        "attested_read_only": {"type": "boolean"}, "badge": {"type": "string"},
        "measurement_profile": {"type": "object"}, "score": {"type": "integer", "minimum": 0, "maximum": 100},
        "standard": {"type": "string"}, "surface": surface}}


def report_schema() -> dict[str, Any]:
    """The ``mcpeval.probe-report/v2`` JSON Schema."""
    case = _strict(["attempts", "detail", "first_failure", "hint", "id", "measurements", "passed", "probe",
                    "reason", "tool"], {
        "attempts": _U64,
        "detail": {"oneOf": [{"type": "null"}, _strict(["bound", "limit", "observed"], {
            "bound": {"enum": list(BOUND_NAMES)}, "limit": _U64, "observed": _U64})]},
        "first_failure": _NULL_U64, "hint": {"type": ["string", "null"]},
        "id": {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_.:-]{0,63}$"},
        "measurements": {"type": "object"}, "passed": {"type": "boolean"},
        "probe": {"enum": list(PROBE_KINDS)},
        "reason": {"oneOf": [{"type": "null"}, {"enum": list(REASON_LABELS)}]},
        "tool": {"oneOf": [{"type": "null"}, _TOOL]}})
    gate = {"oneOf": [{"type": "null"}, _strict(["passed", "total"], {"passed": _U64, "total": _U64})]}
    generator = _strict(["name", "version"], {"name": {"type": "string"}, "version": {"type": "string"}})
    return {"$schema": _DRAFT, "$id": "https://mcpeval-nb.invalid/schemas/probe-report.schema.json",
            "title": "mcpeval probe report (v2)", **_strict(
                ["cases", "gate", "generator", "manifest_sha256", "passed", "readiness", "readiness_error",
                 "schema", "server"], {
                    "cases": {"type": "array", "items": case}, "gate": gate, "generator": generator,
                    "manifest_sha256": _SHA, "passed": {"type": "boolean"},
                    "readiness": {"oneOf": [{"type": "null"}, _readiness()]},
                    "readiness_error": {"oneOf": [{"type": "null"}, {"enum": sorted(TRANSPORT_REASONS)}]},
                    "schema": {"const": REPORT_SCHEMA_V2}, "server": _SERVER,
                    "protocol": _strict(["era", "version"], {"era": {"const": "modern"},
                                                             "version": {"const": "2026-07-28"}})})}


def diff_schema() -> dict[str, Any]:
    """The ``mcpeval.probe-diff/v2`` JSON Schema."""
    state = {"oneOf": [{"type": "null"}, _strict(["passed", "reason"], {
        "passed": {"type": "boolean"},
        "reason": {"oneOf": [{"type": "null"}, {"enum": list(REASON_LABELS)}]}})]}
    case = _strict(["base", "current", "id", "probe", "verdict"], {
        "base": state, "current": state, "id": {"type": "string"}, "probe": {"enum": list(PROBE_KINDS)},
        "verdict": {"enum": list(VERDICTS)}})
    nullable_int = {"type": ["integer", "null"]}
    readiness = _strict(["base_score", "base_standard", "comparable", "current_score", "current_standard",
                         "delta", "not_comparable", "verdict"], {
        "base_score": nullable_int, "base_standard": {"type": ["string", "null"]},
        "comparable": {"type": "boolean"}, "current_score": nullable_int,
        "current_standard": {"type": ["string", "null"]}, "delta": nullable_int,
        "not_comparable": {"enum": [None, "readiness unavailable", "standard changed",
                                    "measurement profile unavailable", "measurement profile changed"]},
        "verdict": {"enum": [None, "regressed", "changed", "unchanged"]}})
    summary = _strict(list(VERDICTS), {v: _U64 for v in VERDICTS})
    return {"$schema": _DRAFT, "$id": "https://mcpeval-nb.invalid/schemas/probe-diff.schema.json",
            "title": "mcpeval probe diff (v2)",
            **_strict(["cases", "readiness", "schema", "server", "summary"], {
                "cases": {"type": "array", "items": case}, "readiness": readiness,
                "schema": {"const": DIFF_SCHEMA}, "server": _SERVER, "summary": summary})}


def report_schema_text() -> str:
    """``report_schema()`` as pretty, key-sorted JSON with a trailing newline."""
    return dumps(report_schema(), sort_keys=True, indent=2) + "\n"


def diff_schema_text() -> str:
    """``diff_schema()`` as pretty, key-sorted JSON with a trailing newline."""
    return dumps(diff_schema(), sort_keys=True, indent=2) + "\n"
