"""A bounded Server-Sent Events reader for Streamable HTTP answers.

Yields the ``data`` of each dispatched ``message`` event (``data:`` lines joined with ``\\n``; CRLF
normalised; comments, ``id:`` and ``retry:`` ignored; events of other types skipped; an unterminated
event at the end of the stream is dropped, as the SSE rules say).  The whole stream counts against one
byte limit, and no line may exceed what is left of it, so memory stays bounded by the limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from . import jsonrpc

__all__ = ["SseReader"]

STREAM_TOO_LARGE = "HTTP response body exceeds 8 MiB"


class _LineSource(Protocol):
    def readline(self, limit: int = -1, /) -> bytes: ...  # pragma: no cover - protocol


class SseReader:
    """Iterate over the message events of an SSE stream.

    Args:
        source: a binary stream with ``readline(limit)`` (an ``http.client.HTTPResponse``).
        limit: the most bytes the whole stream may carry.

    Raises:
        TransportError: ``transport-error`` when the stream exceeds ``limit`` (while iterating).
    """

    def __init__(self, source: _LineSource, *, limit: int) -> None:
        self._source = source
        self._left = limit

    def _lines(self) -> Iterator[bytes]:
        while True:
            line = self._source.readline(self._left + 1)
            if not line:
                return
            self._left -= len(line)
            if self._left < 0:
                raise jsonrpc.failure(STREAM_TOO_LARGE)
            if not line.endswith(b"\n"):
                return  # the stream ended mid-line: drop the partial event
            yield line.rstrip(b"\n").rstrip(b"\r")

    def __iter__(self) -> Iterator[bytes]:
        data: list[bytes] = []
        event = b"message"
        for line in self._lines():
            if not line:
                if data and event == b"message":
                    yield b"\n".join(data)
                data, event = [], b"message"
                continue
            name, _, value = line.partition(b":")
            if value.startswith(b" "):
                value = value[1:]
            if name == b"data":
                data.append(value)
            elif name == b"event":
                event = value or b"message"
