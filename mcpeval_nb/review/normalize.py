"""Share normalisation (SPEC 11 step 5): each record re-serialised compactly with sorted keys.

The result must be the bytes serde_json writes for the parsed ``Value``.  The fast path parses and
writes with orjson; the exact path (``jsonfmt``) takes over whenever orjson's reading or writing could
differ from serde_json's: input nested 128 levels deep or more, an integer ``-0`` (serde reads a float),
orjson refusing the text, and any float written with a positive exponent (orjson ``1e+20``, serde
``1e20``).  Tests compare both paths on the awkward cases.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import orjson

from ..jsonfmt import dumps, loads

__all__ = ["NotAnObject", "encode_value", "normalize_chunk", "normalize_record"]

_NEG_ZERO_CANDIDATE = re.compile(rb"-0(?![0-9.eE])")
#: A number orjson may read otherwise than the reference: over 19 significant digits, or an exponent of
#: three digits (docs/formats.md, "Numbers"); such lines take the exact path.
#: Only where a value starts (after ``:``, ``,`` or ``[``), so hex labels and digests do not match.
_LONG_NUMBER_CANDIDATE = re.compile(rb"[:,\[][ \t\r\n]*-?(?:(?:[0-9]\.?){20}|[0-9.]+[eE][+-]?[0-9]{3})")


def _has_negative_zero(data: bytes) -> bool:
    """True when ``data`` may hold the integer ``-0`` (serde reads it as a float).

    A number can only stand after ``:``, ``,`` or ``[`` (and whitespace), so the ``-0`` of a label such
    as ``server-0`` inside a string does not send every line to the exact path.
    """
    for match in _NEG_ZERO_CANDIDATE.finditer(data):
        i = match.start() - 1
        while i >= 0 and data[i] in b" \t\r\n":
            i -= 1
        if i >= 0 and data[i] in b":,[":
            return True
    return False
_SORT = orjson.OPT_SORT_KEYS
_DEPTH_HINT = 128
_DUMPS = functools.partial(orjson.dumps, option=_SORT)
#: Every byte but '{', '[' and the newline: deleting them leaves each line's opening brackets.
_NOT_OPENING = bytes(b for b in range(256) if b not in b"{[\n")


class NotAnObject(ValueError):
    """A record that parses but is not a JSON object."""


def _parse(line: bytes) -> tuple[Any, bool]:
    """Parsed value and whether the exact path must write it."""
    if (line.count(b"[") + line.count(b"{") >= _DEPTH_HINT
            or (b"-0" in line and _has_negative_zero(line)) or _LONG_NUMBER_CANDIDATE.search(line)):
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
    return encode_value(value, exact=exact), value


def encode_value(value: Any, *, exact: bool = False) -> bytes:
    """A parsed record as serde_json writes it with sorted keys, with its newline.

    Args:
        value: the record.
        exact: skip orjson (the line needed the exact reader; see ``_parse``).
    """
    if not exact:
        out = orjson.dumps(value, option=_SORT)
        if b"e+" not in out:
            return out + b"\n"
    return (dumps(value, sort_keys=True) + "\n").encode("utf-8")




def normalize_chunk(data: bytes, *, tail: bool, drop_note: bool,
                    limit: int) -> tuple[bytes, list[dict[str, Any]]] | None:
    """The fast path for a chunk of whole lines: the normalised body and its record count, or None.

    None whenever any line is blank, refused by orjson, not an object, might nest 128 levels, might
    hold an integer ``-0``, has a float with a positive exponent, or normalises past ``limit`` bytes
    with its newline: the per-line path then decides exactly and names the line.  The loops run in C
    (``map``), so the per-record cost is orjson's.

    Args:
        data: whole lines; the last one lacks its newline only when ``tail``.
        tail: ``data`` is the unterminated final line.
        drop_note: replace an existing ``note`` by ``""``.
        limit: the record bound, newline included.

    Returns:
        ``(records joined by newlines with a final newline, the parsed records)``, or None.
    """
    lines = data.split(b"\n")
    if not tail:
        lines.pop()
    if not lines or _has_negative_zero(data) or _LONG_NUMBER_CANDIDATE.search(data):
        return None
    try:
        values = list(map(orjson.loads, lines))
    except orjson.JSONDecodeError:
        return None
    if set(map(type, values)) != {dict}:
        return None
    if max(map(len, data.translate(None, _NOT_OPENING).split(b"\n"))) >= _DEPTH_HINT:
        return None  # some line has 128 or more '{' and '[' (one C pass, not four calls per line)
    if drop_note:
        for value in values:
            if "note" in value:
                value["note"] = ""
    out = list(map(_DUMPS, values))
    if max(map(len, out)) >= limit:
        return None
    body = b"\n".join(out) + b"\n"
    if b"e+" in body:
        return None
    return body, values
