"""A plain OTLP/HTTP receiver on loopback for the tests Phoenix cannot serve (metrics) and a listener that
counts connections (a proxy that must receive nothing).  Bodies are decoded with OpenTelemetry's own
protobuf messages."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Receiver", "counting_listener", "receiver"]


@dataclass
class Receiver:
    """A running receiver: its base URL and the decoded export requests per path."""

    url: str
    traces: list[Any] = field(default_factory=list)
    metrics: list[Any] = field(default_factory=list)


class _Server(ThreadingHTTPServer):
    state: Receiver


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/v1/traces":
            message: Any = trace_service_pb2.ExportTraceServiceRequest()
            message.ParseFromString(body)
            self.server.state.traces.append(message)
            reply: Any = trace_service_pb2.ExportTraceServiceResponse()
        elif self.path == "/v1/metrics":
            message = metrics_service_pb2.ExportMetricsServiceRequest()
            message.ParseFromString(body)
            self.server.state.metrics.append(message)
            reply = metrics_service_pb2.ExportMetricsServiceResponse()
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = reply.SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def receiver() -> Iterator[Receiver]:
    """Run the receiver on 127.0.0.1 (an OS-chosen port)."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.state = Receiver(f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@contextmanager
def counting_listener() -> Iterator[tuple[str, list[bytes]]]:
    """A loopback listener that accepts and closes connections, keeping what each first sent; yields its
    URL and that list."""
    from tests.http_tap import accepting

    seen: list[bytes] = []

    def note(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(2)
            try:
                seen.append(conn.recv(4096))
            except OSError:
                seen.append(b"")

    with accepting(note) as port:
        yield f"http://127.0.0.1:{port}", seen
