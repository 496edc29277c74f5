"""Input schemas the mock lists: rebuilt from a catalog skeleton, or derived from recorded argument shapes.

A catalog skeleton (docs/catalog.md) keeps keys, JSON types, ``required``, admitted enum members,
``items`` and the combinators: ``input_schema`` turns it back into a JSON Schema that accepts the same
calls (no descriptions, titles, formats or patterns: the skeleton never held them).  A tool without a
catalog record gets a skeleton derived from its recorded argument shapes (``skeleton_from_shapes``):
every key seen, the JSON types its tokens imply (``str<..``, ``uuid``, ``url:..`` and ``enum:..`` are
strings, ``num:`` an integer or a number, ``bool:`` a boolean, ``null`` null, ``{"array": n, "items":
...}`` an array), ``required`` for the keys every recorded call carried, and an ``enum`` where every
recorded value was an enum token.  Both pass the catalog's skeleton rule (``skeleton_of``): only labels.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..privacy.catalog_schema import skeleton_of

__all__ = ["input_schema", "skeleton_from_shapes"]

_COMBINATORS = ("anyOf", "oneOf", "allOf")
_INTEGER = re.compile(r"num:-?[0-9]+")


def _schema_node(skeleton: dict[str, Any]) -> dict[str, Any]:
    node: dict[str, Any] = {}
    types = skeleton.get("type")
    if types:
        node["type"] = types[0] if len(types) == 1 else list(types)
    if isinstance(skeleton.get("properties"), dict):
        node["properties"] = {k: _schema_node(v) for k, v in skeleton["properties"].items()}
    for key in ("required", "enum"):
        if skeleton.get(key):
            node[key] = list(skeleton[key])
    if isinstance(skeleton.get("items"), dict):
        node["items"] = _schema_node(skeleton["items"])
    for key in _COMBINATORS:
        if isinstance(skeleton.get(key), list):
            node[key] = [_schema_node(b) for b in skeleton[key]]
    return node


def input_schema(skeleton: Any) -> dict[str, Any]:
    """The JSON Schema a skeleton stands for, with ``type: object`` at the top (what MCP requires).

    Args:
        skeleton: a skeleton (re-checked with ``skeleton_of``), or None (an empty object schema).
    """
    checked = skeleton_of(skeleton)
    node = _schema_node(checked) if checked is not None else {}
    node["type"] = "object"
    node.setdefault("properties", {})
    return node


@dataclass
class _Node:
    """What the recorded values at one place of the arguments had in common."""

    seen: int = 0
    types: list[str] = field(default_factory=list)
    enum: list[str] = field(default_factory=list)
    plain_strings: bool = False
    keys: dict[str, int] = field(default_factory=dict)
    props: dict[str, _Node] = field(default_factory=dict)
    items: _Node | None = None

    def kind(self, name: str) -> None:
        if name not in self.types:
            self.types.append(name)

    def add(self, value: Any) -> None:
        self.seen += 1
        if isinstance(value, str):
            self._token(value)
        elif isinstance(value, dict) and set(value) == {"array", "items"}:
            self.kind("array")
            if value["items"] != "empty":
                self.items = self.items or _Node()
                self.items.add(value["items"])
        elif isinstance(value, dict):
            self.kind("object")
            for key, sub in value.items():
                self.keys[key] = self.keys.get(key, 0) + 1
                self.props.setdefault(key, _Node()).add(sub)

    def _token(self, token: str) -> None:
        if token == "null":
            self.kind("null")
        elif token.startswith("bool:"):
            self.kind("boolean")
        elif token.startswith("num:"):
            self.kind("integer" if _INTEGER.fullmatch(token) else "number")
        else:
            self.kind("string")
            if token.startswith("enum:"):
                if token[5:] not in self.enum:
                    self.enum.append(token[5:])
            else:
                self.plain_strings = True

    def skeleton(self) -> dict[str, Any]:
        types = self.types
        if "integer" in types and "number" in types:
            types = [t for t in types if t != "integer"]
        node: dict[str, Any] = {"type": types} if types else {}
        if self.props:
            node["properties"] = {k: v.skeleton() for k, v in self.props.items()}
            node["required"] = [k for k, n in self.keys.items() if n == self.seen]
        if self.enum and not self.plain_strings and types == ["string"]:
            node["enum"] = list(self.enum)
        if self.items is not None:
            node["items"] = self.items.skeleton()
        return node


def skeleton_from_shapes(shapes: Iterable[Any]) -> dict[str, Any] | None:
    """A skeleton that accepts every recorded argument shape (a shape of None: no arguments).

    Returns:
        The skeleton (through ``skeleton_of``), or None when no shape was an object.
    """
    root = _Node()
    for shape in shapes:
        root.add({} if shape is None else shape)
    if root.types != ["object"]:
        return None
    return skeleton_of(root.skeleton())
