"""No control character from a store reaches a terminal: the CLI's standard streams escape them.

Text the commands print can hold values read from a store (argument keys, file names in it, labels of a
foreign journal).  An escape sequence, a carriage return or a bidirectional override among them would
act on the terminal (move the cursor, rewrite a line, reorder text), so every text write to ``sys.stdout``
and ``sys.stderr`` during a command goes through ``escape``: a C0 or C1 control other than newline and
tab, DEL, and the Unicode bidirectional controls become ``\\xNN`` / ``\\uNNNN``.  Binary writes (the stdio
shim's frames on ``sys.stdout.buffer``, or on descriptor 1) are not text and pass untouched.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from mcpeval_nb import UsageError
from mcpeval_nb import escape_controls as escape

TYPE_CHECKING = False  # typing's, without importing typing: the shim starts its server first
if TYPE_CHECKING:
    from typing import Any, TextIO

__all__ = ["check_utf8", "escape", "escaped_streams"]


class _Escaping:
    """A text stream that escapes controls in what is written and passes everything else through."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        self._inner.write(escape(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@contextmanager
def escaped_streams() -> Iterator[None]:
    """Escape controls in every text write to ``sys.stdout`` and ``sys.stderr`` within the block."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Escaping(saved[0]), _Escaping(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def check_utf8(argv: list[str]) -> None:
    """Names, labels, paths and notes must be UTF-8 text (they end up in JSON, SQLite and terminals);
    the server command after ``--`` is passed to the server exactly as given."""
    for position, arg in enumerate(argv, start=1):
        if arg == "--":
            return
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            flag = argv[position - 2] if position > 1 else ""
            where = f"the value of {flag}" if flag.startswith("--") and flag.isascii() else \
                f"argument {position}"
            raise UsageError(f"{where} is not valid UTF-8 text (a file name or note with undecodable "
                             "bytes); only the server command after -- may be") from None
