"""serve's HTTP side: a loopback listener, a bounded worker pool, one request per connection (SPEC 13.1).

``LoopbackListener`` is the listener over any protocol backend (serve's tool table, the mock's recorded
behaviour); ``FindingsServer`` is serve's.

Handling order per connection: read the request under one 5 s deadline with at most 16 KiB of header
bytes and a 1 MiB body (any failure: 400 ``invalid request``); the shared provenance checks
(``transport.loopback``: repeated headers 400, a non-loopback Origin 403, a missing Host 400, a
non-loopback Host 403; a POST without ``application/json`` 415); a method other than POST 405; then
the JSON-RPC layer (``rpc.py``, both protocol eras: the 2026-07-28 requests' header checks run there,
on top of these).  Every response is JSON with ``Connection: close``.

The acceptor hands connections to ``SERVE_WORKERS`` threads through a queue of ``SERVE_ACCEPT_QUEUE``;
when it is full the acceptor waits (connections queue in the kernel) rather than refuse.  ``close``
stops accepting, cancels a spawned run (its server processes are reaped), and joins every thread.
Nothing here logs a header, a body or an argument.
"""

from __future__ import annotations

import contextlib
import queue
import select
import socket
import sys
import threading
from collections.abc import Callable

from ..governance.retention import RetentionTimer
from ..limits import SERVE_ACCEPT_QUEUE, SERVE_MAX_BODY_BYTES, SERVE_MAX_HEADER_BYTES, SERVE_WORKERS
from ..transport.loopback import (
    BadRequest,
    bound_address,
    endpoint_url,
    error_response,
    json_response,
    listen_socket,
    provenance_error,
    read_request,
    run_until_signalled,
)
from .base import ToolContext
from .call import ToolTable
from .config import ServeConfig, ServeOptions, serve_config
from .rpc import Backend, handle_body
from .spawn_tools import SpawnSlot
from .table import TOOLS

__all__ = ["FindingsServer", "LoopbackListener", "run_serve"]

_INVALID = error_response(400, "invalid request")
_POST_ONLY = error_response(405, "POST only")
_INTERNAL = error_response(500, "internal error")


