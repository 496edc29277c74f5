"""Expectation checks for instruction-fidelity and workflow steps (SPEC 8.1, 8.3).

Equality is JSON equality the way serde_json's ``Value`` compares: booleans never equal numbers, and an
integer never equals a float.  Result paths are JSON Pointers (RFC 6901) into the ``tools/call`` result
object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...transport.messages import ToolOutcome

__all__ = ["check_expectation", "json_equal", "resolve_pointer"]

_MISSING = object()


def json_equal(a: Any, b: Any) -> bool:
    """serde_json ``Value`` equality: type-strict for bool/int/float, recursive for containers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, float) and isinstance(b, float):
        return a == b
    if isinstance(a, int | float) or isinstance(b, int | float):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b) and type(a) is type(b)


def resolve_pointer(document: Any, pointer: str) -> Any:
    """Resolve a JSON Pointer; returns a private sentinel (not None) when the path is absent.

    Args:
        document: the JSON value.
        pointer: ``""`` for the whole document, else ``/``-separated tokens with ``~1``/``~0`` escapes.
    """
    if pointer == "":
        return document
    node = document
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict):
            if token not in node:
                return _MISSING
            node = node[token]
        elif isinstance(node, list):
            canonical = token.isdigit() and (token == "0" or not token.startswith("0"))
            if not canonical or int(token) >= len(node):
                return _MISSING
            node = node[int(token)]
        else:
            return _MISSING
    return node


def check_expectation(outcome: ToolOutcome, expect: Mapping[str, Any]) -> str | None:
    """Judge one call against an expectation.

    Args:
        outcome: the classified call.
        expect: a validated expectation object.

    Returns:
        None when the call meets the expectation, else ``unexpected-outcome``, ``error-code-mismatch``,
        ``missing-field`` or ``value-mismatch``.
    """
    if expect["outcome"] == "error":
        if outcome.ok:
            return "unexpected-outcome"
        code = expect.get("error_code")
        return "error-code-mismatch" if code is not None and code != outcome.code else None
    if not outcome.ok:
        return "unexpected-outcome"
    result = outcome.result
    if not isinstance(result, dict):
        return "missing-field"
    if any(name not in result for name in expect.get("required_result_fields", ())):
        return "missing-field"
    if any(resolve_pointer(result, p) is _MISSING for p in expect.get("required_result_paths", ())):
        return "missing-field"
    for name, value in expect.get("equals", {}).items():
        if name not in result or not json_equal(result[name], value):
            return "value-mismatch"
    for path, value in expect.get("equals_paths", {}).items():
        found = resolve_pointer(result, path)
        if found is _MISSING or not json_equal(found, value):
            return "value-mismatch"
    return None
