"""The bounded Streamable HTTP channel (MCP 2025-06-18 transport; SPEC 13.2 policy).

Every client request is POSTed on its own connection by a worker thread that turns the answer (a JSON
body, or an SSE stream whose ``data:`` events carry messages) into messages on a queue of at most 16,
the same shape the stdio channel gives the session.  Notifications and replies to server requests are
POSTed from the caller's thread and must be accepted (2xx).

Limits: the URL must pass ``transport.policy.check_endpoint`` (loopback, or HTTPS with
``allow_remote_http``; no credentials, query or fragment); bodies are at most 8 MiB each way (an SSE
stream counts as one body); connect and write timeouts are 5 s and reads wait at most until the
request's deadline (never less than 5 s); redirects are refused, never followed; ``Mcp-Session-Id``
from the server is echoed on every later request and the negotiated ``MCP-Protocol-Version`` too.
``MCPEVAL_HTTP_AUTHORIZATION`` is validated as a header value, kept in memory, sent as
``Authorization`` and never printed, logged or persisted.

In the 2026-07-28 era (``set_modern``) the channel is stateless: no ``Mcp-Session-Id`` is kept or
sent, no GET stream is opened and no DELETE sent; each request carries the headers the session computed
(``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``: ``transport.headers``).  A 4xx
answer (other than 401/403) whose body is the JSON-RPC error for the request (-32020 header mismatch,
-32022 unsupported version, -32601 on 404, ...) is delivered as that response; any other 4xx fails the
request alone (the channel stays usable), which is what era negotiation needs.  ``abort(request_id)``
closes one request's stream: the revision's cancellation on HTTP (and the end of
``subscriptions/listen``).
"""

from __future__ import annotations

import contextlib
import http.client
import os
import queue
import socket
import ssl
import threading
import time
from collections.abc import Mapping
from typing import Any

from ..errors import TransportError, UsageError
from ..limits import DEFAULT_IO_TIMEOUT_S, MAX_HTTP_BODY_BYTES, MAX_QUEUED_FRAMES
from . import jsonrpc
from .jsonrpc import Incoming
from .policy import Endpoint, check_endpoint
from .sse import SseReader

__all__ = ["AUTHORIZATION_ENV", "HttpChannel", "read_authorization"]

AUTHORIZATION_ENV = "MCPEVAL_HTTP_AUTHORIZATION"
_MAX_AUTHORIZATION = 8 * 1024
_MAX_SESSION_ID = 1024
BODY_TOO_LARGE = "HTTP response body exceeds 8 MiB"
OUTGOING_BODY_TOO_LARGE = "outgoing HTTP body exceeds 8 MiB"
REDIRECT = "HTTP redirects are not followed"
UNREACHABLE = "HTTP endpoint could not be reached"
CONTENT_TYPE = "HTTP response has an unsupported content type"
SESSION_EXPIRED = "MCP HTTP session expired"
STREAM_ENDED = "MCP server closed the stream before answering"
_END = object()


class _Rejected(Exception):
    """A 4xx answer to a modern request (status and bounded body), handled by ``_reject``."""

    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(status)
        self.status = status
        self.body = body

_LISTEN_S = 3600.0
_NO_REQUEST: dict[str, Any] = {"id": None, "method": None}


def _shut(sock: socket.socket | None) -> None:
    """Shut a connection's socket down both ways: a worker blocked reading it wakes at once."""
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _header_safe(value: str, limit: int) -> bool:
    return 0 < len(value) <= limit and value == value.strip(" \t") and all(
        c == "\t" or 0x20 <= ord(c) <= 0x7E for c in value)


def read_authorization(environ: dict[str, str] | None = None) -> str | None:
    """Read and validate ``MCPEVAL_HTTP_AUTHORIZATION`` (never echoed).

    Args:
        environ: the environment to read (default ``os.environ``).

    Returns:
        The header value, or None when the variable is unset or empty.

    Raises:
        UsageError: the value is not a safe header value (control characters, non-ASCII, surrounding
            whitespace, longer than 8 KiB).
    """
    value = (os.environ if environ is None else environ).get(AUTHORIZATION_ENV, "")
    if value == "":
        return None
    if not _header_safe(value, _MAX_AUTHORIZATION):
        raise UsageError(f"{AUTHORIZATION_ENV} is not a valid HTTP header value")
    return value


