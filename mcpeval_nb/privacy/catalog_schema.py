"""The skeleton of a tool's input schema: its structure without its text (docs/catalog.md).

A skeleton keeps what a mock needs to rebuild an input schema that accepts the same calls: property
keys, JSON types, ``required``, enum members, ``items``, ``anyOf``/``oneOf``/``allOf`` branches, in the
schema's own order.  It drops every description, title, default, example, pattern, format and ``$ref``.

A property key, a required name or an enum member is kept only when it is a catalog label
(``valid_label``): the tool grammar (the rule the journals already apply to ``enum:`` tokens) and
nothing the redaction check reads as a secret (``password``).  What is left out is counted in
``dropped``.  The same function re-sanitises a stored skeleton (it is idempotent), so the read rule
and the writer cannot drift apart.
"""

from __future__ import annotations

from typing import Any

from ..limits import MAX_SKELETON_DEPTH, MAX_SKELETON_NODES
from .grammar import valid_tool

__all__ = ["JSON_TYPES", "Skeleton", "schema_depth", "skeleton_of", "skeleton_size", "valid_label"]

#: The JSON Schema type names a skeleton keeps.
JSON_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
_COMBINATORS = ("anyOf", "oneOf", "allOf")
#: Text the redaction check flags wherever it stands (its other patterns cannot occur in the grammar).
_FLAGGED_WORDS = ("password",)


def valid_label(value: object) -> bool:
    """True for a key or enum member a skeleton may keep: the tool grammar, and no word the redaction
    check reads as a secret."""
    return valid_tool(value) and not any(w in str(value).lower() for w in _FLAGGED_WORDS)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63 else 0


def _types(value: Any) -> list[str] | None:
    raw = [value] if isinstance(value, str) else value if isinstance(value, list) else None
    if raw is None:
        return None
    kept = [t for t in dict.fromkeys(t for t in raw if isinstance(t, str)) if t in JSON_TYPES]
    return kept or None


class _Walk:
    """One skeleton walk: the node budget shared by every level."""

    def __init__(self) -> None:
        self.nodes = 0

    def labels(self, values: Any) -> tuple[list[str] | None, int]:
        if not isinstance(values, list):
            return None, 0
        strings = [v for v in values if isinstance(v, str)]
        kept = [v for v in dict.fromkeys(strings) if valid_label(v)]
        return kept or None, len(strings) - len(kept)

    def node(self, schema: Any, depth: int) -> tuple[dict[str, Any], int]:
        """The node for ``schema`` and how much its parent must count as dropped (1: cut here)."""
        self.nodes += 1
        if not isinstance(schema, dict):
            return {}, 0
        if depth >= MAX_SKELETON_DEPTH or self.nodes > MAX_SKELETON_NODES:
            return {}, 1 if schema else 0
        node: dict[str, Any] = {}
        dropped = _count(schema.get("dropped"))
        if (types := _types(schema.get("type"))) is not None:
            node["type"] = types
        props = schema.get("properties")
        if isinstance(props, dict):
            node["properties"] = kept = {}
            for key, sub in props.items():
                if valid_label(key):
                    kept[key], cut = self.node(sub, depth + 1)
                    dropped += cut
                else:
                    dropped += 1
        for key in ("required", "enum"):
            labels, lost = self.labels(schema.get(key))
            dropped += lost
            if labels is not None:
                node[key] = labels
        if "items" in schema:
            node["items"], cut = self.node(schema["items"], depth + 1)
            dropped += cut
        for key in _COMBINATORS:
            if isinstance(schema.get(key), list):
                branches = [self.node(b, depth + 1) for b in schema[key]]
                node[key] = [b for b, _ in branches]
                dropped += sum(cut for _, cut in branches)
        if dropped:
            node["dropped"] = dropped
        return node, 0


def skeleton_of(schema: Any) -> dict[str, Any] | None:
    """The skeleton of an input schema (or of a stored skeleton: the function is idempotent).

    Args:
        schema: the raw ``inputSchema`` (in memory only), or a stored skeleton.

    Returns:
        ``{type?, properties?, required?, enum?, items?, anyOf?, oneOf?, allOf?, dropped?}`` at every
        level, or None when the schema is not an object.  At most ``MAX_SKELETON_DEPTH`` levels and
        ``MAX_SKELETON_NODES`` nodes: past them a node is ``{}`` and counted in its parent's ``dropped``.
    """
    if not isinstance(schema, dict):
        return None
    return _Walk().node(schema, 0)[0]


def schema_depth(schema: Any, *, limit: int = 128) -> int:
    """Nesting depth of a schema's structure: 1 for an object of scalar properties, +1 per nested
    ``properties``/``items`` level (branches of ``anyOf``/``oneOf``/``allOf`` sit at their parent's level).

    Args:
        schema: a raw input schema or a skeleton.
        limit: the most levels counted.
    """
    if not isinstance(schema, dict) or limit <= 0:
        return 0
    children: list[Any] = []
    props = schema.get("properties")
    if isinstance(props, dict):
        children += list(props.values())
    if "items" in schema:
        children.append(schema["items"])
    inner = max((schema_depth(c, limit=limit - 1) for c in children), default=0)
    same = max((schema_depth(b, limit=limit) for key in _COMBINATORS if isinstance(schema.get(key), list)
                for b in schema[key]), default=0)
    return max(1 + inner if children else 0, same)


def skeleton_size(skeleton: Any) -> int:
    """Properties in a skeleton, at every level (the CLI's skeleton size)."""
    if not isinstance(skeleton, dict):
        return 0
    props = skeleton.get("properties")
    total = len(props) + sum(skeleton_size(v) for v in props.values()) if isinstance(props, dict) else 0
    total += skeleton_size(skeleton.get("items"))
    for key in _COMBINATORS:
        branches = skeleton.get(key)
        if isinstance(branches, list):
            total += sum(skeleton_size(b) for b in branches)
    return total


Skeleton = dict[str, Any]
