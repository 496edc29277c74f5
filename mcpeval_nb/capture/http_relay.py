"""Relaying one upstream answer to the client, and handing its frames to the recorder (SPEC 13.2).

JSON (and any other non-stream) bodies are read whole, at most 8 MiB, and sent with a Content-Length;
over the bound the exchange is aborted and a content-free frame is recorded.  ``text/event-stream``
answers are relayed by ``http_streams``.  Only the response header allow-list is relayed.
"""

from __future__ import annotations

import http.client
import socket
from collections.abc import Callable

from ..limits import MAX_HTTP_BODY_BYTES
from ..transport.loopback import error_response, response_head
from .recorder import Frame

__all__ = ["RESPONSE_HEADERS", "media_type", "relay_response", "relayed_headers"]

RESPONSE_HEADERS = ("content-type", "mcp-protocol-version", "mcp-session-id")


def relayed_headers(response: http.client.HTTPResponse) -> list[tuple[str, str]]:
    """The response headers on the allow-list, in arrival order."""
    return [(k, v) for k, v in response.getheaders() if k.lower() in RESPONSE_HEADERS]


def media_type(response: http.client.HTTPResponse) -> str:
    """The response's media type, lowercase, without parameters."""
    return (response.getheader("content-type") or "").split(";", 1)[0].strip().lower()


def relay_response(conn: socket.socket, response: http.client.HTTPResponse, scope: str,
                   submit: Callable[[Frame], None]) -> None:
    """Relay a non-stream ``response`` to ``conn``; its body goes to ``submit`` before it is sent.

    Args:
        conn: the client connection.
        response: the upstream response (status and headers read).
        scope: the exchange's correlation scope.
        submit: the recorder's ``submit``.

    Raises:
        OSError: the client connection failed while a non-stream body was being sent.
    """
    kept = relayed_headers(response)
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
