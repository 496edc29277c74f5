"""HTTP/1.1 plumbing for shim-http: bounded request reading, provenance checks, response heads.

Reading follows SPEC 13.2: one deadline for the whole request read, a request line of exactly
``<METHOD> <path> HTTP/1.1``, at most 64 KiB of header bytes, header names ``[A-Za-z0-9-]+``, values
without ASCII control characters, a ``Content-Length`` that parses and is at most 8 MiB; any failure is a
bare 400.  ``provenance_error`` applies the Host/Origin checks to every request and the Content-Type check
to every POST (SPEC 13.1) before anything is forwarded.  Nothing here keeps or prints header values.
"""

from __future__ import annotations

import re
import socket
import time
from dataclasses import dataclass

from ..limits import MAX_HTTP_BODY_BYTES, MAX_HTTP_HEADER_BYTES
from ..transport.policy import is_loopback_host_header, is_loopback_origin

__all__ = [
    "TARGET_NOT_A_PATH",
    "BadRequest",
    "Request",
    "SSEParser",
    "error_response",
    "provenance_error",
    "read_request",
    "response_head",
]

_REQUEST_LINE = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+) ([\x21-\x7e]+) HTTP/1\.1")
_HEADER_NAME = re.compile(r"[A-Za-z0-9-]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
REASONS = {200: "OK", 202: "Accepted", 204: "No Content", 400: "Bad Request", 403: "Forbidden",
           404: "Not Found", 405: "Method Not Allowed", 413: "Payload Too Large",
           415: "Unsupported Media Type", 500: "Internal Server Error", 502: "Bad Gateway",
           503: "Service Unavailable", 504: "Gateway Timeout"}


TARGET_NOT_A_PATH = "request target must be a path"


class BadRequest(Exception):
    """The request could not be read or parsed within the bounds (answered with a bare 400)."""


@dataclass(frozen=True)
class Request:
    """A parsed request.  Header values are kept in memory only for forwarding.

    Attributes:
        method: the request method.
        target: the request target (not forwarded: every request goes to the upstream path).
        headers: ``(lowercase name, value)`` pairs in arrival order, values trimmed.
        body: exactly ``Content-Length`` bytes.
    """

    method: str
    target: str
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def values(self, name: str) -> list[str]:
        """Every value of a header (name case-insensitive)."""
        return [v for k, v in self.headers if k == name]


def _recv(sock: socket.socket, deadline: float, size: int) -> bytes:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise BadRequest()
    sock.settimeout(remaining)
    try:
        data = sock.recv(size)
    except OSError:
        raise BadRequest() from None
    if not data:
        raise BadRequest()
    return data


def _parse_headers(block: bytes) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    lines = block.split(b"\r\n")
    match = _REQUEST_LINE.fullmatch(lines[0])
    if match is None:
        raise BadRequest()
    headers: list[tuple[str, str]] = []
    for raw in lines[1:]:
        try:
            line = raw.decode("ascii")
        except UnicodeDecodeError:
            raise BadRequest() from None
        name, colon, value = line.partition(":")
        if not colon or _HEADER_NAME.fullmatch(name) is None or _CONTROL.search(value):
            raise BadRequest()
        headers.append((name.lower(), value.strip(" \t")))
    return match.group(1).decode("ascii"), match.group(2).decode("ascii"), tuple(headers)


def _content_length(headers: tuple[tuple[str, str], ...]) -> int:
    values = {v for k, v in headers if k == "content-length"}
    if any(k == "transfer-encoding" for k, _ in headers) or len(values) > 1:
        raise BadRequest()
    if not values:
        return 0
    text = values.pop()
    if not (text.isascii() and text.isdigit()) or int(text) > MAX_HTTP_BODY_BYTES:
        raise BadRequest()
    return int(text)


def read_request(sock: socket.socket, *, timeout: float) -> Request:
    """Read one request from ``sock`` under a single deadline.

    Raises:
        BadRequest: timeout, early close, bad request line or headers, header bytes over 64 KiB, or a
            missing, unparsable or oversized Content-Length.
    """
    deadline = time.monotonic() + timeout
    buf = bytearray()
    while (end := buf.find(b"\r\n\r\n")) < 0:
        if len(buf) > MAX_HTTP_HEADER_BYTES + 4:
            raise BadRequest()
        buf += _recv(sock, deadline, 65536)
    if end > MAX_HTTP_HEADER_BYTES:
        raise BadRequest()
    method, target, headers = _parse_headers(bytes(buf[:end]))
    length = _content_length(headers)
    body = bytearray(buf[end + 4:])
    if len(body) > length:
        raise BadRequest()  # pipelined or trailing bytes: one request per connection
    while len(body) < length:
        body += _recv(sock, deadline, min(1 << 20, length - len(body)))
    return Request(method, target, headers, bytes(body))


def error_response(status: int, message: str | None = None) -> bytes:
    """A complete ``Connection: close`` response, with a ``{"error": ...}`` JSON body when given."""
    body = b"" if message is None else ('{"error":"' + message + '"}').encode("ascii")
    extra = {"Content-Type": "application/json"} if message is not None else {}
    return response_head(status, [*extra.items(), ("Content-Length", str(len(body)))]) + body


def response_head(status: int, headers: list[tuple[str, str]]) -> bytes:
    """Status line and headers (plus ``Connection: close``), ending with the blank line."""
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Unknown')}"]
    lines += [f"{k}: {v}" for k, v in headers]
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def provenance_error(request: Request) -> bytes | None:
    """The Host/Origin checks (every request) and the Content-Type check (POST), SPEC 13.1-13.2.

    A request target that is not a path (absolute-form or authority-form, RFC 9112 3.2) is refused first:
    the proxy never forwards to a target the client names.

    Returns:
        The complete refusal response (400, 403 or 415 with SPEC's bodies), or None to proceed.
    """
    if not request.target.startswith("/"):  # absolute-form (http://other/...) or authority-form (host:port)
        return error_response(400, TARGET_NOT_A_PATH)
    hosts, origins, types = (request.values(n) for n in ("host", "origin", "content-type"))
    if len(hosts) > 1 or len(origins) > 1 or len(types) > 1:
        return error_response(400, "Host, Origin, and Content-Type may appear only once")
    if origins and not is_loopback_origin(origins[0]):
        return error_response(403, "Origin is not a loopback origin")
    if not hosts:
        return error_response(400, "Host header is required")
    if not is_loopback_host_header(hosts[0]):
        return error_response(403, "Host is not a loopback host")
    if request.method == "POST":
        media = types[0].split(";", 1)[0].strip().lower() if types else ""
        if media != "application/json":
            return error_response(415, "Content-Type must be application/json")
    return None


class SSEParser:
    """Incremental ``text/event-stream`` parser that yields each event's ``data`` (CRLF normalised)."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._data: list[bytes] = []

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
