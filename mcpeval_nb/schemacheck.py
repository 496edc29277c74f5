"""A small, exact JSON Schema (draft 2020-12) checker for the package's own published schemas.

The manifest and budgets schemas are checked before anything else a command does, so the check must
not cost seconds: ``jsonschema`` loads every format grammar it can find at import time (with the
format extras a Jupyter install brings, about two seconds).  This module implements the keywords our
schemas use, with ``jsonschema``'s semantics and error attributes (``validator``, ``absolute_path``,
``validator_value``, ``instance``), and refuses a schema with any other keyword, so a schema can never
use a rule this checker would silently skip.  ``tests/test_schemacheck.py`` compares it with
``jsonschema`` on generated documents.  Server-supplied schemas (output schemas, tool input schemas)
are never checked here: they may use anything, and go to ``jsonschema``.
"""

from __future__ import annotations

import difflib
import functools
import importlib.resources
import json
import re
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["KEYWORDS", "SchemaChecker", "Violation", "packaged_checker", "packaged_schema", "packaged_text",
           "unknown_field_words"]

#: Keywords that constrain (each implemented below).
_ASSERTIONS = frozenset({
    "$ref", "type", "const", "enum", "required", "properties", "additionalProperties", "if", "then",
    "else", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "pattern", "minLength",
    "maxLength", "items", "minItems", "maxItems", "uniqueItems", "propertyNames", "oneOf", "anyOf",
    "allOf", "not", "minProperties", "maxProperties"})
#: Every keyword a checked schema may use: the assertions plus annotations that constrain nothing.
KEYWORDS = _ASSERTIONS | {"$schema", "$id", "$defs", "$comment", "title", "description", "default",
                          "examples"}
_SUBSCHEMA_MAPS = ("properties", "$defs")
_SUBSCHEMA_LISTS = ("oneOf", "anyOf", "allOf")
_SUBSCHEMAS = ("additionalProperties", "items", "propertyNames", "not", "if", "then", "else")


@dataclass(frozen=True)
class Violation:
    """One failed assertion, with the attributes ``jsonschema.ValidationError`` has.

    Attributes:
        validator: the keyword that failed (None for a ``false`` schema).
        path: where in the instance (keys and indexes), as a tuple.
        validator_value: the keyword's value in the schema.
        instance: the part of the document that failed (never printed by the package).
        allowed: for ``additionalProperties``, the fields the schema declares at ``path``.
    """

    validator: str | None
    path: tuple[str | int, ...]
    validator_value: Any
    instance: Any
    allowed: tuple[str, ...] = ()

    @property
    def absolute_path(self) -> tuple[str | int, ...]:
        """``path`` under ``jsonschema``'s name."""
        return self.path


def unknown_field_words(v: Violation, names: Collection[str]) -> str:
    """Name what an ``additionalProperties`` violation found without quoting the file: a field the
    schema defines elsewhere (``names``) by its name, any other by the nearest allowed field.

    Args:
        v: the violation (``v.allowed`` holds the fields allowed at its path).
        names: every field name the schema defines (safe to print: they are the schema's, not the file's).

    Returns:
        ``"`tool` is not a field here"`` or ``"unknown field (did you mean `timeout_ms`?)"``, then the
        fields allowed there.
    """
    extras = [k for k in v.instance if k not in v.allowed] if isinstance(v.instance, dict) else []
    allowed = f"; allowed here: {', '.join(v.allowed)}" if v.allowed else ""
    named = [k for k in extras if k in names]
    if named:
        return f"`{named[0]}` is not a field here{allowed}"
    close = difflib.get_close_matches(str(extras[0]), v.allowed, n=1) if extras else []
    guess = f" (did you mean `{close[0]}`?)" if close else ""
    return f"unknown field{guess}{allowed}"


def _is_type(value: Any, name: str) -> bool:
    if name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    kinds = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
    return isinstance(value, kinds[name])


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and bool(a == b)


def _check_keywords(schema: Any, where: str) -> None:
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise ValueError(f"schema at {where} is not an object or a boolean")
    unknown = sorted(set(schema) - KEYWORDS)
    if unknown:
        raise ValueError(f"schema at {where} uses unsupported keywords: {', '.join(unknown)}")
    for key in _SUBSCHEMA_MAPS:
        for name, sub in schema.get(key, {}).items():
            _check_keywords(sub, f"{where}/{key}/{name}")
    for key in _SUBSCHEMA_LISTS:
        for i, sub in enumerate(schema.get(key, ())):
            _check_keywords(sub, f"{where}/{key}/{i}")
    for key in _SUBSCHEMAS:
        if key in schema:
            _check_keywords(schema[key], f"{where}/{key}")
    ref = schema.get("$ref")
    if ref is not None and not (isinstance(ref, str) and ref.startswith("#/")):
        raise ValueError(f"schema at {where} has a non-local $ref")