class LoopbackListener:
    """A loopback Streamable HTTP listener over a protocol backend (a context manager, or ``start`` /
    ``serve_forever`` and ``close``): serve's, and the recorded-behaviour mock's.

    Args:
        ip / port: a checked loopback address (port 0: the OS picks one).
        backend: what answers the tool methods (``rpc.Backend``).
        timeout_s: the request-read deadline.
        workers: worker threads (serve: ``SERVE_WORKERS``; a backend that mostly waits may use more).
        name: the threads' name prefix.

    Raises:
        OSError: the address could not be bound.
    """

    def __init__(self, ip: str, port: int, backend: Backend, *, timeout_s: float,
                 workers: int = SERVE_WORKERS, name: str = "serve") -> None:
        self.backend = backend
        self._timeout = timeout_s
        self._sock = listen_socket(ip, port, backlog=128)
        self._queue: queue.Queue[socket.socket | None] = queue.Queue(maxsize=max(SERVE_ACCEPT_QUEUE, workers))
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_w.setblocking(False)  # also the signal wakeup descriptor (run_until_signalled)
        self._stopped = threading.Event()
        self._name = name
        self._workers = [threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True)
                         for i in range(workers)]
        for worker in self._workers:
            worker.start()
        self._acceptor: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        """The bound ``(ip, port)``."""
        return bound_address(self._sock)

    @property
    def url(self) -> str:
        """``http://<ip>:<port>/mcp``: the endpoint to give an MCP client (any path is served)."""
        return endpoint_url(self.address, "/mcp")

    @property
    def wakeup_fd(self) -> int:
        """A non-blocking descriptor whose write wakes ``serve_forever`` (the signal wakeup descriptor)."""
        return self._wake_w.fileno()

    def start(self) -> LoopbackListener:
        """Accept connections on a background thread; returns self."""
        self._acceptor = threading.Thread(target=self.serve_forever, name=f"{self._name}-accept", daemon=True)
        self._acceptor.start()
        return self

    def serve_forever(self) -> None:
        """Accept connections until ``stop`` or ``close``."""
        while not self._stopped.is_set():
            ready, _, _ = select.select([self._sock, self._wake_r], [], [])
            if self._stopped.is_set() or self._sock not in ready:
                break
            try:
                conn, _addr = self._sock.accept()
            except OSError:
                continue
            while not self._stopped.is_set():
                try:
                    self._queue.put(conn, timeout=0.2)
                    break
                except queue.Full:
                    continue
            else:
                conn.close()

    def stop(self) -> None:
        """Stop accepting (safe from a signal handler)."""
        self._stopped.set()
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")

    def _closing(self) -> None:
        """What a subclass stops first when it closes (serve: a spawned run, the retention timer)."""

    def close(self, *, timeout: float = 30.0) -> None:
        """Stop, finish queued requests, join every thread."""
        self.stop()
        self._closing()
        if self._acceptor is not None and self._acceptor is not threading.current_thread():
            self._acceptor.join(timeout)
        with contextlib.suppress(OSError):
            self._sock.close()
        for _ in self._workers:
            with contextlib.suppress(queue.Full):
                self._queue.put(None, timeout=timeout)
        for worker in self._workers:
            worker.join(timeout)
        for end in (self._wake_r, self._wake_w):
            end.close()

    def __enter__(self) -> LoopbackListener:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _work(self) -> None:
        while (conn := self._queue.get()) is not None:
            try:
                try:
                    answer = self.respond(conn)
                except Exception:  # a bug must not stop a worker; its details are withheld
                    answer = _INTERNAL
                conn.sendall(answer)
            except OSError:
                pass  # the client went away; nothing to tell anyone
            finally:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
                conn.close()

    def respond(self, conn: socket.socket) -> bytes:
        """Read one request from ``conn`` and build the complete response (SPEC 13.1's order)."""
        try:
            request = read_request(conn, timeout=self._timeout, max_header_bytes=SERVE_MAX_HEADER_BYTES,
                                   max_body_bytes=SERVE_MAX_BODY_BYTES)
        except BadRequest:
            return _INVALID
        refusal = provenance_error(request)
        if refusal is not None:
            return refusal
        if request.method != "POST":
            return _POST_ONLY
        status, body = handle_body(request.body, self.backend, headers=request.headers)
        return json_response(status, body)


class FindingsServer(LoopbackListener):
    """A running ``serve`` listener (a context manager, or ``start``/``serve_forever`` and ``close``).

    Args:
        options: listen address, spawn gate, capture root.

    Raises:
        UsageError: the listen address is not a loopback socket address.
        OSError: the address could not be bound.
    """

    def __init__(self, options: ServeOptions) -> None:
        self.config: ServeConfig = serve_config(options)
        self._slot = SpawnSlot()
        self._ctx = ToolContext(root=self.config.root, allow_spawn=options.allow_spawn, slot=self._slot)
        super().__init__(self.config.ip, self.config.port, ToolTable(TOOLS, self._ctx),
                         timeout_s=options.timeout_s)
        # config.json's retention_days: once now, then hourly, on its own thread (never in a request)
        self._retention = RetentionTimer(self.config.root, self.config.retention_days)
        self._retention.start()

    def start(self) -> FindingsServer:
        """Accept connections on a background thread; returns self."""
        super().start()
        return self

    def _closing(self) -> None:
        self._slot.stop()
        self._retention.stop()

    def __enter__(self) -> FindingsServer:
        return self.start()


def run_serve(options: ServeOptions, *, on_listening: Callable[[str], None] | None = None) -> int:
    """Run serve until SIGTERM or SIGINT; returns 0 after a clean shutdown.

    Args:
        options: listen address, spawn gate, capture root.
        on_listening: called with the endpoint URL once connections are accepted (default: one line on
            stderr).

    Raises:
        UsageError: a non-loopback or unparsable listen address, or one that cannot be bound.
    """
    return run_until_signalled(lambda: FindingsServer(options), on_listening or _announce)


def _announce(url: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"mcpeval-nb serve: listening on {url}\n")
        sys.stderr.flush()
