"""shim-http: a loopback Streamable HTTP recording proxy (SPEC 13.2).

A listener on the given loopback address hands connections to a bounded worker pool through a bounded
accept queue (full: an immediate 503).  Each worker reads one request under one 5 s deadline, applies the
Host/Origin/Content-Type checks, forwards it to the upstream endpoint (allow-listed headers, no redirects,
5 s timeouts) and relays the answer (``http_exchange``): JSON bodies whole (at most 8 MiB); a
``text/event-stream`` is handed to ``http_streams``, relayed on a thread of its own (bounded apart from
the workers) until either side closes.  Capture is per HTTP request scope: the request body and every response
JSON body or SSE ``data:`` event go to the recorder like stdio frames.  Authorization values (relayed or
from ``MCPEVAL_HTTP_AUTHORIZATION``) live in memory only.
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import socket
import sys
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import UsageError
from ..limits import DEFAULT_IO_TIMEOUT_S, HTTP_ACCEPT_QUEUE, HTTP_WORKERS, MAX_HTTP_STREAMS
from ..privacy.grammar import SERVER_LABEL_MESSAGE, valid_server
from ..privacy.urls import classify_url
from ..root import Root, RootLike
from ..transport.http import AUTHORIZATION_ENV, read_authorization
from ..transport.loopback import (
    bound_address,
    endpoint_url,
    error_response,
    listen_socket,
    run_until_signalled,
)
from ..transport.policy import Endpoint, check_endpoint, check_listen_address
from .catalog import recorded_names
from .correlate import Correlator
from .frames import WakePipe
from .http_exchange import Exchanges
from .http_streams import Streams
from .recorder import Recorder
from .spawn import announce_root, say

__all__ = ["HTTPShim", "HTTPShimOptions", "run_shim_http", "stored_address"]

_BUSY = error_response(503)


@dataclass(frozen=True)
class HTTPShimOptions:
    """Options of one shim-http process.

    Attributes:
        server: the server label (SPEC 4.4 grammar).
        listen: the loopback socket address to listen on (``127.0.0.1:0`` lets the OS pick a port).
        upstream: the upstream MCP endpoint URL (SPEC 13.2 policy).
        allow_remote_http: allow a non-loopback HTTPS upstream.
        root: the capture root (default: ``$MCPEVAL_HOME`` or ``~/.mcp-eval``).
        session: the raw session value (default: ``$MCPEVAL_SESSION``, else a fresh uuid4).
        authorization: Authorization for upstream requests that carry none (default:
            ``$MCPEVAL_HTTP_AUTHORIZATION``); never printed or journaled.
        workers: worker threads; queue: connections waiting for a worker before 503.
        streams: event streams relayed at once, apart from the workers (past it: 503).
        timeout_s: the request-read deadline and the upstream connect/read timeout.
        catalog: record a catalog record per completed ``tools/list`` listing (docs/catalog.md).
    """

    server: str
    listen: str
    upstream: str
    allow_remote_http: bool = False
    root: RootLike = None
    session: str | None = None
    authorization: str | None = field(default=None, repr=False)
    workers: int = HTTP_WORKERS
    queue: int = HTTP_ACCEPT_QUEUE
    streams: int = MAX_HTTP_STREAMS
    timeout_s: float = DEFAULT_IO_TIMEOUT_S
    catalog: bool = True


def stored_address(endpoint: Endpoint) -> str:
    """The upstream's host as a record may hold it (OpenTelemetry's ``server.address``): a loopback host
    as it is; any other host shaped as a URL argument is (its registrable domain, ``ip``, ``host``)."""
    if endpoint.is_loopback:
        return endpoint.host
    token = classify_url(endpoint.url) or "url:host"
    return token.removeprefix("url:")


def _authorization(value: str | None) -> str | None:
    """The upstream Authorization fallback, validated like the probe client's (never echoed)."""
    return read_authorization(None if value is None else {AUTHORIZATION_ENV: value})


