"""The 2026-07-28 request headers on Streamable HTTP (the revision's "Request Metadata" section).

Every modern POST carries ``MCP-Protocol-Version`` and ``Mcp-Method``; ``tools/call`` and
``prompts/get`` carry ``Mcp-Name`` from ``params.name``, ``resources/read`` from ``params.uri``, and
the tasks extension's ``tasks/get|update|cancel`` from ``params.taskId``.  A tool may mark input
properties with ``x-mcp-header: <Name>``: the client mirrors each such argument into
``Mcp-Param-<Name>``.

Values are encoded by the revision's rule: plain printable ASCII without surrounding whitespace as is,
anything else (and anything that looks like the sentinel) as ``=?base64?<UTF-8 base64>?=``.  An
annotation that breaks the revision's constraints (not a token, not on a string/integer/boolean
property, not reachable through ``properties`` alone, a case-insensitive duplicate) makes the tool's
header declaration invalid: ``param_headers`` returns None and the client sends no ``Mcp-Param-*``
header for that tool.  Header values are argument values: they exist only in memory, on the wire.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["PARAM_PREFIX", "ParamHeaders", "encode_value", "param_headers", "request_headers"]

PARAM_PREFIX = "Mcp-Param-"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_PLAIN = re.compile(r"[\x20-\x7e]*")
_SENTINEL = re.compile(r"=\?base64\?.*\?=", re.DOTALL)
_NAME_FIELDS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
                "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}
_PRIMITIVES = frozenset({"string", "integer", "boolean"})
_MAX_SAFE = 2 ** 53 - 1
_SINGLE = frozenset({"items", "contains", "additionalProperties", "propertyNames", "not", "if", "then",
                     "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema"})
_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAPS = frozenset({"patternProperties", "dependentSchemas", "$defs", "definitions"})

#: A tool's header declaration: (property path, header name) pairs.
ParamHeaders = tuple[tuple[tuple[str, ...], str], ...]


def encode_value(value: str) -> str:
    """Encode one header value (``Mcp-Name`` or ``Mcp-Param-*``) by the revision's rule.

    Args:
        value: the text to carry.

    Returns:
        The value itself when it is plain printable ASCII without surrounding whitespace and does not
        look like the base64 sentinel; else ``=?base64?<base64 of its UTF-8>?=``.
    """
    if _PLAIN.fullmatch(value) and value == value.strip(" \t") and not _SENTINEL.fullmatch(value):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def _positions(schema: Any) -> Iterator[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    """Every schema position with its pure-``properties`` path (None once another keyword was crossed)."""
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield path, node
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                stack.extend(((*path, name) if path is not None else None, sub)
                             for name, sub in value.items())
            elif key in _SINGLE:
                stack.append((None, value))
            elif key in _LISTS and isinstance(value, list):
                stack.extend((None, sub) for sub in value)
            elif key in _MAPS and isinstance(value, dict):
                stack.extend((None, sub) for sub in value.values())


def param_headers(input_schema: Any) -> ParamHeaders | None:
    """The ``Mcp-Param-*`` declaration of a tool's input schema.

    Args:
        input_schema: the listed ``inputSchema`` (any JSON value).

    Returns:
        The (path, name) pairs, empty when nothing is annotated; None when an annotation breaks the
        revision's constraints (the client then sends no parameter header for the tool).
    """
    found: list[tuple[tuple[str, ...], str]] = []
    seen: set[str] = set()
    for path, node in _positions(input_schema):
        if "x-mcp-header" not in node:
            continue
        name = node["x-mcp-header"]
        if (not path or not isinstance(name, str) or not _TOKEN.fullmatch(name)
                or node.get("type") not in _PRIMITIVES or name.lower() in seen):
            return None
        seen.add(name.lower())
        found.append((path, name))
    return tuple(sorted(found))


def _rendered(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) <= _MAX_SAFE:
        return str(value)
    return value if isinstance(value, str) else None


def _at(arguments: Any, path: tuple[str, ...]) -> Any:
    node = arguments
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def request_headers(message: Mapping[str, Any], *, version: str,
                    params: ParamHeaders | None = None) -> dict[str, str]:
    """The modern headers of one outgoing request.

    Args:
        message: the JSON-RPC request (method and params as sent).
        version: the protocol version in ``_meta`` (mirrored into ``MCP-Protocol-Version``).
        params: the called tool's header declaration (``tools/call`` only), or None.

    Returns:
        Header name -> encoded value.
    """
    headers = {"MCP-Protocol-Version": version}
    method = message.get("method")
    if not isinstance(method, str):
        return headers
    headers["Mcp-Method"] = encode_value(method)
    body = message.get("params")
    body = body if isinstance(body, dict) else {}
    field = _NAME_FIELDS.get(method)
    if field is not None and isinstance(body.get(field), str):
        headers["Mcp-Name"] = encode_value(body[field])
    if method == "tools/call" and params:
        for path, name in params:
            value = _rendered(_at(body.get("arguments"), path))
            if value is not None:
                headers[PARAM_PREFIX + name] = encode_value(value)
    return headers
