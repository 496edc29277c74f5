"""The redaction detectors of SPEC 10: a verifier separate from the sanitiser.

Two layers, one rule.  ``line_detectors`` is the exact per-line rule (text patterns on the line, then
oversized non-token string values in the parsed JSON; annotation lines with their ``note`` removed and
re-serialised).  ``candidate_lines`` is a fast filter over a whole chunk of lines: it returns every line
that *could* be flagged (any ``@``, any keyword after ASCII lowercasing, any run of more than 128 bytes
between two quotes, any escaped quote), so that the exact rule runs only on those lines.  A line the
filter skips cannot be flagged: a JSON string whose decoded UTF-8 length exceeds 128 bytes has more than
128 raw bytes between its quotes, and unless it contains an escaped quote, that is a gap between two
consecutive quote characters.

Detector ids (reported instead of matched text): ``email-like`` (``\\w@\\w``), ``home-path``
(``/users/`` or ``/home/``), ``token-param`` (``token=``), ``password`` and ``oversized-string``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from ..jsonfmt import JSONFormatError, dumps, loads
from ..privacy.textcheck import text_detectors

__all__ = [
    "DETECTORS",
    "LineVerdict",
    "candidate_lines",
    "has_note",
    "is_shape_token",
    "line_detectors",
    "oversized_string",
    "text_detectors",
]

#: SPEC 10's five ids, then the doctor's own ``duplicate-key`` (``dupkeys``: a line repeating a key).
DETECTORS = ("email-like", "home-path", "token-param", "password", "oversized-string", "duplicate-key")

_PLAIN_TOKENS = frozenset(("null", "uuid", "str<8", "str<32", "str<128", "str<512", "str<4096", "str>4096",
                           "bool:true", "bool:false"))
# Rust's f64::from_str: optional sign, then inf/infinity/nan (any case) or a decimal with optional exponent.
_RUST_F64_RE = re.compile(r"[+-]?(?:(?i:inf|infinity|nan)|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
_HOST_LABEL_RE = re.compile(r"[A-Za-z0-9-]{1,63}")
_MAX_PLAIN = 128
#: A run of more than 128 bytes without a quote contains this many whole aligned blocks of _BLOCK bytes.
_BLOCK = 32
_FREE_BLOCKS = (_MAX_PLAIN + 1 - (_BLOCK - 1)) // _BLOCK


@dataclass(frozen=True)
class LineVerdict:
    """What the exact rule found on one line: detector ids (empty when clean) and whether it has a note."""

    detectors: tuple[str, ...]
    has_note: bool = False


def _url_token(rest: str) -> bool:
    if rest in ("ip", "localhost", "host"):
        return True
    if not rest or len(rest) > 253:
        return False
    return all(_HOST_LABEL_RE.fullmatch(label) for label in rest.split("."))


def is_shape_token(value: str) -> bool:
    """True when ``value`` is a shape token the oversized-string rule exempts (SPEC 10).

    Args:
        value: a JSON string value.

    Returns:
        True for the plain tokens, ``num:`` + a Rust float literal, ``url:`` + a host class or host
        name, and anything starting with ``enum:``.
    """
    if value in _PLAIN_TOKENS or value.startswith("enum:"):
        return True
    if value.startswith("num:"):
        return _RUST_F64_RE.fullmatch(value[4:]) is not None
    if value.startswith("url:"):
        return _url_token(value[4:])
    return False


def _too_long(value: str) -> bool:
    n = len(value)
    if n <= _MAX_PLAIN // 4:
        return False
    if n <= _MAX_PLAIN and len(value.encode("utf-8", "surrogatepass")) <= _MAX_PLAIN:
        return False
    return not is_shape_token(value)


def oversized_string(value: Any) -> bool:
    """True when any string *value* (not key) in parsed JSON is over 128 UTF-8 bytes and not a token.

    Args:
        value: parsed JSON.

    Returns:
        Whether the ``oversized-string`` detector fires.
    """
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if _too_long(node):
                return True
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _parse(data: bytes) -> Any:
    try:
        return loads(data)
    except JSONFormatError:
        return _UNPARSED


_UNPARSED = object()


def _plain_verdict(text: str, parsed: Any) -> LineVerdict:
    found = text_detectors(text)
    if parsed is not _UNPARSED and oversized_string(parsed):
        found.append("oversized-string")
    return LineVerdict(tuple(found))


def line_detectors(data: bytes, *, annotation: bool) -> LineVerdict:
    """Apply the exact SPEC 10 rule to one physical line (no newline).

    Args:
        data: the line's bytes; must be valid UTF-8 (the scanners check that first).
        annotation: the line comes from an ``annotations-*`` file: ``note`` is exempt and counted.

    Returns:
        The detectors that fired and whether the line carries a non-empty note.
    """
    if data.endswith(b"\r"):
        data = data[:-1]
    text = data.decode("utf-8")
    if not text.strip():
        return LineVerdict(())
    parsed = _parse(data)
    if not annotation or not isinstance(parsed, dict):
        return _plain_verdict(text, parsed)
    note = parsed.pop("note", None)
    has_note = isinstance(note, str) and bool(note.strip())
    rest = dumps(parsed, sort_keys=True)
    verdict = _plain_verdict(rest, parsed)
    return LineVerdict(verdict.detectors, has_note)


def has_note(data: bytes) -> bool:
    """True when an annotation line parses (as serde_json would) to an object with a non-blank ``note``.

    Args:
        data: one physical line (no newline).

    Returns:
        Whether the line counts toward the notes that need manual review.
    """
    if b'"note"' not in data:
        return False
    parsed: Any = _UNPARSED
    if data.count(b"[") + data.count(b"{") < 128:
        try:
            parsed = orjson.loads(data)
        except orjson.JSONDecodeError:
            parsed = _UNPARSED
    if parsed is _UNPARSED:
        parsed = _parse(data)
    note = parsed.get("note") if isinstance(parsed, dict) else None
    return isinstance(note, str) and bool(note.strip())


def _line_bounds(buf: bytes, pos: int) -> tuple[int, int]:
    start = buf.rfind(b"\n", 0, pos) + 1
    end = buf.find(b"\n", pos)
    return start, len(buf) if end < 0 else end


def _quote_free_runs(buf: bytes) -> list[int]:
    """Start offsets of runs of ``_FREE_BLOCKS`` aligned 32-byte blocks that hold no quote.

    Any stretch of more than 128 bytes between two quotes covers such a run, so every string whose raw
    text exceeds 128 bytes is found (shorter stretches may be found too; the exact rule decides).
    """
    padded = -(-len(buf) // _BLOCK) * _BLOCK  # the partial last block counts as quote-free past the end
    if padded < _BLOCK * _FREE_BLOCKS:
        return []
    quotes = np.zeros(padded, dtype=np.bool_)
    np.equal(np.frombuffer(buf, dtype=np.uint8), 0x22, out=quotes[: len(buf)])
    words = quotes.view(np.uint64).reshape(-1, _BLOCK // 8)
    free = (words[:, 0] | words[:, 1] | words[:, 2] | words[:, 3]) == 0
    run = free[: len(free) - _FREE_BLOCKS + 1].copy()
    for k in range(1, _FREE_BLOCKS):
        run &= free[k: len(free) - _FREE_BLOCKS + 1 + k]
    starts = run.copy()
    starts[1:] &= ~run[:-1]
    return [int(i) * _BLOCK for i in np.flatnonzero(starts).tolist()]


def _pair_positions(mask: Any, distance: int) -> list[int]:
    """Offsets ``i`` where ``mask[i]`` and ``mask[i + distance]`` are both set."""
    both = mask[:-distance] & mask[distance:]
    return [int(i) for i in np.flatnonzero(both).tolist()]


def _needle_hits(buf: bytes, arr: Any) -> list[int]:
    """Offsets of every possible keyword, ``@`` or escaped-quote match (a superset; never a miss).

    ``folded`` ORs 0x20 into every byte: that lowercases ASCII letters and leaves ``/`` and ``=`` as
    they are, so every match of a lowercase needle in the ASCII-lowercased text is a match here too
    (a few other bytes fold onto the needles' characters: extra candidates only).  Needles are found
    by their rare bytes with ``memchr`` (``@``, ``=``, ``\\``) or by pairs of slashes at the needle's
    width, and the one needle without a rare byte (``password``) by one substring search.
    """
    hits: list[int] = []
    for rare in (b"@", b"\\"):
        pos = buf.find(rare)
        while pos >= 0:
            hits.append(pos)
            pos = buf.find(rare, pos + 1)
    folded = (arr | 0x20).tobytes()
    for needle in (b"password", b"token=") if b"=" in buf else (b"password",):
        pos = folded.find(needle)
        while pos >= 0:
            hits.append(pos)
            pos = folded.find(needle, pos + 1)
    if buf.find(b"/") >= 0:
        slashes = np.frombuffer(folded, dtype=np.uint8) == 0x2F
        for needle in (b"/home/", b"/users/"):
            hits.extend(p for p in _pair_positions(slashes, len(needle) - 1) if folded.startswith(needle, p))
    return hits


def candidate_lines(buf: bytes) -> list[tuple[int, int]]:
    """Every line of ``buf`` the exact rule could flag, as sorted ``(start, end)`` byte ranges.

    Args:
        buf: whole lines (the last one may lack its newline).

    Returns:
        Line ranges without the newline, in order, each once.
    """
    found: dict[int, int] = {}
    if not buf:
        return []
    arr = np.frombuffer(buf, dtype=np.uint8)
    last_end = -1
    for pos in sorted([*_needle_hits(buf, arr), *_quote_free_runs(buf)]):
        if pos <= last_end:
            continue
        start, last_end = _line_bounds(buf, pos)
        found[start] = last_end
    return list(found.items())
