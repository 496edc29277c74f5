"""shim-http's use of the shared loopback listener rules (``transport.loopback``), and its SSE parser.

Reading follows SPEC 13.2: one deadline for the whole request read, at most 64 KiB of header bytes and a
``Content-Length`` of at most 8 MiB (any failure is a bare 400).  ``provenance_error`` refuses a request
target that is not a path, then applies the shared Host/Origin/Content-Type checks (SPEC 13.1) before
anything is forwarded.  Nothing here keeps or prints header values.
"""

from __future__ import annotations

import socket

from ..limits import MAX_HTTP_BODY_BYTES, MAX_HTTP_HEADER_BYTES
from ..transport import loopback
from ..transport.loopback import Request, error_response

__all__ = [
    "TARGET_NOT_A_PATH",
    "SSEParser",
    "provenance_error",
    "read_request",
]

TARGET_NOT_A_PATH = "request target must be a path"


def read_request(sock: socket.socket, *, timeout: float) -> Request:
    """Read one request within shim-http's bounds (``transport.loopback.read_request``).

    Raises:
        BadRequest: see ``transport.loopback.read_request``.
    """
    return loopback.read_request(sock, timeout=timeout, max_header_bytes=MAX_HTTP_HEADER_BYTES,
                                 max_body_bytes=MAX_HTTP_BODY_BYTES)


def provenance_error(request: Request) -> bytes | None:
    """A request target that is not a path (absolute-form or authority-form, RFC 9112 3.2) is refused
    first: the proxy never forwards to a target the client names.  Then the shared checks.

    Returns:
        The complete refusal response (400, 403 or 415 with SPEC's bodies), or None to proceed.
    """
    if not request.target.startswith("/"):
        return error_response(400, TARGET_NOT_A_PATH)
    return loopback.provenance_error(request)


class SSEParser:
    """Incremental ``text/event-stream`` parser that yields each event's ``data`` (CRLF normalised)."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._data: list[bytes] = []

    @property
    def pending(self) -> int:
        """Bytes held for the event being read (its data lines so far and the unfinished line)."""
        return len(self._buf) + sum(len(d) for d in self._data)

    def feed(self, chunk: bytes) -> list[bytes]:
        """Consume bytes; return the data of every event completed by them (empty data skipped)."""
        self._buf += chunk
        events: list[bytes] = []
        pos = 0
        while True:
            nl = self._buf.find(b"\n", pos)
            cr = self._buf.find(b"\r", pos)
            if cr >= 0 and (nl < 0 or cr < nl):
                if cr + 1 == len(self._buf):
                    break  # a CR at the end may be the first half of CRLF
                end, step = cr, 2 if self._buf[cr + 1: cr + 2] == b"\n" else 1
            elif nl >= 0:
                end, step = nl, 1
            else:
                break
            self._line(bytes(self._buf[pos:end]), events)
            pos = end + step
        del self._buf[:pos]
        return events

    def _line(self, line: bytes, events: list[bytes]) -> None:
        if not line:
            if self._data:
                data = b"\n".join(self._data)
                if data:
                    events.append(data)
            self._data = []
            return
        name, colon, value = line.partition(b":")
        if name == b"data":  # "data" without a colon is a data line with an empty value
            self._data.append(value[1:] if colon and value.startswith(b" ") else value)
