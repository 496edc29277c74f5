"""The semantic manifest rules of SPEC 8.1, in SPEC's order, with SPEC's messages.

Each check returns ``(json_path, message)`` for the first broken rule, or None.  Messages never quote a
value from the manifest; paths name only schema-defined keys, indexes and identifier keys.
"""

from __future__ import annotations

import re
from typing import Any

import jsonschema

from ..privacy.grammar import valid_identifier, valid_tool

__all__ = ["SCHEMA_KEYS", "case_rule_error", "structural_message", "top_rule_error", "valid_result_path"]

Found = tuple[list[str | int], str] | None

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
_PATH_RE = re.compile(r"/(?:[A-Za-z0-9/_.:-]|~[01])*")
_VERSION_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_ARG_FIELDS = ("arguments", "failure_arguments", "recovery_arguments", "validation_arguments",
               "trigger_arguments")
_TOOL_FIELDS = ("tool", "failure_tool", "recovery_tool", "validation_tool", "trigger_tool")
_READ_ONLY_KINDS = frozenset({
    "workflow", "discovery-cost", "token-cost", "latency-budget", "pagination", "payload-bounds",
    "surface-listing", "output-schema", "cancellation", "protocol-negotiation", "sampling", "elicitation",
    "resource-subscription", "completion"})
#: kind -> ((field, low, high), ...) in the order they are checked.
_RANGES: dict[str, tuple[tuple[str, int, int], ...]] = {
    "workflow": (("repetitions", 1, 20),),
    "error-honesty": (("max_attempts", 2, 20),),
    "discovery-cost": (("max_tools", 1, 10000), ("max_schema_bytes", 1, 10000000)),
    "token-cost": (("max_total_tokens", 1, 1000000), ("max_tool_tokens", 1, 100000)),
    "degradation-over-n": (("max_attempts", 2, 100),),
    "latency-budget": (("attempts", 2, 20), ("max_latency_ms", 1, 600000)),
    "pagination": (("max_pages", 1, 1000),),
    "payload-bounds": (("size_bytes", 1, 16000000),),
    "surface-listing": (("max_pages", 1, 1000),),
    "cancellation": (("grace_seconds", 1, 60),),
    "sampling": (("max_requests", 1, 10),),
    "elicitation": (("max_requests", 1, 10),),
    "resource-subscription": (("max_wait_seconds", 1, 60),),
    "completion": (("max_values", 1, 100),),
}
#: Schema validators whose failures the semantic pass words (ranges, grammars, uniqueness).
_SEMANTIC_VALIDATORS = frozenset({
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "pattern", "const", "minItems",
    "maxItems", "uniqueItems", "minLength", "maxLength", "propertyNames", "not", "oneOf"})


def _u64(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def valid_result_path(value: Any) -> bool:
    """True for an expectation result path: a JSON Pointer of ``[A-Za-z0-9/_.:-]`` and escapes, ≤512 bytes."""
    return (isinstance(value, str) and len(value.encode("utf-8")) <= 512
            and _PATH_RE.fullmatch(value) is not None)


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float) or valid_identifier(value)


def _field_name(path: list[str | int]) -> str:
    name = path[-1] if path else None
    return f"`{name}`" if isinstance(name, str) and name in SCHEMA_KEYS else "field"


