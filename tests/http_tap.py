"""A tap between shim-http and its upstream: a loopback forwarder that keeps every request's headers.

Each connection carries one request (shim-http opens one upstream connection per request): the tap reads
the request head and body, notes ``(method, target, headers)``, sends it on with ``Connection: close`` and
pipes the answer back until either side closes (so event streams pass through as they are).
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["Tap", "accepting", "tap"]


@dataclass
class Tap:
    """A running tap: its URL (same path as the upstream's) and what it saw."""

    url: str
    seen: list[tuple[str, str, list[tuple[str, str]]]] = field(default_factory=list)

    def headers(self, method: str = "POST") -> list[dict[str, str]]:
        """The headers (lowercase names) of every request of ``method``, in arrival order."""
        return [{k.lower(): v for k, v in h} for m, _, h in self.seen if m == method]


def _read_head(conn: socket.socket) -> tuple[bytes, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            raise OSError("closed before the head")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _serve(conn: socket.socket, upstream: tuple[str, int], tap: Tap) -> None:
    with conn, contextlib.suppress(OSError):
        head, body = _read_head(conn)
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = [(k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in lines[1:])]
        length = next((int(v) for k, v in headers if k.lower() == "content-length"), 0)
        while len(body) < length:
            body += conn.recv(65536)
        tap.seen.append((method, target, headers))
        out = [lines[0], *(f"{k}: {v}" for k, v in headers if k.lower() != "connection"), "Connection: close"]
        with socket.create_connection(upstream, timeout=60) as up:
            up.sendall(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + body)
            up.settimeout(None)
            while True:
                ready, _, _ = select.select([up, conn], [], [])
                if conn in ready and not conn.recv(1, socket.MSG_PEEK):
                    return  # the shim closed its side: end the upstream exchange too
                if up in ready:
                    chunk = up.recv(65536)
                    if not chunk:
                        return
                    conn.sendall(chunk)


@contextmanager
def accepting(handle: Callable[[socket.socket], None]) -> Iterator[int]:
    """A loopback listener that hands each connection to ``handle`` on a thread of its own until the
    context ends; yields its port."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=64)

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # the listener was shut down
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(5)


@contextmanager
def tap(upstream_url: str) -> Iterator[Tap]:
    """Run a tap in front of ``upstream_url`` (``http://127.0.0.1:<port>/<path>``)."""
    host_port, _, path = upstream_url.removeprefix("http://").partition("/")
    host, _, port = host_port.partition(":")
    result = Tap("")
    with accepting(lambda conn: _serve(conn, (host, int(port)), result)) as listening:
        result.url = f"http://127.0.0.1:{listening}/{path}"
        yield result
