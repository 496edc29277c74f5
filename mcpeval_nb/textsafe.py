"""Terminal-safe text: escape the characters that would act on a terminal instead of being shown.

A C0 or C1 control (other than newline and tab, unless asked), DEL and the Unicode bidirectional
controls become ``\\xNN`` / ``\\uNNNN``.  The CLI passes everything it prints through ``escape_controls``
(``cli.terminal``); a value shown inside one line (a recorded argument key) is escaped with
``newlines=False`` so that it cannot start a line of its own.
"""

from __future__ import annotations

import re

__all__ = ["escape_controls"]

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_ALL_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _code(match: re.Match[str]) -> str:
    point = ord(match.group())
    return f"\\x{point:02x}" if point < 0x100 else f"\\u{point:04x}"


def escape_controls(text: str, *, newlines: bool = True) -> str:
    """``text`` with every terminal control escaped; newline and tab kept unless ``newlines`` is False."""
    return (_CONTROLS if newlines else _ALL_CONTROLS).sub(_code, text)
