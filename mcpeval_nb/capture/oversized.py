"""What can be learned about a frame over the 4 MiB bound without parsing its body.

The shim forwards such a frame in chunks and keeps only its first and last ``KEEP_BYTES`` (``Glimpse``).
``answer_id`` then finds the JSON-RPC id of a response from those ends alone: either among the top-level
members that open the frame (``{"jsonrpc":"2.0","id":7,"result":...``, each member read whole only
while it lies inside the head) or as the last top-level member closing it (``...,"id":7}``, the layout
the TypeScript SDK writes).  Nothing in between is looked at, and nothing here is kept or printed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..jsonfmt import JSONFormatError, loads

__all__ = ["KEEP_BYTES", "Glimpse", "answer_id"]

#: Bytes kept from each end of an oversized frame.
KEEP_BYTES = 64 * 1024

_DECODER = json.JSONDecoder()
_OPEN = re.compile(r"[ \t\n\r]*\{")
_SEP = re.compile(r"[ \t\n\r]*(?:,[ \t\n\r]*)?")
_COLON = re.compile(r"[ \t\n\r]*:[ \t\n\r]*")
_TAIL_ID = re.compile(rb',[ \t\r\n]*"id"[ \t\r\n]*:[ \t\r\n]*'
                      rb'(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?'
                      rb'|"(?:[^"\\\x00-\x1f]|\\.){0,1024}")[ \t\r\n]*\}[ \t\r\n]*\Z')
_RESPONSE_KEYS = frozenset(("result", "error"))


@dataclass
class Glimpse:
    """The two ends of a frame streamed past the bound, and its size.

    Attributes:
        head: the first ``KEEP_BYTES`` bytes.
        tail: the last ``KEEP_BYTES`` bytes (newline included), overlapping ``head`` when short.
        size: the frame's length in bytes.
    """

    head: bytes = b""
    tail: bytes = b""
    size: int = 0
    _tail: bytearray = field(default_factory=bytearray, repr=False)

    def feed(self, chunk: bytes | bytearray | memoryview) -> None:
        """Account for the next chunk of the frame (kept only at the ends)."""
        if len(self.head) < KEEP_BYTES:
            self.head += bytes(chunk[: KEEP_BYTES - len(self.head)])
        self._tail += chunk[-KEEP_BYTES:]
        if len(self._tail) > KEEP_BYTES:
            del self._tail[: len(self._tail) - KEEP_BYTES]
        self.tail = bytes(self._tail)
        self.size += len(chunk)


def _head_members(head: bytes) -> tuple[set[str], Any]:
    """Top-level keys that open ``head`` whole, and the id among them (``...`` when absent)."""
    text = head.decode("utf-8", "replace")
    keys: set[str] = set()
    found: Any = ...
    opening = _OPEN.match(text)
    if opening is None:
        return keys, found
    pos = opening.end()
    try:
        while True:
            key, pos = _DECODER.raw_decode(text, _SEP.match(text, pos).end())  # type: ignore[union-attr]
            colon = _COLON.match(text, pos)
            if not isinstance(key, str) or colon is None:
                return keys, found
            keys.add(key)
            if key in _RESPONSE_KEYS and found is not ...:
                return keys, found  # the body starts here: never read it
            _value, pos = _DECODER.raw_decode(text, colon.end())
            if key == "id":
                found = loads(text[colon.end():pos])
    except (ValueError, JSONFormatError):
        return keys, found


def answer_id(glimpse: Glimpse) -> str | int | float | None:
    """The id of the JSON-RPC response whose ends these are, or None when it cannot be told.

    Args:
        glimpse: the frame's ends.

    Returns:
        The id (a string or number, as ``loads`` reads it), or None: the frame does not open like a
        JSON-RPC response, or neither end holds a top-level id.
    """
    keys, found = _head_members(glimpse.head)
    if "method" in keys or not keys & {*_RESPONSE_KEYS, "jsonrpc"}:
        return None
    if found is ...:
        match = _TAIL_ID.search(glimpse.tail)
        if match is None:
            return None
        try:
            found = loads(match.group(1))
        except JSONFormatError:
            return None
    if isinstance(found, bool) or not isinstance(found, str | int | float):
        return None
    return found
