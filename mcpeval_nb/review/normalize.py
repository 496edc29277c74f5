"""Share normalisation (SPEC 11 step 5): each record re-serialised compactly with sorted keys.

The result must be the bytes serde_json writes for the parsed ``Value``.  The fast path parses and
writes with orjson; the exact path (``jsonfmt``) takes over whenever orjson's reading or writing could
differ from serde_json's: input nested 128 levels deep or more, an integer ``-0`` (serde reads a float),
orjson refusing the text, and any float written with a positive exponent (orjson ``1e+20``, serde
``1e20``).  Tests compare both paths on the awkward cases.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ..jsonfmt import dumps, loads

__all__ = ["NotAnObject", "normalize_record"]

_NEG_ZERO_RE = re.compile(rb"-0(?![0-9.eE])")
_SORT = orjson.OPT_SORT_KEYS
_DEPTH_HINT = 128


class NotAnObject(ValueError):
    """A record that parses but is not a JSON object."""


def _parse(line: bytes) -> tuple[Any, bool]:
    """Parsed value and whether the exact path must write it."""
    if (line.count(b"[") + line.count(b"{") >= _DEPTH_HINT
            or (b"-0" in line and _NEG_ZERO_RE.search(line) is not None)):
        return loads(line), True
    try:
        return orjson.loads(line), False
    except orjson.JSONDecodeError:
        return loads(line), True  # raises JSONFormatError when serde_json refuses it too


def normalize_record(line: bytes, *, drop_note: bool) -> tuple[bytes, Any]:
    """Re-serialise one non-blank physical line as serde_json would, with a trailing newline.

    Args:
        line: the line's bytes (UTF-8, without the newline; a trailing ``\\r`` is whitespace).
        drop_note: replace an existing ``note`` by ``""`` (annotation files without notes).

    Returns:
        The normalised bytes (newline included) and the parsed object.

    Raises:
        JSONFormatError: the line is not JSON serde_json accepts.
        NotAnObject: the line is JSON but not an object.
    """
    value, exact = _parse(line)
    if type(value) is not dict:
        raise NotAnObject("store records must be JSON objects")
    if drop_note and "note" in value:
        value["note"] = ""
    if not exact:
        out = orjson.dumps(value, option=_SORT)
        if b"e+" not in out:
            return out + b"\n", value
    return (dumps(value, sort_keys=True) + "\n").encode("utf-8"), value

