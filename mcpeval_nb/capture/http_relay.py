"""Relaying one upstream answer to the client, and handing its frames to the recorder (SPEC 13.2).

JSON (and any other non-stream) bodies are read whole, at most 8 MiB, and sent with a Content-Length;
``text/event-stream`` bodies are streamed as they arrive, 8 MiB in total, and every SSE ``data:`` event is
a frame.  Over the bound the exchange is aborted and a content-free frame is recorded.  Only the response
header allow-list is relayed.
"""

from __future__ import annotations

import http.client
import socket
from collections.abc import Callable

from ..limits import MAX_HTTP_BODY_BYTES
from .http_proxy import SSEParser, error_response, response_head
from .recorder import Frame

__all__ = ["RESPONSE_HEADERS", "relay_response"]

RESPONSE_HEADERS = ("content-type", "mcp-protocol-version", "mcp-session-id")


def relay_response(conn: socket.socket, response: http.client.HTTPResponse, scope: str,
                   submit: Callable[[Frame], None]) -> None:
    """Relay ``response`` to ``conn``; every inbound frame goes to ``submit`` before it is sent.

    Args:
        conn: the client connection.
        response: the upstream response (status and headers read).
        scope: the exchange's correlation scope.
        submit: the recorder's ``submit``.

    Raises:
        OSError: the client connection failed while a non-stream body was being sent.
    """
    kept = [(k, v) for k, v in response.getheaders() if k.lower() in RESPONSE_HEADERS]
    media = (response.getheader("content-type") or "").split(";", 1)[0].strip().lower()
    if media == "text/event-stream":
        _relay_stream(conn, response, kept, scope, submit)
        return
    try:
        body = response.read(MAX_HTTP_BODY_BYTES + 1)
    except (OSError, http.client.HTTPException):
        conn.sendall(error_response(502))
        return
    if len(body) > MAX_HTTP_BODY_BYTES:
        submit(Frame("inbound", None, scope))
        conn.sendall(error_response(502))
        return
    frame = Frame("inbound", body, scope) if body else None
    if frame is not None:
        submit(frame)
    conn.sendall(response_head(response.status, [*kept, ("Content-Length", str(len(body)))]) + body)
    if frame is not None:
        frame.forwarded()


def _relay_stream(conn: socket.socket, response: http.client.HTTPResponse, kept: list[tuple[str, str]],
                  scope: str, submit: Callable[[Frame], None]) -> None:
    conn.sendall(response_head(response.status, kept))
    parser, total = SSEParser(), 0
    while True:
        try:
            chunk = response.read1(65536)
        except (OSError, http.client.HTTPException):
            return  # upstream idle past the timeout or gone: end the stream
        if not chunk:
            return
        total += len(chunk)
        if total > MAX_HTTP_BODY_BYTES:
            submit(Frame("inbound", None, scope))
            return
        frames = [Frame("inbound", data, scope) for data in parser.feed(chunk)]
        for frame in frames:
            submit(frame)
        try:
            conn.sendall(chunk)
        except OSError:
            return
        for frame in frames:
            frame.forwarded()
