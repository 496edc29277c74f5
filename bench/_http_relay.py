"""A bare HTTP relay for ``bench_shim``: shim-http's exchange without any recording or checks.

``relay(upstream_url)`` is a context manager that listens on 127.0.0.1 and, per connection, reads one
request (head and ``Content-Length`` body), sends it to the upstream on a fresh connection with
``Connection: close`` (as shim-http does), and pipes the answer back until the upstream closes.  The
difference between it and shim-http is the shim's parsing, checks and recording.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from contextlib import contextmanager


def _serve(conn: socket.socket, upstream: tuple[str, int]) -> None:
    with conn, contextlib.suppress(OSError):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        length = next((int(line.split(b":", 1)[1]) for line in lines[1:]
                       if line.lower().startswith(b"content-length:")), 0)
        while len(body) < length:
            body += conn.recv(65536)
        kept = [line for line in lines[1:] if not line.lower().startswith(b"connection:")]
        with socket.create_connection(upstream, timeout=30) as up:
            up.sendall(b"\r\n".join([lines[0], *kept, b"Connection: close"]) + b"\r\n\r\n" + body)
            while chunk := up.recv(65536):
                conn.sendall(chunk)


@contextmanager
def relay(upstream_url: str) -> Iterator[str]:
    """Run the relay in front of ``upstream_url``; yields its URL (same path)."""
    from tests.http_tap import accepting

    host_port, _, path = upstream_url.removeprefix("http://").partition("/")
    host, _, port = host_port.partition(":")
    with accepting(lambda conn: _serve(conn, (host, int(port)))) as listening:
        yield f"http://127.0.0.1:{listening}/{path}"
