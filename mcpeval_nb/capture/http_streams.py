"""shim-http's event streams: relayed on threads of their own, ended as soon as either side closes.

A ``text/event-stream`` answer (the standalone GET stream of Streamable HTTP, or a POST answered as a
stream) may stay open for as long as the client wants it, so it must not hold a request worker.  The
worker hands the stream to ``Streams``, which relays it on its own thread (at most ``MAX_HTTP_STREAMS``
at once: past that the client gets a 503 with ``{"error":"too many open event streams"}``) and returns to
the requests.  One watcher thread polls the clients of every open stream: a client that closes its
connection (or sends anything more on it) ends its stream at once, by shutting the upstream connection
under the relay's blocking read; an upstream that ends its stream ends the client's.  Every SSE ``data:``
event is handed to the recorder before it is sent on.  The bound is per event (8 MiB, SPEC 13.2's body
bound): a ``subscriptions/listen`` stream (2026-07-28) is meant to stay open indefinitely, so a total
bound would end every long-lived subscription; an event over the bound ends the stream.
"""

from __future__ import annotations

import contextlib
import http.client
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..limits import DEFAULT_IO_TIMEOUT_S, MAX_HTTP_BODY_BYTES, MAX_HTTP_STREAMS
from ..transport.loopback import error_response, response_head
from .frames import WakePipe
from .http_proxy import SSEParser
from .recorder import Frame

__all__ = ["TOO_MANY_STREAMS", "Stream", "Streams"]

TOO_MANY_STREAMS = "too many open event streams"
_GONE = select.POLLIN | select.POLLPRI | select.POLLERR | select.POLLHUP | getattr(select, "POLLRDHUP", 0)


@dataclass
class Stream:
    """One event stream being relayed.

    Attributes:
        conn: the client connection (owned by the stream from the hand-over on).
        upstream: the upstream connection (likewise).
        response: the upstream response, status and headers read.
        headers: the response headers to relay.
        scope: the exchange's correlation scope.
        on_end: called once the stream is over (the exchange's end, for the recorder).
    """

    conn: socket.socket
    upstream: http.client.HTTPConnection
    response: http.client.HTTPResponse
    headers: list[tuple[str, str]]
    scope: str
    on_end: Callable[[], None]

    def cut(self) -> None:
        """End the relay now: a blocked upstream read returns (safe from any thread, repeatable)."""
        sock = self.upstream.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class Streams:
    """The open event streams of one shim-http listener.

    Args:
        submit: the recorder's ``submit``.
        limit: the most streams open at once.
    """

    def __init__(self, submit: Callable[[Frame], None], *, limit: int = MAX_HTTP_STREAMS) -> None:
        self.limit = limit
        self._submit = submit
        self._lock = threading.Lock()
        self._open: dict[int, Stream] = {}  # client fd -> stream
        self._changes: list[tuple[int, Stream | None]] = []
        self._wake = WakePipe()
        self._stopped = False
        self._watcher = threading.Thread(target=self._watch, name="shim-http-streams", daemon=True)
        self._watcher.start()

    @property
    def count(self) -> int:
        """Streams open now."""
        with self._lock:
            return len(self._open)

    def start(self, stream: Stream) -> bool:
        """Take over a stream and relay it on its own thread; False (and a 503 sent) at the bound."""
        with self._lock:
            if len(self._open) >= self.limit or self._stopped:
                refused = True
            else:
                refused = False
                self._open[stream.conn.fileno()] = stream
                self._changes.append((stream.conn.fileno(), stream))
        if refused:
            with contextlib.suppress(OSError):
                stream.conn.sendall(error_response(503, TOO_MANY_STREAMS))
            return False
        self._wake.wake()
        threading.Thread(target=self._relay, args=(stream,), name="shim-http-stream", daemon=True).start()
        return True

    def close(self, *, timeout: float = DEFAULT_IO_TIMEOUT_S) -> None:
        """End every open stream and the watcher; waits (bounded) until their relays are done."""
        with self._lock:
            self._stopped = True
            streams = list(self._open.values())
        for stream in streams:
            stream.cut()
        self._wake.wake()
        self._watcher.join(timeout)
        deadline = time.monotonic() + timeout
        while self.count and time.monotonic() < deadline:
            time.sleep(0.01)
        if not self.count:  # a relay still running may yet wake the pipe: keep it open then
            self._wake.close()

    def _relay(self, stream: Stream) -> None:
        conn, response = stream.conn, stream.response
        try:
            conn.settimeout(DEFAULT_IO_TIMEOUT_S)  # a client that stops reading ends its stream
            if stream.upstream.sock is not None:
                stream.upstream.sock.settimeout(None)  # idle streams are normal: either side ends them
            conn.sendall(response_head(response.status, stream.headers))
            self._pump(stream)
        except OSError:
            pass
        finally:
            fd = conn.fileno()
            with self._lock:
                self._open.pop(fd, None)
                self._changes.append((fd, None))
            self._wake.wake()
            stream.upstream.close()
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()
            stream.on_end()

    def _pump(self, stream: Stream) -> None:
        parser = SSEParser()
        while True:
            try:
                chunk = stream.response.read1(65536)
            except (OSError, http.client.HTTPException, ValueError):
                return  # upstream gone, or cut because the client went away
            if not chunk:
                return
            frames = [Frame("inbound", data, stream.scope) for data in parser.feed(chunk)]
            if parser.pending > MAX_HTTP_BODY_BYTES or any(f.size > MAX_HTTP_BODY_BYTES for f in frames):
                self._submit(Frame("inbound", None, stream.scope))  # one event over the bound ends it
                return
            for frame in frames:
                self._submit(frame)
            stream.conn.sendall(chunk)
            for frame in frames:
                frame.forwarded()

    def _watch(self) -> None:
        poller = select.poll()
        poller.register(self._wake.read_fd, select.POLLIN)
        watched: dict[int, Stream] = {}
        while True:
            for fd, _events in poller.poll():
                if fd == self._wake.read_fd:
                    self._wake.drain()
                    with self._lock:
                        changes, self._changes = self._changes, []
                        stopped = self._stopped
                    for changed, stream in changes:
                        if stream is None:
                            if watched.pop(changed, None) is not None:
                                poller.unregister(changed)
                        else:
                            watched[changed] = stream
                            poller.register(changed, _GONE)
                    if stopped:
                        return
                elif (stream := watched.get(fd)) is not None and _client_gone(stream.conn):
                    del watched[fd]
                    poller.unregister(fd)
                    stream.cut()


def _client_gone(conn: socket.socket) -> bool:
    """True when the client closed its connection, or sent more than its one request (a stale poll
    event for a reused descriptor is not taken for either)."""
    try:
        conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)  # b"": closed; bytes: out of turn
        return True
    except BlockingIOError:
        return False
    except OSError:
        return True
