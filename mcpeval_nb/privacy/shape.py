"""Argument shaping (SPEC 3): content-free tokens in place of values.

``shape`` is applied by the capture path to ``params.arguments``; ``sanitize_shape`` is the store-side
re-sanitisation applied to every record on append and on every load, so that nothing but canonical
tokens can ever sit in a journal's ``args``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..jsonfmt import JSONFormatError, format_number, loads
from .grammar import valid_tool
from .urls import classify_url

__all__ = [
    "EnumIndex",
    "is_canonical_token",
    "sanitize_shape",
    "shape",
    "string_bucket",
]

_BUCKETS = ("str<8", "str<32", "str<128", "str<512", "str<4096", "str>4096")
_PLAIN_TOKENS = frozenset(("null", "bool:true", "bool:false", "uuid", "empty", *_BUCKETS))
_UUID_RE = re.compile(
    r"(?:urn:uuid:)?[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"
    r"|\{[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\}"
    r"|[0-9A-Fa-f]{32}"
)
_URL_TOKEN_RE = re.compile(r"url:[A-Za-z0-9.\-]{1,253}")
_NUMBER_RE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")

# A structural path: a tuple of ("k", name) and ("i",) steps.
Path = tuple[tuple[str, ...], ...]
_ITEM: tuple[str, ...] = ("i",)


def string_bucket(value: str) -> str:
    """Return the length bucket of a string by its UTF-8 byte length (bounds inclusive)."""
    n = len(value.encode("utf-8", "surrogatepass"))
    if n <= 8:
        return "str<8"
    if n <= 32:
        return "str<32"
    if n <= 128:
        return "str<128"
    if n <= 512:
        return "str<512"
    if n <= 4096:
        return "str<4096"
    return "str>4096"


def is_canonical_token(value: str) -> bool:
    """True when a string is one of the canonical shape tokens of SPEC 3.6."""
    if value in _PLAIN_TOKENS:
        return True
    if value.startswith("num:"):
        return _is_serde_number(value[4:])
    if value.startswith("url:"):
        return _URL_TOKEN_RE.fullmatch(value) is not None
    if value.startswith("enum:"):
        return valid_tool(value[5:])
    return False


def _is_serde_number(text: str) -> bool:
    if _NUMBER_RE.fullmatch(text) is None:
        return False
    try:
        loads(text)
    except JSONFormatError:
        return False
    return True


class EnumIndex:
    """Enum members learned from ``tools/list`` input schemas (SPEC 3.2).

    ``learn`` replaces a tool's map on every listing; only tools declared by a listing are used for
    enum matching (a tool called but never listed gets no enum tokens).
    """

    def __init__(self) -> None:
        self._enums: dict[str, dict[Path, set[str]]] = {}

    def learn(self, tool: str, input_schema: Any) -> None:
        """Declare ``tool`` and replace its enum map with a walk of ``input_schema``."""
        if not valid_tool(tool):
            return
        found: dict[Path, set[str]] = {}
        _walk(input_schema, (), found)
        self._enums[tool] = found

    def learn_listing(self, result: Any) -> None:
        """Learn from a ``tools/list`` result object (``{"tools": [...]}``)."""
        tools = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(tools, list):
            return
        for entry in tools:
            if isinstance(entry, dict) and valid_tool(entry.get("name")) and "inputSchema" in entry:
                self.learn(entry["name"], entry["inputSchema"])

    def declared(self, tool: str) -> bool:
        """True when ``tool`` was declared by a listing this index learned."""
        return tool in self._enums

    def members(self, tool: str, path: Path) -> frozenset[str]:
        """The learned members at a structural path (empty when none)."""
        return frozenset(self._enums.get(tool, {}).get(path, ()))

    def is_enum(self, tool: str, path: str, value: str) -> bool:
        """Public path syntax of SPEC 3.4: ``""``, ``"[]"``, a literal key, or ``/k/<key>/i`` segments."""
        steps = _parse_public_path(path)
        return steps is not None and value in self.members(tool, steps)


def _parse_public_path(path: str) -> Path | None:
    if path == "":
        return ()
    if path == "[]":
        return (_ITEM,)
    if not path.startswith("/"):
        return (("k", path),)
    steps: list[tuple[str, ...]] = []
    segments = path[1:].split("/")
    i = 0
    while i < len(segments):
        tag = segments[i]
        if tag == "i":
            steps.append(_ITEM)
            i += 1
        elif tag == "k" and i + 1 < len(segments):
            key = _unescape(segments[i + 1])
            if key is None:
                return None
            steps.append(("k", key))
            i += 2
        else:
            return None
    return tuple(steps)


def _unescape(segment: str) -> str | None:
    out, i = [], 0
    while i < len(segment):
        if segment[i] == "~":
            nxt = segment[i + 1: i + 2]
            if nxt not in ("0", "1"):
                return None
            out.append("~" if nxt == "0" else "/")
            i += 2
        else:
            out.append(segment[i])
            i += 1
    return "".join(out)


def _walk(schema: Any, path: Path, found: dict[Path, set[str]]) -> None:
    if not isinstance(schema, dict):
        return
    enum = schema.get("enum")
    if isinstance(enum, list):
        members = {m for m in enum if isinstance(m, str)}
        if members:
            found.setdefault(path, set()).update(members)
    for key in ("oneOf", "anyOf", "allOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            for branch in branches:
                _walk(branch, path, found)
    props = schema.get("properties")
    if isinstance(props, dict):
        for name, sub in props.items():
            _walk(sub, (*path, ("k", name)), found)
    if "items" in schema:
        _walk(schema["items"], (*path, _ITEM), found)


def _shape_string(value: str, tool: str, path: Path, enums: EnumIndex | None) -> str:
    if enums is not None and tool and value in enums.members(tool, path):
        return "enum:" + value
    if _UUID_RE.fullmatch(value):
        return "uuid"
    url = classify_url(value)
    if url is not None:
        return url
    return string_bucket(value)


def shape(value: Any, tool: str = "", enums: EnumIndex | None = None) -> Any:
    """Shape a JSON value into content-free tokens (SPEC 3.1-3.3).

    Args:
        value: the raw ``params.arguments`` (used in memory only).
        tool: the requested tool, only when a listing declared it; ``""`` disables enum matching.
        enums: the correlator's learned enums.

    Returns:
        A JSON value of the same structure holding only tokens; object keys are kept verbatim.
    """
    if enums is not None and tool and not enums.declared(tool):
        tool = ""
    return _shape(value, tool, (), enums)


def _shape(value: Any, tool: str, path: Path, enums: EnumIndex | None) -> Any:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool:true" if value else "bool:false"
    if isinstance(value, int | float):
        return "num:" + format_number(value)
    if isinstance(value, str):
        return _shape_string(value, tool, path, enums)
    if isinstance(value, list):
        items = _shape(value[0], tool, (*path, _ITEM), enums) if value else "empty"
        return {"array": len(value), "items": items}
    if isinstance(value, Mapping):
        return {k: _shape(v, tool, (*path, ("k", k)), enums) for k, v in value.items()}
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def sanitize_shape(value: Any) -> Any:
    """Re-sanitise a stored ``args`` shape (SPEC 3.6); idempotent.

    Canonical tokens survive; any other string becomes its length bucket; ``array``/``object`` keys
    keep non-negative integer counts.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool:true" if value else "bool:false"
    if isinstance(value, int | float):
        return "num:" + format_number(value)
    if isinstance(value, str):
        return value if is_canonical_token(value) else string_bucket(value)
    if isinstance(value, list):
        return {"array": len(value), "items": sanitize_shape(value[0]) if value else "empty"}
    if isinstance(value, Mapping):
        return {k: _sanitize_member(k, v) for k, v in value.items()}
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def _sanitize_member(key: str, value: Any) -> Any:
    if key in ("array", "object") and _is_u64(value):
        return value
    return sanitize_shape(value)


def _is_u64(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**64


def iter_tokens(value: Any) -> Iterable[str]:
    """Yield every string in a shape (keys excluded); used by tests and the redaction check."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from iter_tokens(v)
    elif isinstance(value, list):
        for v in value:
            yield from iter_tokens(v)