class HttpChannel:
    """A Streamable HTTP MCP endpoint with hard limits.

    Args:
        url: the endpoint URL (checked by the endpoint policy; never echoed).
        allow_remote_http: allow a non-loopback HTTPS host.
        timeout: the default response deadline; socket reads wait at least 5 s.

    Raises:
        UsageError: the URL breaks the policy, or ``MCPEVAL_HTTP_AUTHORIZATION`` is invalid.
    """

    def __init__(self, url: str, *, allow_remote_http: bool = False,
                 timeout: float = DEFAULT_IO_TIMEOUT_S) -> None:
        self._endpoint: Endpoint = check_endpoint(url, allow_remote_http=allow_remote_http)
        self.__authorization = read_authorization()
        self._timeout = timeout
        self._queue: queue.Queue[object] = queue.Queue(maxsize=MAX_QUEUED_FRAMES)
        self._closed = threading.Event()
        self._lock = threading.Lock()
        # each open connection's socket, kept apart: http.client drops ``conn.sock`` once a response says
        # ``Connection: close`` while the response still reads from it (an SSE stream)
        self._connections: dict[http.client.HTTPConnection, socket.socket | None] = {}
        self._workers: set[threading.Thread] = set()
        self._failure: TransportError | None = None
        self._listening = False
        self._live: dict[int, socket.socket | None] = {}
        self._aborted_ids: set[int] = set()
        self._statuses: dict[int, int] = {}
        self._answered: dict[int, threading.Event] = {}  # the server answered a request's POST (or it ended)
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.modern: str | None = None

    def __repr__(self) -> str:
        return f"HttpChannel(loopback={self._endpoint.is_loopback}, session={self.session_id is not None})"

    # --- sending ----------------------------------------------------------------------------------------

    def set_modern(self, version: str | None) -> None:
        """Speak the stateless 2026-07-28 era at ``version`` from now on (None: the legacy era again)."""
        self.modern = version

    def send(self, message: dict[str, Any], *, deadline: float,
             headers: Mapping[str, str] | None = None) -> None:
        """POST one message; a request's answer arrives through ``receive``.

        Args:
            message: the JSON-RPC message.
            deadline: a ``time.monotonic()`` instant.
            headers: extra request headers (the modern era's ``MCP-Protocol-Version``/``Mcp-*``).

        Raises:
            TransportError: the body exceeds 8 MiB (nothing sent); for notifications and replies: the
                endpoint is unreachable, refused the message, redirected, or timed out.
        """
        if self._closed.is_set() or self._failure is not None:
            raise self._failure or jsonrpc.closed()
        body = jsonrpc.encode(message)[:-1]
        if len(body) > MAX_HTTP_BODY_BYTES:
            raise jsonrpc.refused(OUTGOING_BODY_TOO_LARGE)
        extra = dict(headers or {})
        if "method" in message and "id" in message:
            if message["method"] == "resources/subscribe":
                self.listen()
            if type(message["id"]) is int:
                with self._lock:
                    self._answered[message["id"]] = threading.Event()
            self._start(self._exchange, message, body, deadline, extra)
            return
        with self._open(deadline) as conn:
            try:
                response = self._post(conn, body, extra)
            except _Rejected as rejected:
                raise jsonrpc.failure(f"HTTP endpoint answered status {rejected.status}") from None
            self._drain(response)

    def abort(self, request_id: int) -> None:
        """Close the stream of one outstanding request (the modern era's cancellation on HTTP)."""
        with self._lock:
            sock = self._live.pop(request_id, None)
            self._aborted_ids.add(request_id)
        _shut(sock)

    def wait_answered(self, request_id: int, deadline: float) -> None:
        """Block until the server answered the request's POST (its status line and headers: it has the
        request), or its exchange ended, or ``deadline``.  Each request is posted by a worker thread, so
        a notification sent at once on the caller's own connection (a cancellation) could otherwise reach
        the server before the request it names, which the server then rightly ignores."""
        with self._lock:
            event = self._answered.get(request_id)
        if event is not None:
            event.wait(max(0.0, deadline - time.monotonic()))

    def _start(self, target: Any, *args: Any) -> None:
        worker = threading.Thread(target=target, args=args, name="mcpeval-http", daemon=True)
        with self._lock:
            self._workers = {w for w in self._workers if w.is_alive()} | {worker}
        worker.start()

    def listen(self) -> None:
        """Open the standalone GET stream for server-initiated messages, once per channel.

        Opened automatically when the client sends ``resources/subscribe`` and before the session waits
        for a notification.  The stream is auxiliary: a server that refuses it (405), or its loss, never
        fails the channel; its messages share the 16-message queue and its bytes the 8 MiB body bound.
        """
        with self._lock:
            if self._listening or self._closed.is_set() or self.modern is not None:
                return
            self._listening = True
        self._start(self._listen_loop)

    def _listen_loop(self) -> None:
        try:
            with self._open(time.monotonic() + _LISTEN_S) as conn:
                headers = self._headers()
                del headers["Content-Type"]
                headers["Accept"] = "text/event-stream"
                conn.request("GET", self._endpoint.path, headers=headers)
                response = conn.getresponse()
                kind = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
                if response.status != 200 or kind != "text/event-stream":
                    return
                for data in SseReader(response, limit=MAX_HTTP_BODY_BYTES):
                    self._deliver(data, _NO_REQUEST)
        except (TransportError, OSError, http.client.HTTPException):
            return

    def _headers(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.modern is not None:
            if self.__authorization is not None:
                headers["Authorization"] = self.__authorization
            headers.update(extra or {})
            return headers
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        if self.__authorization is not None:
            headers["Authorization"] = self.__authorization
        return headers

    @contextlib.contextmanager
    def _open(self, deadline: float) -> Any:
        endpoint = self._endpoint
        conn: http.client.HTTPConnection
        if endpoint.scheme == "https":
            conn = http.client.HTTPSConnection(endpoint.host, endpoint.port, timeout=DEFAULT_IO_TIMEOUT_S,
                                               context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(endpoint.host, endpoint.port, timeout=DEFAULT_IO_TIMEOUT_S)
        with self._lock:
            if self._closed.is_set():
                raise jsonrpc.closed()
            self._connections[conn] = None
        try:
            try:
                conn.connect()
            except (OSError, http.client.HTTPException):
                raise jsonrpc.failure(UNREACHABLE) from None
            assert conn.sock is not None
            with self._lock:
                self._connections[conn] = conn.sock
            conn.sock.settimeout(max(DEFAULT_IO_TIMEOUT_S, deadline - time.monotonic()))
            yield conn
        except TimeoutError:
            raise jsonrpc.timeout() from None
        except (OSError, http.client.HTTPException):
            raise jsonrpc.closed() from None
        finally:
            with self._lock:
                self._connections.pop(conn, None)
            conn.close()

    def _post(self, conn: http.client.HTTPConnection, body: bytes,
              extra: Mapping[str, str] | None = None) -> http.client.HTTPResponse:
        assert conn.sock is not None
        read_timeout = conn.sock.gettimeout()
        conn.sock.settimeout(DEFAULT_IO_TIMEOUT_S)
        conn.request("POST", self._endpoint.path, body=body, headers=self._headers(extra))
        conn.sock.settimeout(read_timeout)
        response = conn.getresponse()
        status = response.status
        if 300 <= status < 400:
            raise jsonrpc.failure(REDIRECT)
        if status == 404 and self.session_id is not None and self.modern is None:
            raise jsonrpc.closed(SESSION_EXPIRED)
        if status in (401, 403):
            raise jsonrpc.unauthorized(status, configured=self.__authorization is not None)
        if self.modern is not None and 400 <= status < 500:
            raise _Rejected(status, self._read_body(response))
        if not 200 <= status < 300:
            raise jsonrpc.failure(f"HTTP endpoint answered status {status}")
        session_id = response.getheader("Mcp-Session-Id")
        if self.modern is not None:
            session_id = None
        if session_id is not None and self.session_id is None:
            if not _header_safe(session_id, _MAX_SESSION_ID):
                raise jsonrpc.failure("HTTP session id is not a valid header value")
            self.session_id = session_id
        length = response.getheader("Content-Length")
        if length is not None and length.strip().isdigit() and int(length) > MAX_HTTP_BODY_BYTES:
            raise jsonrpc.failure(BODY_TOO_LARGE)
        return response

    @staticmethod
    def _read_body(response: http.client.HTTPResponse) -> bytes:
        chunks: list[bytes] = []
        total = 0
        while chunk := response.read(64 * 1024):
            total += len(chunk)
            if total > MAX_HTTP_BODY_BYTES:
                raise jsonrpc.failure(BODY_TOO_LARGE)
            chunks.append(chunk)
        return b"".join(chunks)

    def _drain(self, response: http.client.HTTPResponse) -> None:
        kind = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
        if kind == "text/event-stream":
            return  # an accepted notification needs no stream; closing the connection ends it
        self._read_body(response)

    # --- request workers ----------------------------------------------------------------------------------

    def _exchange(self, message: dict[str, Any], body: bytes, deadline: float,
                  extra: Mapping[str, str] | None = None) -> None:
        request_id = message.get("id")
        with self._lock:
            answered = self._answered.get(request_id) if type(request_id) is int else None
        try:
            with self._open(deadline) as conn:
                if type(request_id) is int:
                    with self._lock:
                        self._live[request_id] = self._connections.get(conn)
                try:
                    response = self._post(conn, body, extra)
                    if answered is not None:
                        answered.set()
                except _Rejected as rejected:
                    self._note_status(request_id, rejected.status)
                    self._reject(rejected, message)
                    return
                self._note_status(request_id, response.status)
                kind = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
                if response.status == 202:
                    return
                if kind == "application/json":
                    self._deliver_json(self._read_body(response), message)
                elif kind == "text/event-stream":
                    for data in SseReader(response, limit=MAX_HTTP_BODY_BYTES):
                        if self._deliver(data, message):
                            return
                    raise jsonrpc.closed(STREAM_ENDED)
                elif self._read_body(response):
                    raise jsonrpc.failure(CONTENT_TYPE)
        except TransportError as exc:
            aborted = type(request_id) is int and self._aborted(request_id)
            if not aborted and exc.reason != "transport-timeout" and not self._closed.is_set():
                self._failure = self._failure or exc
                self._put(_END)
        finally:
            if type(request_id) is int:
                with self._lock:
                    self._live.pop(request_id, None)
                    self._answered.pop(request_id, None)
            if answered is not None:
                answered.set()

    def _note_status(self, request_id: Any, status: int) -> None:
        if self.modern is not None and type(request_id) is int:
            with self._lock:
                if len(self._statuses) >= 64:
                    self._statuses.pop(next(iter(self._statuses)))
                self._statuses[request_id] = status

    def status_of(self, request_id: int) -> int | None:
        """The HTTP status a modern request was answered with (read once; None when unknown)."""
        with self._lock:
            return self._statuses.pop(request_id, None)

    def _aborted(self, request_id: int) -> bool:
        with self._lock:
            return request_id in self._aborted_ids

    def _reject(self, rejected: _Rejected, request: dict[str, Any]) -> None:
        """A modern 4xx: the request's JSON-RPC error when the body is one, else a failure of it alone."""
        message = jsonrpc.decode(rejected.body.strip())
        answer = message is not None and "error" in message and message.get("id") == request.get("id")
        if answer and type(request.get("id")) is int:
            if not self._put((message, len(rejected.body))):
                raise jsonrpc.failure(jsonrpc.QUEUE_FULL)
            return
        failed = jsonrpc.failure(f"HTTP endpoint answered status {rejected.status}")
        failed.keeps_session = True  # type: ignore[attr-defined]
        failed.http_status = rejected.status  # type: ignore[attr-defined]
        self._put(failed)

    def _deliver_json(self, body: bytes, request: dict[str, Any]) -> None:
        stripped = body.strip()
        if stripped.startswith(b"["):
            value = jsonrpc.loads_array(stripped)
            for item in value:
                self._accept(item, len(stripped), request)
        elif stripped:
            self._deliver(stripped, request)

    def _deliver(self, data: bytes, request: dict[str, Any]) -> bool:
        message = jsonrpc.decode(data)
        return message is not None and self._accept(message, len(data), request)

    def _accept(self, message: Any, size: int, request: dict[str, Any]) -> bool:
        """Queue one message; True when it is the response to ``request``."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return False
        msg_id = message.get("id")
        is_answer = "method" not in message and type(msg_id) is int and msg_id == request["id"]
        if is_answer and request.get("method") == "initialize" and isinstance(message.get("result"), dict):
            version = message["result"].get("protocolVersion")
            if isinstance(version, str) and _header_safe(version, 64):
                self.protocol_version = version
        if not self._put((message, size)):
            raise jsonrpc.failure(jsonrpc.QUEUE_FULL)
        return is_answer

    def _put(self, item: object) -> bool:
        deadline = time.monotonic() + self._timeout
        while not self._closed.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                if time.monotonic() >= deadline:
                    return False
        return False

    # --- receiving and closing ----------------------------------------------------------------------------

    def receive(self, deadline: float) -> Incoming | None:
        """The next message from any request's answer, or None when ``deadline`` passes first.

        Raises:
            TransportError: a request's exchange failed (status, redirect, body limit, connection loss),
                or the channel was closed.
        """
        if self._closed.is_set():
            raise self._failure or jsonrpc.closed()
        try:
            item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None
        if item is _END:
            raise self._failure or jsonrpc.closed()
        if isinstance(item, TransportError):
            raise item
        assert isinstance(item, tuple)
        return item

    @property
    def closed(self) -> bool:
        """True once ``close()`` ran."""
        return self._closed.is_set()

    def close(self) -> None:
        """Abort open exchanges, end the HTTP session (best-effort DELETE), join the workers; idempotent."""
        with self._lock:
            if self._closed.is_set():
                return
            self._closed.set()
            sockets = list(self._connections.values())
            workers = list(self._workers)
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait(_END)  # wakes a receive() blocked in another thread
        for sock in sockets:
            _shut(sock)
        if self.session_id is not None:
            self._delete_session()
        for worker in workers:
            worker.join(timeout=2.0)

    def _delete_session(self) -> None:
        endpoint = self._endpoint
        cls = http.client.HTTPSConnection if endpoint.scheme == "https" else http.client.HTTPConnection
        conn = cls(endpoint.host, endpoint.port, timeout=1.0)
        try:
            conn.request("DELETE", endpoint.path, headers=self._headers())
            conn.getresponse().read(64 * 1024)
        except (OSError, http.client.HTTPException):
            pass
        finally:
            conn.close()
