"""The loopback listener rules shared by ``serve`` and ``shim-http`` (SPEC 13.1, 13.2): one implementation.

- ``read_request``: one request per connection under one deadline for the whole read, a request line of
  exactly ``<METHOD> <path> HTTP/1.1``, bounded header bytes, header names ``[A-Za-z0-9-]+``, values
  without ASCII control characters, one ``Content-Length`` that parses (missing: 0) and is within the
  caller's body bound, no ``Transfer-Encoding``, no bytes past the body.  Any failure is ``BadRequest``.
- ``provenance_error``: ``Host``, ``Origin`` and ``Content-Type`` at most once each; an ``Origin`` must be
  a loopback origin (``null`` is not); a ``Host`` is required and must name a loopback host; a POST
  must carry ``Content-Type: application/json``.  Refusals are SPEC's statuses and ``{"error": ...}``
  bodies.  Applied to every request before anything is forwarded (shim-http) or executed (serve).
- ``response_head`` / ``error_response`` / ``json_response``: ``Connection: close`` responses.
- ``listen_socket``, ``bound_address``, ``endpoint_url`` and ``run_until_signalled``: a listener's
  socket, its address and URL, and the SIGTERM/SIGINT run both commands use.

Nothing here keeps, logs or echoes a header value or a body.
"""

from __future__ import annotations

import re
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import UsageError
from .policy import is_loopback_host, url_host

__all__ = [
    "BadRequest",
    "Listener",
    "Request",
    "bound_address",
    "endpoint_url",
    "error_response",
    "is_loopback_host_header",
    "is_loopback_origin",
    "json_response",
    "provenance_error",
    "read_request",
    "listen_socket",
    "response_head",
    "run_until_signalled",
]