class HTTPShim:
    """A running shim-http listener (use as a context manager, or ``serve_forever`` and ``close``).

    Args:
        options: label, listen address, upstream and capture settings.

    Raises:
        UsageError: bad label, listen address, upstream URL or Authorization value.
        SaltError: the capture root's salt is unusable.
        OSError: the listen address could not be bound.
    """

    def __init__(self, options: HTTPShimOptions) -> None:
        if not valid_server(options.server):
            raise UsageError(SERVER_LABEL_MESSAGE)
        ip, port = check_listen_address(options.listen)
        self.endpoint: Endpoint = check_endpoint(options.upstream,
                                                 allow_remote_http=options.allow_remote_http)
        self._auth = _authorization(options.authorization)
        self.options = options
        home = Root.of(options.root)
        root = home.path
        session = options.session if options.session is not None else os.environ.get("MCPEVAL_SESSION")
        correlator = Correlator(server=options.server, session=session or str(uuid.uuid4()),
                                salt=home.salt(), catalog=options.catalog,
                                known_names=lambda: recorded_names(root), transport="tcp",
                                address=stored_address(self.endpoint), port=self.endpoint.port)
        if correlator.catalog is not None:  # built in a helper process: the relays never wait for it
            correlator.catalog.offload(root)
        self._sock = listen_socket(ip, port, backlog=max(64, options.queue * 2))
        announce_root(root, "shim-http", flag=options.root is not None)
        self.recorder = Recorder(root=root, correlator=correlator)
        self.streams = Streams(self.recorder.submit, limit=options.streams)
        self._active: set[socket.socket] = set()
        self._active_lock = threading.Lock()
        self._exchanges = Exchanges(endpoint=self.endpoint, authorization=self._auth,
                                    timeout_s=options.timeout_s, recorder=self.recorder,
                                    streams=self.streams, track=self._track)
        self._queue: queue.Queue[socket.socket | None] = queue.Queue(maxsize=options.queue)
        self._wake = WakePipe()
        self._stopped = threading.Event()
        self._workers = [threading.Thread(target=self._work, name=f"shim-http-{i}", daemon=True)
                         for i in range(options.workers)]
        for worker in self._workers:
            worker.start()
        self._acceptor: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        """The bound ``(ip, port)``."""
        return bound_address(self._sock)

    @property
    def url(self) -> str:
        """``http://<ip>:<port>/mcp``-style URL of this listener (the path is not significant)."""
        return endpoint_url(self.address, self.endpoint.path)

    @property
    def wakeup_fd(self) -> int:
        """A non-blocking descriptor whose write wakes ``serve_forever`` (the signal wakeup descriptor)."""
        return self._wake.write_fd

    def start(self) -> HTTPShim:
        """Accept connections on a background thread; returns self."""
        self._acceptor = threading.Thread(target=self.serve_forever, name="shim-http-accept", daemon=True)
        self._acceptor.start()
        return self

    def serve_forever(self) -> None:
        """Accept connections until ``close`` (or ``stop``) is called."""
        while not self._stopped.is_set():
            ready, _, _ = select.select([self._sock.fileno(), self._wake.read_fd], [], [])
            if self._stopped.is_set() or self._sock.fileno() not in ready:
                break
            try:
                conn, _addr = self._sock.accept()
            except OSError:
                continue
            try:
                self._queue.put_nowait(conn)
            except queue.Full:
                with contextlib.suppress(OSError):
                    conn.sendall(_BUSY)
                conn.close()

    def stop(self) -> None:
        """Ask the accept loop to return (safe from a signal handler)."""
        self._stopped.set()
        self._wake.wake()

    def close(self, *, timeout: float = DEFAULT_IO_TIMEOUT_S + 1.0) -> None:
        """Stop accepting, let the workers finish their exchanges (bounded), flush the recorder."""
        self.stop()
        if self._acceptor is not None:
            self._acceptor.join(timeout)
        with contextlib.suppress(OSError):
            self._sock.close()
        with self._active_lock:  # end open exchanges (idle event streams) instead of waiting them out
            for conn in self._active:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        for _ in self._workers:
            with contextlib.suppress(queue.Full):
                self._queue.put(None, timeout=timeout)
        for worker in self._workers:
            worker.join(timeout)
        self.streams.close(timeout=timeout)
        self.recorder.close()
        self._wake.close()

    def __enter__(self) -> HTTPShim:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def open_streams(self) -> int:
        """Event streams being relayed now."""
        return self.streams.count

    def _track(self, sock: socket.socket | None, add: bool) -> None:
        if sock is None:
            return
        with self._active_lock:
            if add:
                self._active.add(sock)
            else:
                self._active.discard(sock)

    # ---- one exchange ----------------------------------------------------------------------------
    def _work(self) -> None:
        while (conn := self._queue.get()) is not None:
            with self._active_lock:
                self._active.add(conn)
            handed = False
            try:
                if self._stopped.is_set():
                    continue
                handed = self._exchanges.serve(conn)
            except Exception as exc:  # never let one exchange stop a worker
                say(f"exchange failed ({type(exc).__name__})", "shim-http")
            finally:
                with self._active_lock:
                    self._active.discard(conn)
                if not handed:
                    with contextlib.suppress(OSError):
                        conn.shutdown(socket.SHUT_RDWR)
                    conn.close()


def run_shim_http(options: HTTPShimOptions, *, on_listening: Callable[[str], None] | None = None) -> int:
    """Run shim-http until SIGTERM or SIGINT; returns 0 after a clean shutdown.

    Args:
        options: label, listen address, upstream and capture settings.
        on_listening: called with the listener's URL once it accepts connections (default: one line
            on stderr).

    Returns:
        0.

    Raises:
        UsageError: bad label, listen address, upstream URL or Authorization value.
        SaltError: the capture root's salt is unusable.
    """
    return run_until_signalled(lambda: HTTPShim(options),
                               on_listening or (lambda url: _stderr(f"listening on {url}")))


def _stderr(message: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"mcpeval-nb shim-http: {message}\n")
        sys.stderr.flush()
