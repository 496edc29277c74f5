"""Relaying one upstream answer to the client, and handing its frames to the recorder (SPEC 13.2).

JSON (and any other non-stream) bodies are read whole, at most 8 MiB, and sent with a Content-Length;
over the bound the exchange is aborted and a content-free frame is recorded.  ``text/event-stream``
answers are relayed by ``http_streams``.  The headers relayed are ``http_headers``' to decide.
"""

from __future__ import annotations

import http.client
import socket
from collections.abc import Callable

from ..limits import MAX_HTTP_BODY_BYTES
from ..transport.loopback import error_response, response_head
from .recorder import Frame

__all__ = ["media_type", "read_body", "relay_response"]


def media_type(response: http.client.HTTPResponse) -> str:
    """The response's media type, lowercase, without parameters."""
    return (response.getheader("content-type") or "").split(";", 1)[0].strip().lower()


def read_body(conn: socket.socket, response: http.client.HTTPResponse) -> bytes | None:
    """The whole body of a non-stream ``response`` (one byte over the bound at most); None, with a 502
    sent, when the upstream failed while it was read."""
    try:
        return response.read(MAX_HTTP_BODY_BYTES + 1)
    except (OSError, http.client.HTTPException):
        conn.sendall(error_response(502))
        return None


def relay_response(conn: socket.socket, response: http.client.HTTPResponse, kept: list[tuple[str, str]],
                   scope: str, submit: Callable[[Frame], None]) -> None:
    """Relay a non-stream ``response`` to ``conn``; its body goes to ``submit`` before it is sent.

    Args:
        conn: the client connection.
        response: the upstream response (status and headers read).
        kept: the headers to relay.
        scope: the exchange's correlation scope.
        submit: the recorder's ``submit``.

    Raises:
        OSError: the client connection failed while a non-stream body was being sent.
    """
    body = read_body(conn, response)
    if body is None:
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
