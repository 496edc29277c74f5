"""The doctor's ``duplicate-key`` finding: a journal line whose JSON repeats a key (issue 19 item 7).

Every reader keeps the *last* value of a repeated key, so an earlier one is invisible to every check
that reads parsed records: ``{"note":"x@y.com","note":""}`` is a clean annotation with no note to
review.  No writer ever repeats a key, so a repeated key is a finding of its own, at any depth.

Speed: lines of a call journal that the compiled scanner (``tables.canon``) accepts are exactly the
writer's rendering of their values, with each top-level key once; only their distinct ``args``,
``error`` and ``ext`` texts need the exact check, once each.  Every other line (other journals, lines
the scanner refuses, the unterminated tail) gets the exact check: Python's JSON parser with a hook that
sees every object's key list.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..tables import canon

__all__ = ["DUPLICATE_KEY", "duplicate_key_lines", "has_duplicate_key"]

#: The detector id reported for a line with a repeated key.
DUPLICATE_KEY = "duplicate-key"


class _Repeated(Exception):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Repeated
    return out


def _no_constant(_name: str) -> Any:
    raise ValueError("not JSON")


def has_duplicate_key(text: bytes | str) -> bool:
    """True when ``text`` parses as JSON and some object in it repeats a key (invalid JSON: False)."""
    try:
        json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constant)
    except _Repeated:
        return True
    except (ValueError, RecursionError):
        return False
    return False


def duplicate_key_lines(data: bytes, *, calls: bool) -> list[int]:
    """The 0-based indices of the lines of ``data`` that repeat a key.

    Args:
        data: whole lines (the last may lack its newline).
        calls: ``data`` comes from a ``calls-*`` journal (the compiled scanner may prove its lines).
    """
    proven = _proven_calls(data) if calls and canon.available() else None
    if proven is None:
        lines = data.split(b"\n")
        return [i for i, line in enumerate(lines) if b'"' in line and has_duplicate_key(line)]
    ok, ends, texts = proven
    repeated = [text for text in texts if has_duplicate_key(text)]
    _remember(text for text in texts if text not in repeated)  # only clean texts are skipped later
    if repeated:  # rare: find which accepted lines hold one
        ok = np.zeros(len(ends), dtype=bool)
    out = []
    for index in np.flatnonzero(~ok).tolist():
        start = 0 if index == 0 else int(ends[index - 1]) + 1
        line = data[start:int(ends[index])]
        if b'"' in line and has_duplicate_key(line):
            out.append(index)
    return out


_checked: set[str] = set()
_CHECKED_LIMIT = 1 << 16


def _proven_calls(data: bytes) -> tuple[np.ndarray, np.ndarray, list[str]] | None:
    """The scanner's accepted-line mask, the newline positions and the distinct ``args``/``error``
    texts not yet checked (None when the chunk ends in an unterminated line: the exact path)."""
    ends = canon.newline_positions(data)
    if not data.endswith(b"\n"):
        return None
    ok, args, error, ext = canon.scan_texts(data, ends)
    texts = [text for column in (args, error, ext) for text in column.unique().to_pylist()
             if text is not None and text not in _checked]
    return ok, ends, texts


def _remember(texts: Iterable[str]) -> None:
    if len(_checked) > _CHECKED_LIMIT:
        _checked.clear()
    _checked.update(texts)
