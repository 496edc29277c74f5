"""The kind-specific manifest rules of SPEC 8.1 and the expectation rules they share.

Each rule takes the case's JSON path and its fields and returns ``(json_path, message)`` for the first
broken rule, or None.  The kind table (``kinds.table``) names the rule each kind has; the generic pass in
``probe.rules`` runs it after the kind's access and range checks.  Messages never quote a value from the
manifest.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ...privacy.grammar import valid_identifier

__all__ = [
    "Found",
    "Rule",
    "completion_rule",
    "expectation_error",
    "fidelity_rule",
    "identifier_rule",
    "negotiation_rule",
    "subscription_rule",
    "token_cost_rule",
    "valid_result_path",
    "workflow_rule",
]

Found = tuple[list[str | int], str] | None
#: A kind's extra rule: (the case's JSON path, the case's fields) -> the first broken rule or None.
Rule = Callable[[list[str | int], dict[str, Any]], Found]

_PATH_RE = re.compile(r"/(?:[A-Za-z0-9/_.:-]|~[01])*")
_VERSION_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def valid_result_path(value: Any) -> bool:
    """True for an expectation result path: a JSON Pointer of ``[A-Za-z0-9/_.:-]`` and escapes, ≤512 bytes."""
    return (isinstance(value, str) and len(value.encode("utf-8")) <= 512
            and _PATH_RE.fullmatch(value) is not None)


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float) or valid_identifier(value)


def workflow_rule(base: list[str | int], case: dict[str, Any]) -> Found:
    """Between 2 and 32 steps, each with a valid expectation."""
    steps = case["steps"]
    if not 2 <= len(steps) <= 32:
        return [*base, "steps"], "steps must hold between 2 and 32 steps"
    for i, step in enumerate(steps):
        found = expectation_error([*base, "steps", i, "expect"], step["expect"])
        if found is not None:
            return found
    return None


def token_cost_rule(base: list[str | int], case: dict[str, Any]) -> Found:
    """``max_tool_tokens`` (when given) must not exceed ``max_total_tokens``."""
    per_tool = case.get("max_tool_tokens")
    if per_tool is not None and per_tool > case["max_total_tokens"]:
        return [*base, "max_tool_tokens"], "max_tool_tokens must not exceed max_total_tokens"
    return None


def identifier_rule(name: str, message: str) -> Rule:
    """A rule requiring field ``name`` to be an identifier, failing with ``message``."""
    def rule(base: list[str | int], case: dict[str, Any]) -> Found:
        return None if valid_identifier(case[name]) else ([*base, name], message)
    return rule


def negotiation_rule(base: list[str | int], case: dict[str, Any]) -> Found:
    """``bogus_version`` is a YYYY-MM-DD version other than the one the client speaks."""
    value = case["bogus_version"]
    if not (_VERSION_RE.fullmatch(value) and value != "2025-06-18"):
        return [*base, "bogus_version"], "bogus_version must be a YYYY-MM-DD version other than 2025-06-18"
    return None


def _uri_ok(value: str) -> bool:
    return 1 <= len(value.encode("utf-8")) <= 512


def subscription_rule(base: list[str | int], case: dict[str, Any]) -> Found:
    """``uri`` is 1 to 512 bytes."""
    return None if _uri_ok(case["uri"]) else ([*base, "uri"], "uri must be 1 to 512 bytes")


def completion_rule(base: list[str | int], case: dict[str, Any]) -> Found:
    """``ref_uri`` length, the argument name for its reference type, an identifier argument value."""
    if not _uri_ok(case["ref_uri"]):
        return [*base, "ref_uri"], "ref_uri must be 1 to 512 bytes"
    name = case["argument_name"]
    if not (valid_identifier(name) if case["ref_type"] == "ref/prompt" else _uri_ok(name)):
        return [*base, "argument_name"], "completion argument name is invalid"
    if not valid_identifier(case["argument_value"]):
        return [*base, "argument_value"], "completion argument value is invalid"
    return None


def fidelity_rule(base: list[str | int], case: dict[str, Any]) -> Found:
    """The case's expectation is valid."""
    return expectation_error([*base, "expect"], case["expect"])


def _names_error(path: list[str | int], key: str, names: list[Any], valid: Callable[[Any], bool],
                 what: str) -> Found:
    if not all(valid(n) for n in names):
        return [*path, key], f"expected result {what} is invalid"
    if len(set(names)) != len(names):
        return [*path, key], f"expected result {what}s must be unique"
    return None


def _equals_error(path: list[str | int], key: str, equals: dict[str, Any], valid: Callable[[Any], bool],
                  what: str) -> Found:
    if not all(valid(k) for k in equals):
        return [*path, key], f"expected result {what} is invalid"
    if not all(_scalar(v) for v in equals.values()):
        return [*path, key], "expected equality value is invalid"
    return None


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
    return (_names_error(path, "required_result_fields", fields, valid_identifier, "field")
            or _equals_error(path, "equals", equals, valid_identifier, "field")
            or _names_error(path, "required_result_paths", paths, valid_result_path, "path")
            or _equals_error(path, "equals_paths", equals_paths, valid_result_path, "path"))
