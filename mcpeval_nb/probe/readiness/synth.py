"""Input synthesis for the standard battery (SPEC 8.4): valid and invalid arguments from a schema.

``synthesize(schema)`` builds the smallest plausible arguments for a tool's ``inputSchema``: every name in
``required`` must be a declared property, and each value comes from the first applicable rule: local
``$ref`` -> ``const`` -> first ``enum`` member -> ``default`` -> first of ``examples`` -> first ``anyOf``
(else ``oneOf``) branch -> by ``type``.  Work is bounded by budgets, and a schema that would exceed one is
*unsynthesizable* (the battery never calls it):

* 64 KiB of compact JSON for the whole candidate and 4,096 JSON nodes (every value is a node);
* at most 256 items per array (``minItems``) and 16 KiB per string built from ``minLength``;
* 8 levels of schema traversal: the root is level 0, and each property, array item, ``anyOf``/``oneOf``
  branch and ``$ref`` hop goes one level deeper, so ``$ref`` cycles end at the depth budget.

A literal taken from the schema (``const``, ``enum``, ``default``, ``examples``) is measured against the
remaining budgets *before* it is copied, with a walk that stops as soon as a budget is passed, so a huge
default costs no more than the budget.  The finished candidate must validate against the full schema with
external references refused.  Nothing here prints or raises with schema content.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from ...limits import (
    SYNTH_MAX_ARRAY_ITEMS,
    SYNTH_MAX_DEPTH,
    SYNTH_MAX_ENCODED_BYTES,
    SYNTH_MAX_NODES,
    SYNTH_MAX_STRING_BYTES,
)
from .schema_tools import measure, schema_test, str_bytes

__all__ = ["Synthesis", "invalid_arguments", "synthesize"]

_FORMATS = {
    "date-time": "2026-01-01T00:00:00Z",
    "date": "2026-01-01",
    "uri": "https://example.com",
    "email": "user@example.com",
    "uuid": "00000000-0000-4000-8000-000000000000",
}


@dataclass(frozen=True)
class Synthesis:
    """The outcome of ``synthesize``: arguments, or the budget/rule that made the schema unsynthesizable.

    Attributes:
        arguments: the candidate arguments object, or None when unsynthesizable.
        reason: None on success, else a fixed label: ``not-object``, ``missing-property``, ``ref``,
            ``pattern``, ``type``, ``depth``, ``nodes``, ``bytes``, ``array-items``, ``string-length``,
            ``invalid`` (the candidate failed validation against the full schema).
        invented: how many string values are the rule's placeholder (``"mcpeval"``), not something the
            schema said: a server may rightly refuse those.
    """

    arguments: dict[str, Any] | None
    reason: str | None = None
    invented: int = 0

    @property
    def ok(self) -> bool:
        """True when arguments were synthesized."""
        return self.arguments is not None


class _Unsynthesizable(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Budget:
    """Remaining nodes and encoded bytes; charging past either raises."""

    def __init__(self) -> None:
        self.nodes = SYNTH_MAX_NODES
        self.bytes = SYNTH_MAX_ENCODED_BYTES

    def charge(self, nodes: int, size: int) -> None:
        self.nodes -= nodes
        self.bytes -= size
        if self.nodes < 0:
            raise _Unsynthesizable("nodes")
        if self.bytes < 0:
            raise _Unsynthesizable("bytes")


def _take_literal(value: Any, budget: _Budget) -> Any:
    measured = measure(value, max_nodes=budget.nodes, max_bytes=budget.bytes)
    if isinstance(measured, str):
        raise _Unsynthesizable(measured)
    budget.charge(*measured)
    return copy.deepcopy(value)


def _resolve(root: Any, ref: Any) -> Any:
    if not isinstance(ref, str) or not ref.startswith("#"):
        raise _Unsynthesizable("ref")
    target = root
    pointer = unquote(ref[1:])
    if pointer == "":
        return target
    if not pointer.startswith("/"):
        raise _Unsynthesizable("ref")
    for token in pointer[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and token in target:
            target = target[token]
        elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
            target = target[int(token)]
        else:
            raise _Unsynthesizable("ref")
    return target


#: ``hint(property name, string schema)``: a value for a free string (see ``readiness.hints``), or None.
StringHint = Callable[[str, dict[str, Any]], str | None]


class _Synth:
    def __init__(self, root: dict[str, Any], hint: StringHint | None = None) -> None:
        self.root = root
        self.budget = _Budget()
        self.hint = hint
        self.name = ""
        self.invented = 0

    def value(self, schema: Any, depth: int) -> Any:
        if depth > SYNTH_MAX_DEPTH:
            raise _Unsynthesizable("depth")
        if not isinstance(schema, dict):
            raise _Unsynthesizable("type")
        if "$ref" in schema:
            return self.value(_resolve(self.root, schema["$ref"]), depth + 1)
        if "const" in schema:
            return _take_literal(schema["const"], self.budget)
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            return _take_literal(enum[0], self.budget)
        if "default" in schema:
            return _take_literal(schema["default"], self.budget)
        examples = schema.get("examples")
        if isinstance(examples, list) and examples:
            return _take_literal(examples[0], self.budget)
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list) and branches:
                return self.value(branches[0], depth + 1)
        return self.by_type(schema, _type_of(schema), depth)

    def by_type(self, schema: dict[str, Any], kind: str | None, depth: int) -> Any:
        if kind == "string":
            return self.string(schema)
        if kind in ("integer", "number"):
            return self.number(schema)
        if kind == "boolean":
            self.budget.charge(1, 5)
            return False
        if kind == "null":
            self.budget.charge(1, 4)
            return None
        if kind == "array":
            return self.array(schema, depth)
        if kind == "object":
            return self.object(schema, depth)
        raise _Unsynthesizable("type")

    def string(self, schema: dict[str, Any]) -> str:
        fmt = schema.get("format")
        hinted = None if self.hint is None or (isinstance(fmt, str) and fmt in _FORMATS) \
            else self.hint(self.name, schema)
        if hinted is not None:
            text = hinted
        elif isinstance(fmt, str) and fmt in _FORMATS:
            text = _FORMATS[fmt]
        elif "pattern" in schema:
            raise _Unsynthesizable("pattern")
        else:
            self.invented += 1
            min_len = _count(schema.get("minLength"), 0)
            if min_len > SYNTH_MAX_STRING_BYTES:
                raise _Unsynthesizable("string-length")
            text = "mcpeval".ljust(min_len, "x")
            max_len = _count(schema.get("maxLength"), None)
            if max_len is not None:
                text = text[:max_len]
        self.budget.charge(1, len(text) + 2)
        return text

    def number(self, schema: dict[str, Any]) -> int | float:
        value: Any = 1
        if _is_num(schema.get("minimum")):
            value = schema["minimum"]
        elif _is_num(schema.get("exclusiveMinimum")):
            value = schema["exclusiveMinimum"] + 1
        if _is_num(schema.get("maximum")) and value > schema["maximum"]:
            value = schema["maximum"]
        if isinstance(value, float):
            if not math.isfinite(value):
                raise _Unsynthesizable("type")
            if value.is_integer() and abs(value) < 2**63:
                value = int(value)
        self.budget.charge(1, len(json.dumps(value)))
        return value  # type: ignore[no-any-return]

    def array(self, schema: dict[str, Any], depth: int) -> list[Any]:
        count = _count(schema.get("minItems"), 0)
        if count > SYNTH_MAX_ARRAY_ITEMS:
            raise _Unsynthesizable("array-items")
        self.budget.charge(1, 2 + max(count - 1, 0))
        if count == 0:
            return []
        before = (self.budget.nodes, self.budget.bytes)
        item = self.value(schema.get("items"), depth + 1)
        nodes, size = before[0] - self.budget.nodes, before[1] - self.budget.bytes
        self.budget.charge(nodes * (count - 1), size * (count - 1))
        return [item] + [copy.deepcopy(item) for _ in range(count - 1)]

    def object(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        required = schema.get("required", [])
        properties = schema.get("properties", {})
        if not isinstance(required, list) or not isinstance(properties, dict):
            raise _Unsynthesizable("not-object")
        self.budget.charge(1, 2 + max(len(required) - 1, 0))
        out: dict[str, Any] = {}
        for name in required:
            if not isinstance(name, str) or name not in properties:
                raise _Unsynthesizable("missing-property")
            if name in out:
                continue
            self.budget.charge(0, str_bytes(name) + 1)
            self.name = name
            out[name] = self.value(properties[name], depth + 1)
        return out


def _type_of(schema: dict[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null" if "null" in kind else None)
    if kind is None and ("properties" in schema or "required" in schema):
        return "object"
    return kind if isinstance(kind, str) else None


def _is_num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _count(value: Any, default: int | None) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return max(math.ceil(value), 0) if math.isfinite(value) else default


def synthesize(schema: Any, *, hint: StringHint | None = None) -> Synthesis:
    """Build arguments for a tool whose ``inputSchema`` is ``schema`` (SPEC 8.4, budgets above).

    Args:
        schema: the tool's raw ``inputSchema`` (never copied wholesale, never echoed).
        hint: mcpeval-nb's second attempt (``readiness.hints``): a value for each string without a
            ``format`` the rules know, before the rules' own (a pattern no longer makes it
            unsynthesizable when the hint matches it).  None is SPEC 8.4 exactly.

    Returns:
        A ``Synthesis``: ``arguments`` set on success, else ``reason`` names the rule or budget.
    """
    if not isinstance(schema, dict) or _type_of(schema) not in ("object", None):
        return Synthesis(None, "not-object")
    synth = _Synth(schema, hint)
    try:
        candidate = synth.object(schema, 0)
    except _Unsynthesizable as exc:
        return Synthesis(None, exc.reason)
    except RecursionError:
        return Synthesis(None, "depth")
    if not schema_test(schema)(candidate):
        return Synthesis(None, "invalid")
    return Synthesis(candidate, invented=synth.invented)


def invalid_arguments(schema: Any) -> dict[str, Any] | None:
    """Arguments the schema should refuse, for the error-honesty probe (SPEC 8.4), or None.

    Args:
        schema: the tool's raw ``inputSchema``.

    Returns:
        ``{}`` when ``required`` is non-empty; else ``{name: 12345}`` for the first property (by name)
        whose ``type`` is the string ``"string"``, or ``{name: "mcpeval"}`` for another string type; else
        ``{"mcpeval_unknown": 1}`` when ``additionalProperties`` is false; else None (tool not judged).
    """
    if not isinstance(schema, dict):
        return None
    required = schema.get("required")
    if isinstance(required, list) and required:
        return {}
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name in sorted(k for k in properties if isinstance(k, str)):
            prop = properties[name]
            kind = prop.get("type") if isinstance(prop, dict) else None
            if isinstance(kind, str):
                return {name: 12345} if kind == "string" else {name: "mcpeval"}
    if schema.get("additionalProperties") is False:
        return {"mcpeval_unknown": 1}
    return None
