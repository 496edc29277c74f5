"""One shim-http exchange: read and check the request, forward it upstream, relay or hand over the answer.

A request is read under one deadline and checked (SPEC 13.1-13.2) before anything is forwarded; its body
is an outbound frame of a fresh correlation scope.  A JSON (or other non-stream) answer is relayed
whole by ``http_relay``; an event stream is handed to ``http_streams`` so that it never holds a worker.
When the exchange ends (the answer relayed, a failure, or the stream closed), an ``end`` frame tells the
recorder to journal and forget the scope's unanswered requests.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import uuid
from collections.abc import Callable

from ..transport.loopback import BadRequest, Request, error_response
from ..transport.policy import Endpoint
from .http_proxy import provenance_error, read_request
from .http_relay import media_type, relay_response, relayed_headers
from .http_streams import Stream, Streams
from .recorder import Frame, Recorder

__all__ = ["REQUEST_HEADERS", "Exchanges"]

REQUEST_HEADERS = ("accept", "content-type", "mcp-protocol-version", "mcp-session-id", "last-event-id",
                   "authorization", "origin")


class Exchanges:
    """How a shim-http worker serves connections.

    Args:
        endpoint: the checked upstream endpoint.
        authorization: Authorization for requests that carry none (memory only), or None.
        timeout_s: the request-read deadline and the upstream connect/read timeout.
        recorder: the listener's recorder.
        streams: the listener's event streams.
        track: ``track(sock, add)`` registers an upstream socket the listener shuts down on close.
    """

    def __init__(self, *, endpoint: Endpoint, authorization: str | None, timeout_s: float, recorder: Recorder,
                 streams: Streams, track: Callable[[socket.socket | None, bool], None]) -> None:
        self._endpoint = endpoint
        self._auth = authorization
        self._timeout_s = timeout_s
        self._recorder = recorder
        self._streams = streams
        self._track = track

    def serve(self, conn: socket.socket) -> bool:
        """Serve the one request of a connection.

        Args:
            conn: the accepted client connection.

        Returns:
            True when an event stream took the connection over (the caller must not close it).

        Raises:
            OSError: the client connection failed while an answer was being sent.
        """
        try:
            request = read_request(conn, timeout=self._timeout_s)
        except BadRequest:
            conn.sendall(error_response(400))
            return False
        refusal = provenance_error(request)
        if refusal is not None:
            conn.sendall(refusal)
            return False
        scope = str(uuid.uuid4())
        sent = Frame("outbound", request.body, scope) if request.body else None
        if sent is not None:
            self._recorder.submit(sent)

        def end() -> None:  # requests of this exchange left unanswered are journaled and forgotten
            if sent is not None:
                self._recorder.submit(Frame("end", None, scope))

        handed = False
        try:
            handed = self._forward(conn, request, scope, sent, end)
        finally:
            if not handed:
                end()
        return handed

    def _forward(self, conn: socket.socket, request: Request, scope: str, sent: Frame | None,
                 end: Callable[[], None]) -> bool:
        upstream = self._connect()
        handed = False
        tracked: socket.socket | None = None  # http.client drops ``upstream.sock`` once a body is read
        try:
            try:
                upstream.connect()
                tracked = upstream.sock
                self._track(tracked, True)
                upstream.request(request.method, self._endpoint.path, body=request.body or None,
                                 headers=self._forward_headers(request))
                if sent is not None:
                    sent.forwarded()
                response = upstream.getresponse()
            except (OSError, http.client.HTTPException):
                conn.sendall(error_response(502))
                return False
            if media_type(response) != "text/event-stream":
                relay_response(conn, response, scope, self._recorder.submit)
                return False
            self._track(tracked, False)  # the stream owns both connections from here on
            handed = self._streams.start(
                Stream(conn, upstream, response, relayed_headers(response), scope, end))
            return handed
        finally:
            if not handed:
                self._track(tracked, False)
                upstream.close()

    def _connect(self) -> http.client.HTTPConnection:
        ep, timeout = self._endpoint, self._timeout_s
        if ep.scheme == "https":
            return http.client.HTTPSConnection(ep.host, ep.port, timeout=timeout,
                                               context=ssl.create_default_context())
        return http.client.HTTPConnection(ep.host, ep.port, timeout=timeout)

    def _forward_headers(self, request: Request) -> dict[str, str]:
        headers = {name: value for name, value in request.headers if name in REQUEST_HEADERS}
        if "authorization" not in headers and self._auth is not None:
            headers["authorization"] = self._auth
        return headers
