"""One shim-http exchange: read and check the request, forward it upstream, relay or hand over the answer.

A request is read under one deadline and checked (SPEC 13.1-13.2) before anything is forwarded; its body
is an outbound frame of a fresh correlation scope, with the content-free facts of its headers
(``http_headers.http_facts``).  Its end-to-end headers are forwarded (``http_headers``).  A JSON (or other
non-stream) answer is relayed whole by ``http_relay``; an event stream is handed to ``http_streams`` so
that it never holds a worker.  When the exchange ends (the answer relayed, a failure, or the stream
closed), an ``end`` frame tells the recorder to journal and forget the scope's unanswered requests.  A
protected-resource metadata request (OAuth discovery) goes to the same path on the upstream's origin and
its document is relayed with the shim's URL as its resource; it is not MCP traffic and is not recorded.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import uuid
from collections.abc import Callable

from ..limits import MAX_HTTP_BODY_BYTES
from ..transport.loopback import BadRequest, Request, error_response, response_head
from ..transport.policy import Endpoint
from .http_headers import Rewriter, forward_headers, http_facts, is_metadata_path, relayed_headers
from .http_proxy import provenance_error, read_request
from .http_relay import media_type, read_body, relay_response
from .http_streams import Stream, Streams
from .recorder import Frame, Recorder

__all__ = ["Exchanges"]


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
        rewriter = Rewriter(self._endpoint, request.values("host")[0])
        if is_metadata_path(request.target):
            self._metadata(conn, request, rewriter)
            return False
        scope = str(uuid.uuid4())
        sent = Frame("outbound", request.body, scope, http=http_facts(request)) if request.body else None
        if sent is not None:
            self._recorder.submit(sent)

        def end() -> None:  # requests of this exchange left unanswered are journaled and forgotten
            if sent is not None:
                self._recorder.submit(Frame("end", None, scope))

        handed = False
        try:
            handed = self._forward(conn, request, rewriter, scope, sent, end)
        finally:
            if not handed:
                end()
        return handed

    def _send(self, upstream: http.client.HTTPConnection, request: Request, path: str) -> None:
        upstream.putrequest(request.method, path)  # adds Host and "Accept-Encoding: identity"
        for name, value in forward_headers(request, self._auth):
            upstream.putheader(name, value)
        if request.body or request.method in ("POST", "PUT", "PATCH"):
            upstream.putheader("Content-Length", str(len(request.body)))
        upstream.endheaders(request.body or None)

    def _forward(self, conn: socket.socket, request: Request, rewriter: Rewriter, scope: str,
                 sent: Frame | None, end: Callable[[], None]) -> bool:
        upstream = self._connect()
        handed = False
        tracked: socket.socket | None = None  # http.client drops ``upstream.sock`` once a body is read
        try:
            try:
                upstream.connect()
                tracked = upstream.sock
                self._track(tracked, True)
                self._send(upstream, request, self._endpoint.path)
                if sent is not None:
                    sent.forwarded()
                response = upstream.getresponse()
            except (OSError, http.client.HTTPException):
                conn.sendall(error_response(502))
                return False
            kept = relayed_headers(response.getheaders(), rewriter.challenge)
            if media_type(response) != "text/event-stream":
                relay_response(conn, response, kept, scope, self._recorder.submit)
                return False
            self._track(tracked, False)  # the stream owns both connections from here on
            handed = self._streams.start(Stream(conn, upstream, response, kept, scope, end))
            return handed
        finally:
            if not handed:
                self._track(tracked, False)
                upstream.close()

    def _metadata(self, conn: socket.socket, request: Request, rewriter: Rewriter) -> None:
        """Relay a protected-resource metadata request to the upstream's origin, rewriting its resource."""
        upstream = self._connect()
        try:
            try:
                upstream.connect()
                self._send(upstream, request, request.target)
                response = upstream.getresponse()
            except (OSError, http.client.HTTPException):
                conn.sendall(error_response(502))
                return
            body = read_body(conn, response)
            if body is None:
                return
            if len(body) > MAX_HTTP_BODY_BYTES:
                conn.sendall(error_response(502))
                return
            if response.status == 200:
                body = rewriter.metadata(body, request.target)
            kept = relayed_headers(response.getheaders(), rewriter.challenge)
            conn.sendall(response_head(response.status, [*kept, ("Content-Length", str(len(body)))]) + body)
        finally:
            upstream.close()

    def _connect(self) -> http.client.HTTPConnection:
        ep, timeout = self._endpoint, self._timeout_s
        if ep.scheme == "https":
            return http.client.HTTPSConnection(ep.host, ep.port, timeout=timeout,
                                               context=ssl.create_default_context())
        return http.client.HTTPConnection(ep.host, ep.port, timeout=timeout)