_REQUEST_LINE = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+) ([\x21-\x7e]+) HTTP/1\.1")
_HEADER_NAME = re.compile(r"[A-Za-z0-9-]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
REASONS = {200: "OK", 202: "Accepted", 204: "No Content", 400: "Bad Request", 403: "Forbidden",
           404: "Not Found", 405: "Method Not Allowed", 413: "Payload Too Large",
           415: "Unsupported Media Type", 500: "Internal Server Error", 502: "Bad Gateway",
           503: "Service Unavailable", 504: "Gateway Timeout"}
ONCE_MESSAGE = "Host, Origin, and Content-Type may appear only once"
ORIGIN_MESSAGE = "Origin is not a loopback origin"
HOST_REQUIRED_MESSAGE = "Host header is required"
HOST_MESSAGE = "Host is not a loopback host"
CONTENT_TYPE_MESSAGE = "Content-Type must be application/json"


def is_loopback_host_header(value: str) -> bool:
    """The Host check of SPEC 13.1: no ``/ @ ? # \\``, and ``http://<value>/`` has a loopback host.

    Args:
        value: the Host header value (surrounding whitespace is ignored).

    Returns:
        True when the request names a loopback host (port optional).
    """
    value = value.strip()
    if not value or any(c in value for c in "/@?#\\"):
        return False
    host = url_host(f"http://{value}/")
    return host is not None and is_loopback_host(host)


def is_loopback_origin(value: str) -> bool:
    """The Origin check of SPEC 13.1: an http(s) URL whose host is loopback; ``null`` is not.

    Args:
        value: the Origin header value (surrounding whitespace is ignored).

    Returns:
        True for ``http(s)://localhost``, ``127.x.y.z`` or ``[::1]`` origins with any port.
    """
    host = url_host(value.strip())
    return host is not None and is_loopback_host(host)


class BadRequest(Exception):
    """The request could not be read or parsed within the bounds."""


@dataclass(frozen=True)
class Request:
    """A parsed request.  Header values are kept in memory only (for forwarding, in shim-http).

    Attributes:
        method: the request method.
        target: the request target.
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


def _content_length(headers: tuple[tuple[str, str], ...], max_body: int) -> int:
    values = {v for k, v in headers if k == "content-length"}
    if any(k == "transfer-encoding" for k, _ in headers) or len(values) > 1:
        raise BadRequest()
    if not values:
        return 0
    text = values.pop()
    if not (text.isascii() and text.isdigit()) or int(text) > max_body:
        raise BadRequest()
    return int(text)


def read_request(sock: socket.socket, *, timeout: float, max_header_bytes: int,
                 max_body_bytes: int) -> Request:
    """Read one request from ``sock`` under a single deadline.

    Args:
        sock: the accepted connection.
        timeout: seconds for the whole read (request line, headers and body).
        max_header_bytes: bound on the request line and header lines (the blank line not counted).
        max_body_bytes: bound on ``Content-Length``.

    Raises:
        BadRequest: timeout, early close, bad request line or headers, header bytes over the bound, or an
            unparsable or oversized Content-Length, or bytes past the body.
    """
    deadline = time.monotonic() + timeout
    buf = bytearray()
    while (end := buf.find(b"\r\n\r\n")) < 0:
        if len(buf) > max_header_bytes + 4:
            raise BadRequest()
        buf += _recv(sock, deadline, 65536)
    if end > max_header_bytes:
        raise BadRequest()
    method, target, headers = _parse_headers(bytes(buf[:end]))
    length = _content_length(headers, max_body_bytes)
    body = bytearray(buf[end + 4:])
    if len(body) > length:
        raise BadRequest()  # pipelined or trailing bytes: one request per connection
    while len(body) < length:
        body += _recv(sock, deadline, min(1 << 20, length - len(body)))
    return Request(method, target, headers, bytes(body))


def response_head(status: int, headers: list[tuple[str, str]]) -> bytes:
    """Status line and headers (plus ``Connection: close``), ending with the blank line."""
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Unknown')}"]
    lines += [f"{k}: {v}" for k, v in headers]
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def json_response(status: int, body: bytes) -> bytes:
    """A complete ``Connection: close`` response carrying a JSON body."""
    return response_head(status, [("Content-Type", "application/json"),
                                  ("Content-Length", str(len(body)))]) + body


def error_response(status: int, message: str | None = None) -> bytes:
    """A complete ``Connection: close`` response, with a ``{"error": ...}`` JSON body when given."""
    if message is None:
        return response_head(status, [("Content-Length", "0")])
    return json_response(status, ('{"error":"' + message + '"}').encode("ascii"))


def provenance_error(request: Request) -> bytes | None:
    """The Host/Origin checks (every request) and the Content-Type check (POST), SPEC 13.1-13.2.

    Returns:
        The complete refusal response (400, 403 or 415 with SPEC's bodies), or None to proceed.
    """
    hosts, origins, types = (request.values(n) for n in ("host", "origin", "content-type"))
    if len(hosts) > 1 or len(origins) > 1 or len(types) > 1:
        return error_response(400, ONCE_MESSAGE)
    if origins and not is_loopback_origin(origins[0]):
        return error_response(403, ORIGIN_MESSAGE)
    if not hosts:
        return error_response(400, HOST_REQUIRED_MESSAGE)
    if not is_loopback_host_header(hosts[0]):
        return error_response(403, HOST_MESSAGE)
    if request.method == "POST":
        media = types[0].split(";", 1)[0].strip().lower() if types else ""
        if media != "application/json":
            return error_response(415, CONTENT_TYPE_MESSAGE)
    return None


class Listener(Protocol):
    """What ``run_until_signalled`` runs: a bound listener with an accept loop."""

    @property
    def url(self) -> str: ...  # pragma: no cover - protocol

    def serve_forever(self) -> None: ...  # pragma: no cover

    def stop(self) -> None: ...  # pragma: no cover

    def close(self) -> None: ...  # pragma: no cover

    @property
    def wakeup_fd(self) -> int: ...  # pragma: no cover - a non-blocking descriptor serve_forever watches


def listen_socket(ip: str, port: int, *, backlog: int) -> socket.socket:
    """A TCP socket bound to ``(ip, port)`` and listening (``SO_REUSEADDR``); closed again on failure.

    Raises:
        OSError: the address could not be bound.
    """
    sock = socket.socket(socket.AF_INET6 if ":" in ip else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((ip, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock


def bound_address(sock: socket.socket) -> tuple[str, int]:
    """The bound ``(ip, port)`` of a listening socket."""
    name = sock.getsockname()
    return str(name[0]), int(name[1])


def endpoint_url(address: tuple[str, int], path: str) -> str:
    """``http://<ip>:<port><path>`` (an IPv6 address bracketed)."""
    ip, port = address
    return f"http://{f'[{ip}]' if ':' in ip else ip}:{port}{path}"


def run_until_signalled(make: Callable[[], Listener], announce: Callable[[str], None]) -> int:
    """Build a listener, announce its URL and serve until SIGTERM or SIGINT (handlers installed on the
    main thread only, restored afterwards); the listener is closed however the loop ends.

    A signal sent to the process may be taken by any of its threads.  Python runs the handler on the main
    thread only, and only once that thread runs again, so an accept loop blocked in ``select`` would never
    see it: the listener's ``wakeup_fd`` is installed as the signal wakeup descriptor, so the signal itself
    wakes the loop, whichever thread took it.

    Returns:
        0 after a clean shutdown.

    Raises:
        UsageError: the listen address could not be bound (``cannot listen on the --listen address``).
    """
    try:
        listener = make()
    except OSError as exc:
        raise UsageError(f"cannot listen on the --listen address: {exc.strerror}") from None
    previous: dict[signal.Signals, Any] = {}
    previous_fd: int | None = None
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.signal(signum, lambda _s, _f: listener.stop())
        previous_fd = signal.set_wakeup_fd(listener.wakeup_fd, warn_on_full_buffer=False)
    try:
        announce(listener.url)
        listener.serve_forever()
    finally:
        if previous_fd is not None:  # before close() frees the descriptor (its number may be reused)
            signal.set_wakeup_fd(previous_fd)
        listener.close()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 0
