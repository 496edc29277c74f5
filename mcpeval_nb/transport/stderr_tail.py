"""The last lines a stdio server wrote to stderr, kept bounded, shown only when it fails.

A thread drains the child's stderr pipe (so a chatty server never blocks on a full pipe) into a ring of
at most ``MAX_TAIL_BYTES``.  When the connection fails, ``lines()`` gives at most ``MAX_TAIL_LINES``
lines of at most ``MAX_TAIL_LINE_CHARS`` characters each, control characters replaced, and every line
that the redaction check's text patterns flag (``privacy.textcheck``: e-mail-like text, a home path,
``token=``, ``password``) withheld as ``[line withheld: <detector>]``.  The lines go to the operator's
terminal or panel only: never into a journal, a report or an export (docs/privacy.md).
"""

from __future__ import annotations

import contextlib
import os
import threading

from ..privacy.textcheck import text_detectors

__all__ = ["MAX_TAIL_BYTES", "MAX_TAIL_LINES", "MAX_TAIL_LINE_CHARS", "StderrTail", "checked_lines"]

MAX_TAIL_BYTES = 8192
MAX_TAIL_LINES = 8
MAX_TAIL_LINE_CHARS = 200
_CHUNK = 4096


def _printable(line: str) -> str:
    text = "".join(ch if ch.isprintable() else "?" for ch in line.rstrip("\r"))
    return text if len(text) <= MAX_TAIL_LINE_CHARS else text[: MAX_TAIL_LINE_CHARS - 3] + "..."


def checked_lines(data: bytes) -> tuple[str, ...]:
    """The last non-empty lines of ``data``, bounded and through the redaction check's text patterns.

    Args:
        data: the tail of a stderr stream.

    Returns:
        At most ``MAX_TAIL_LINES`` lines; a flagged line reads ``[line withheld: <detector ids>]``.
    """
    lines = [ln for ln in data.decode("utf-8", "replace").split("\n") if ln.strip()]
    shown = []
    for line in lines[-MAX_TAIL_LINES:]:
        flagged = text_detectors(line)
        shown.append(f"[line withheld: {', '.join(flagged)}]" if flagged else _printable(line))
    return tuple(shown)


class StderrTail:
    """Drains one pipe on a daemon thread and keeps its last ``MAX_TAIL_BYTES``.

    Args:
        fd: the read end of the child's stderr pipe (owned: closed when the stream ends).
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buf = bytearray()
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._drain, name="mcpeval-stderr-tail", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        try:
            while chunk := os.read(self._fd, _CHUNK):
                with self._lock:
                    self._buf += chunk
                    if len(self._buf) > MAX_TAIL_BYTES:
                        del self._buf[: len(self._buf) - MAX_TAIL_BYTES]
        except OSError:
            pass
        finally:
            self._done.set()
            with contextlib.suppress(OSError):
                os.close(self._fd)

    def wait_end(self, timeout: float) -> bool:
        """Wait until the stream ended (the server and its children closed stderr); True when it did."""
        return self._done.wait(timeout)

    def lines(self) -> tuple[str, ...]:
        """The checked last lines written so far (``checked_lines``)."""
        with self._lock:
            data = bytes(self._buf)
        return checked_lines(data)