def structural_message(error: jsonschema.ValidationError) -> str | None:
    """Word a structural schema error, or None for errors the semantic pass words.

    Args:
        error: one jsonschema error (its own message quotes values and is never used).

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
        # the unknown key itself is manifest content: never named
        return "unknown field (every object in a manifest refuses fields the schema does not declare)"
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
    for key in _TOOL_FIELDS:
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
    kind = case["probe"]
    if kind in _READ_ONLY_KINDS and case["access"] != "read_only":
        return [*base, "access"], f"{kind} probes must be read_only"
    for name, low, high in _RANGES.get(kind, ()):
        value = case.get(name)
        if value is None and name == "max_tool_tokens":
            continue
        if not (isinstance(value, int) and not isinstance(value, bool) and low <= value <= high):
            return [*base, name], f"{name} must be between {low} and {high}"
    extra = _EXTRA_RULES.get(kind)
    return extra(base, case) if extra is not None else None


def _workflow(base: list[str | int], case: dict[str, Any]) -> Found:
    steps = case["steps"]
    if not 2 <= len(steps) <= 32:
        return [*base, "steps"], "steps must hold between 2 and 32 steps"
    for i, step in enumerate(steps):
        found = expectation_error([*base, "steps", i, "expect"], step["expect"])
        if found is not None:
            return found
    return None


def _token_cost(base: list[str | int], case: dict[str, Any]) -> Found:
    per_tool = case.get("max_tool_tokens")
    if per_tool is not None and per_tool > case["max_total_tokens"]:
        return [*base, "max_tool_tokens"], "max_tool_tokens must not exceed max_total_tokens"
    return None


def _identifier_field(name: str, message: str) -> Any:
    def rule(base: list[str | int], case: dict[str, Any]) -> Found:
        return None if valid_identifier(case[name]) else ([*base, name], message)
    return rule


def _negotiation(base: list[str | int], case: dict[str, Any]) -> Found:
    value = case["bogus_version"]
    if not (_VERSION_RE.fullmatch(value) and value != "2025-06-18"):
        return [*base, "bogus_version"], "bogus_version must be a YYYY-MM-DD version other than 2025-06-18"
    return None


def _uri_ok(value: str) -> bool:
    return 1 <= len(value.encode("utf-8")) <= 512


def _subscription(base: list[str | int], case: dict[str, Any]) -> Found:
    return None if _uri_ok(case["uri"]) else ([*base, "uri"], "uri must be 1 to 512 bytes")


def _completion(base: list[str | int], case: dict[str, Any]) -> Found:
    if not _uri_ok(case["ref_uri"]):
        return [*base, "ref_uri"], "ref_uri must be 1 to 512 bytes"
    name = case["argument_name"]
    if not (valid_identifier(name) if case["ref_type"] == "ref/prompt" else _uri_ok(name)):
        return [*base, "argument_name"], "completion argument name is invalid"
    if not valid_identifier(case["argument_value"]):
        return [*base, "argument_value"], "completion argument value is invalid"
    return None


def _fidelity(base: list[str | int], case: dict[str, Any]) -> Found:
    return expectation_error([*base, "expect"], case["expect"])


_EXTRA_RULES: dict[str, Any] = {
    "workflow": _workflow,
    "token-cost": _token_cost,
    "instruction-fidelity": _fidelity,
    "payload-bounds": _identifier_field("field", "payload field is invalid"),
    "cancellation": _identifier_field("reason", "cancellation reason is invalid"),
    "protocol-negotiation": _negotiation,
    "resource-subscription": _subscription,
    "completion": _completion,
}


def expectation_error(path: list[str | int], expect: dict[str, Any]) -> Found:
    """The first broken expectation rule (SPEC 8.1 "Expectation object"), or None."""
    fields = expect.get("required_result_fields", [])
    equals = expect.get("equals", {})
    paths = expect.get("required_result_paths", [])
    equals_paths = expect.get("equals_paths", {})
    if expect["outcome"] == "ok" and "error_code" in expect:
        return [*path, "error_code"], "ok expectation must not declare error_code"
    if expect["outcome"] == "error" and (fields or equals or paths or equals_paths):
        return path, "error expectation must not declare result fields"
    if not all(valid_identifier(f) for f in fields):
        return [*path, "required_result_fields"], "expected result field is invalid"
    if len(set(fields)) != len(fields):
        return [*path, "required_result_fields"], "expected result fields must be unique"
    if not all(valid_identifier(k) for k in equals):
        return [*path, "equals"], "expected result field is invalid"
    if not all(_scalar(v) for v in equals.values()):
        return [*path, "equals"], "expected equality value is invalid"
    if not all(valid_result_path(p) for p in paths):
        return [*path, "required_result_paths"], "expected result path is invalid"
    if len(set(paths)) != len(paths):
        return [*path, "required_result_paths"], "expected result paths must be unique"
    if not all(valid_result_path(p) for p in equals_paths):
        return [*path, "equals_paths"], "expected result path is invalid"
    if not all(_scalar(v) for v in equals_paths.values()):
        return [*path, "equals_paths"], "expected equality value is invalid"
    return None
