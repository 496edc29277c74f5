"""The semantic manifest rules of SPEC 8.1, in SPEC's order, with SPEC's messages.

The generic rules live here; what depends on the kind (read-only access, ranges, the kind's own rule)
comes from the kind table (``kinds.table``).  Each check returns ``(json_path, message)`` for the first
broken rule, or None.  Messages never quote a value from the manifest; paths name only schema-defined
keys, indexes and identifier keys.
"""

from __future__ import annotations

import re
from typing import Any

from ..privacy.grammar import valid_identifier, valid_tool
from ..schemacheck import Violation, unknown_field_words
from .cases import TOOL_FIELDS
from .kinds.rules import Found
from .kinds.table import KIND_TABLE

__all__ = ["SCHEMA_KEYS", "case_rule_error", "structural_message", "top_rule_error"]

#: Every key the manifest schema defines: the only keys a message or a path may name.
SCHEMA_KEYS = frozenset({
    "version", "timeout_ms", "sandboxes", "probes", "description", "id", "probe", "access", "sandbox", "tool",
    "arguments", "repetitions", "steps", "expect", "max_attempts", "expect_retryable", "failure_tool",
    "failure_arguments", "recovery_tool", "recovery_arguments", "validation_tool", "validation_arguments",
    "max_tools", "max_schema_bytes", "max_total_tokens", "max_tool_tokens", "attempts", "max_latency_ms",
    "max_pages", "field", "size_bytes", "expect_handled", "grace_seconds", "reason", "bogus_version",
    "max_requests", "respond", "uri", "trigger_tool", "trigger_arguments", "max_wait_seconds", "ref_uri",
    "ref_type", "argument_name", "argument_value", "max_values", "outcome", "required_result_fields",
    "equals", "required_result_paths", "equals_paths", "error_code"})
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_ARG_FIELDS = ("arguments", "failure_arguments", "recovery_arguments", "validation_arguments",
               "trigger_arguments")
#: Schema validators whose failures the semantic pass words (ranges, grammars, uniqueness).
_SEMANTIC_VALIDATORS = frozenset({
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "pattern", "const", "minItems",
    "maxItems", "uniqueItems", "minLength", "maxLength", "propertyNames", "not", "oneOf"})


def _u64(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _field_name(path: list[str | int]) -> str:
    name = path[-1] if path else None
    return f"`{name}`" if isinstance(name, str) and name in SCHEMA_KEYS else "field"


def structural_message(error: Violation) -> str | None:
    """Word a structural schema error, or None for errors the semantic pass words.

    Args:
        error: one schema violation (its instance is never quoted).

    Returns:
        A message naming the rule (and schema-defined field names), or None.
    """
    path = list(error.absolute_path)
    v = error.validator
    if v in _SEMANTIC_VALIDATORS:
        return None
    if v == "type":
        if path and path[-1] in _ARG_FIELDS:
            return None
        return f"{_field_name(path)} has the wrong JSON type"
    if v == "additionalProperties":
        # a key the schema does not define is manifest content: never named, the nearest field is
        return unknown_field_words(error, SCHEMA_KEYS)
    if v == "required":
        wanted = error.validator_value if isinstance(error.validator_value, list) else []
        have = error.instance if isinstance(error.instance, dict) else {}
        missing = [k for k in wanted if k not in have]
        return f"missing field `{missing[0]}`" if missing else "missing field"
    if v == "enum":
        if path and path[-1] == "probe":
            return "unknown probe kind"
        return f"{_field_name(path)} has an unknown value"
    return f"{_field_name(path)} is not acceptable ({v})"


def top_rule_error(doc: dict[str, Any]) -> Found:
    """The first broken top-level rule: version, timeout_ms, sandboxes, non-empty probes."""
    version = doc.get("version")
    if not (_u64(version) and version == 1):
        return ["version"], "manifest version must be 1"
    timeout = doc.get("timeout_ms")
    if timeout is not None and not (_u64(timeout) and 100 <= timeout <= 600000):
        return ["timeout_ms"], "timeout_ms must be between 100 and 600000"
    for name, sandbox in doc.get("sandboxes", {}).items():
        if not valid_identifier(name):
            return ["sandboxes"], "sandbox name is invalid"
        text = sandbox.get("description")
        if not isinstance(text, str) or len(text) > 240 or _CONTROL_RE.search(text):
            return (["sandboxes", name, "description"],
                    "sandbox description must be at most 240 characters without control characters")
    if not doc.get("probes"):
        return ["probes"], "manifest must declare at least one probe"
    return None


def case_rule_error(doc: dict[str, Any], index: int, case: dict[str, Any]) -> Found:
    """The first broken rule of case ``index``: id, uniqueness, tools, arguments, access, kind rules."""
    base: list[str | int] = ["probes", index]
    if not valid_identifier(case["id"]):
        return [*base, "id"], "probe case id is invalid"
    if any(other.get("id") == case["id"] for other in doc["probes"][:index]):
        return [*base, "id"], "probe case ids must be unique"
    for key in TOOL_FIELDS:
        if key in case and not valid_tool(case[key]):
            return [*base, key], "probe tool is invalid"
    for i, step in enumerate(case.get("steps", ())):
        if not valid_tool(step["tool"]):
            return [*base, "steps", i, "tool"], "probe tool is invalid"
    for key in _ARG_FIELDS:
        if key in case and not isinstance(case[key], dict):
            return [*base, key], "probe arguments must be an object"
    for i, step in enumerate(case.get("steps", ())):
        if not isinstance(step["arguments"], dict):
            return [*base, "steps", i, "arguments"], "probe arguments must be an object"
    found = _access_rule(doc, base, case)
    return found if found is not None else _kind_rule(base, case)


def _access_rule(doc: dict[str, Any], base: list[str | int], case: dict[str, Any]) -> Found:
    sandbox = case.get("sandbox")
    if case["access"] == "read_only" and sandbox is not None:
        return [*base, "sandbox"], "read-only probe must not name a sandbox"
    if case["access"] == "mutating":
        if sandbox is None:
            return [*base, "access"], "mutating probe must name a sandbox"
        if not valid_identifier(sandbox) or sandbox not in doc.get("sandboxes", {}):
            return [*base, "sandbox"], "mutating probe sandbox is not declared"
    return None


def _kind_rule(base: list[str | int], case: dict[str, Any]) -> Found:
    spec = KIND_TABLE[case["probe"]]
    if spec.read_only_only and case["access"] != "read_only":
        return [*base, "access"], f"{spec.name} probes must be read_only"
    for r in spec.ranges:
        value = case.get(r.field)
        if value is None and not r.required:
            continue
        if not (isinstance(value, int) and not isinstance(value, bool) and r.low <= value <= r.high):
            return [*base, r.field], f"{r.field} must be between {r.low} and {r.high}"
    return spec.rule(base, case) if spec.rule is not None else None
