"""Bounded tools over untrusted JSON Schemas and literals: conformance tests and a bounded measure.

A server's schemas are untrusted input: ``compile_validator`` never fetches a URI (an empty registry that
refuses every retrieval) and never raises; ``schema_test`` caches compiled validators per distinct schema
text (up to 256 schemas of at most 64 KiB).  ``measure`` sizes a JSON literal with a walk that stops at the
first bound passed, so a huge literal costs at most the bounds.  Nothing here prints schema content.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

__all__ = ["CACHED_SCHEMA_BYTES", "compile_validator", "conforms", "measure", "schema_test", "str_bytes"]


def str_bytes(s: str) -> int:
    """Bytes of ``s`` as a compact JSON string (quotes and escapes included, UTF-8)."""
    return len(json.dumps(s, ensure_ascii=False).encode("utf-8"))


def measure(value: Any, *, max_nodes: int, max_bytes: int) -> tuple[int, int] | str:
    """Nodes and compact-JSON bytes of ``value``, or the name of the first bound it passes.

    The walk is iterative and stops as soon as a bound is passed, so a huge literal costs at most the
    bounds to measure.

    Args:
        value: a parsed JSON value.
        max_nodes: node bound (every value is a node).
        max_bytes: bound on the compact JSON encoding.

    Returns:
        ``(nodes, bytes)`` within the bounds, else ``"nodes"`` or ``"bytes"``.
    """
    nodes = size = 0
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        nodes += 1
        if isinstance(item, dict | list):
            if len(item) > max_nodes - nodes:
                return "nodes"
            size += 2 + max(len(item) - 1, 0)
            if isinstance(item, dict):
                for key, sub in item.items():
                    size += str_bytes(str(key)) + 1
                    stack.append(sub)
            else:
                stack.extend(item)
        elif isinstance(item, str):
            if len(item) + 2 > max_bytes - size:
                return "bytes"
            size += str_bytes(item)
        else:
            size += len(json.dumps(item))
        if nodes > max_nodes:
            return "nodes"
        if size > max_bytes:
            return "bytes"
    return nodes, size


def _refuse_retrieval(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


def compile_validator(schema: Any, *, check_schema: bool = False) -> Callable[[Any], bool]:
    """Build a reusable conformance test for ``schema``: ``test(instance) -> bool``, never raising.

    External references are never fetched.  A schema the validator cannot use (malformed when
    ``check_schema``, unresolvable or runaway references) makes every instance non-conforming.  Build it
    once per schema and reuse it: constructing a validator costs far more than running it.
    """
    # loaded when the battery first needs it: jsonschema's import costs seconds (format grammars)
    from jsonschema import validators
    from referencing import Registry

    try:
        cls = validators.validator_for(schema, default=validators.Draft202012Validator)
        if check_schema:
            cls.check_schema(schema)
        validator = cls(schema, registry=Registry(retrieve=_refuse_retrieval))  # type: ignore[call-arg]
    except Exception:  # an unusable schema: nothing conforms
        return lambda instance: False

    def test(instance: Any) -> bool:
        try:
            return bool(validator.is_valid(instance))
        except Exception:  # any validator failure means "does not conform"
            return False

    return test


def conforms(instance: Any, schema: Any) -> bool:
    """True when ``instance`` validates against ``schema``; external references are never fetched.

    A schema the validator cannot use (unresolvable or runaway references) counts as non-conforming.
    Never raises.
    """
    return compile_validator(schema)(instance)


#: Schemas whose compact text is at most this long have their compiled validators cached (256 of them).
CACHED_SCHEMA_BYTES = 64 * 1024


@functools.lru_cache(maxsize=256)
def _cached_test(schema_text: str, check_schema: bool) -> Callable[[Any], bool]:
    return compile_validator(json.loads(schema_text), check_schema=check_schema)


def schema_test(schema: Any, *, check_schema: bool = False) -> Callable[[Any], bool]:
    """``compile_validator`` with a bounded cache: many tools share schemas, and compiling dominates.

    Only schemas up to ``CACHED_SCHEMA_BYTES`` of text are cached, so the cache stays small.
    """
    text = json.dumps(schema, sort_keys=True, ensure_ascii=False)
    if len(text) > CACHED_SCHEMA_BYTES:
        return compile_validator(schema, check_schema=check_schema)
    return _cached_test(text, check_schema)