class SchemaChecker:
    """Checks documents against one schema that uses only ``KEYWORDS`` (local ``$ref`` only).

    Args:
        schema: the schema (a draft 2020-12 object).

    Raises:
        ValueError: the schema uses a keyword outside ``KEYWORDS`` or a non-local reference.
    """

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = dict(schema)
        _check_keywords(self.schema, "#")

    def iter_errors(self, instance: Any) -> Iterator[Violation]:
        """Every violation, in ``jsonschema``'s order (schema keyword order, depth first)."""
        return self._errors(self.schema, instance, ())

    def is_valid(self, instance: Any) -> bool:
        """True when there is no violation."""
        return next(self.iter_errors(instance), None) is None

    def _resolve(self, ref: str) -> Any:
        node: Any = self.schema
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def _valid(self, schema: Any, instance: Any) -> bool:
        return next(self._errors(schema, instance, ()), None) is None

    def _errors(self, schema: Any, instance: Any, path: tuple[str | int, ...]) -> Iterator[Violation]:
        if schema is True:
            return
        if schema is False:
            yield Violation(None, path, False, instance)
            return
        for key, value in schema.items():
            if key in _ASSERTIONS:
                yield from self._keyword(key, value, schema, instance, path)

    def _keyword(self, key: str, value: Any, schema: dict[str, Any], instance: Any,
                 path: tuple[str | int, ...]) -> Iterator[Violation]:
        fail = Violation(key, path, value, instance)
        if key == "$ref":
            yield from self._errors(self._resolve(value), instance, path)
        elif key in ("if", "then", "else"):
            if key == "if":
                branch = "then" if self._valid(value, instance) else "else"
                if branch in schema:
                    yield from self._errors(schema[branch], instance, path)
        elif key in ("allOf", "anyOf", "oneOf", "not"):
            yield from self._combinator(key, value, instance, path, fail)
        elif isinstance(instance, dict):
            yield from self._object(key, value, schema, instance, path, fail)
        elif isinstance(instance, list):
            yield from self._array(key, value, instance, path, fail)
        if _scalar_fails(key, value, instance):
            yield fail

    def _combinator(self, key: str, value: Any, instance: Any, path: tuple[str | int, ...],
                    fail: Violation) -> Iterator[Violation]:
        if key == "allOf":
            for sub in value:
                yield from self._errors(sub, instance, path)
        elif key == "not":
            if self._valid(value, instance):
                yield fail
        else:
            matches = sum(self._valid(sub, instance) for sub in value)
            if matches == 0 or (key == "oneOf" and matches > 1):
                yield fail

    def _object(self, key: str, value: Any, schema: dict[str, Any], instance: dict[str, Any],
                path: tuple[str | int, ...], fail: Violation) -> Iterator[Violation]:
        if key == "required":
            yield from (fail for name in value if name not in instance)
        elif key == "properties":
            for name, sub in value.items():
                if name in instance:
                    yield from self._errors(sub, instance[name], (*path, name))
        elif key == "additionalProperties":
            extras = [k for k in instance if k not in schema.get("properties", {})]
            if isinstance(value, dict):
                for name in extras:
                    yield from self._errors(value, instance[name], (*path, name))
            elif value is False and extras:
                yield Violation(key, path, value, instance, tuple(schema.get("properties", {})))
        elif key == "propertyNames":
            for name in instance:
                yield from self._errors(value, name, path)
        elif (key == "minProperties" and len(instance) < value) or (
                key == "maxProperties" and len(instance) > value):
            yield fail

    def _array(self, key: str, value: Any, instance: list[Any], path: tuple[str | int, ...],
               fail: Violation) -> Iterator[Violation]:
        if key == "items":
            for index, item in enumerate(instance):
                yield from self._errors(value, item, (*path, index))
        elif _array_fails(key, value, instance):
            yield fail


_NUMBER_TESTS: dict[str, Callable[[Any, Any], bool]] = {
    "minimum": lambda v, bound: bool(v < bound), "maximum": lambda v, bound: bool(v > bound),
    "exclusiveMinimum": lambda v, bound: bool(v <= bound),
    "exclusiveMaximum": lambda v, bound: bool(v >= bound),
}
_STRING_TESTS: dict[str, Callable[[str, Any], bool]] = {
    "pattern": lambda v, pattern: re.search(pattern, v) is None,
    "minLength": lambda v, n: len(v) < n, "maxLength": lambda v, n: len(v) > n,
}


def _scalar_fails(key: str, value: Any, instance: Any) -> bool:
    """True when ``type``, ``const``, ``enum`` or a number or string keyword refuses ``instance``."""
    if key == "type":
        return not any(_is_type(instance, name) for name in (value if isinstance(value, list) else [value]))
    if key == "const":
        return not _equal(instance, value)
    if key == "enum":
        return not any(_equal(instance, each) for each in value)
    if key in _NUMBER_TESTS:
        return _is_type(instance, "number") and _NUMBER_TESTS[key](instance, value)
    if key in _STRING_TESTS:
        return isinstance(instance, str) and _STRING_TESTS[key](instance, value)
    return False


def _array_fails(key: str, value: Any, instance: list[Any]) -> bool:
    if key == "minItems":
        return bool(len(instance) < value)
    if key == "maxItems":
        return bool(len(instance) > value)
    if key == "uniqueItems":
        return bool(value) and any(_equal(a, b) for i, a in enumerate(instance) for b in instance[i + 1:])
    return False


@functools.cache
def packaged_text(name: str) -> str:
    """The text of ``mcpeval_nb/schemas/<name>.schema.json``, exactly as shipped (what ``mcpeval-nb
    schema <name>`` prints)."""
    return (importlib.resources.files("mcpeval_nb") / "schemas" / f"{name}.schema.json").read_text("utf-8")


def packaged_schema(name: str) -> dict[str, Any]:
    """A shipped schema as a fresh dict."""
    value = json.loads(packaged_text(name))
    assert isinstance(value, dict)
    return value


@functools.cache
def packaged_checker(name: str) -> SchemaChecker:
    """The (cached) checker of a shipped schema."""
    return SchemaChecker(packaged_schema(name))
