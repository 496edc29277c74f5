"""A small real upstream for shim-http tests: a threaded HTTP server on 127.0.0.1 with scripted answers.

It answers POSTed JSON-RPC by the tool name or method: ``sse`` streams a notification and the response as
SSE events, ``text`` answers a non-JSON body, ``huge`` answers a body over 8 MiB, ``redirect`` answers 302,
``auth`` answers 401 with a ``WWW-Authenticate`` challenge naming the protected-resource metadata (served
on GET, with the canary in it), ``status`` answers 500 with a JSON-RPC error, notifications get an empty
202; anything else gets a JSON result. Every request's method and headers are kept for inspection.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mcpeval_nb.limits import MAX_HTTP_BODY_BYTES
from mcpeval_nb.testing.servers.echo import mrtr_result

CANARY = "CANARY-http-5c1d"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Upstream

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, body: bytes, content_type: str = "application/json",
              extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Mcp-Session-Id", "session-abc")
        self.send_header("Set-Cookie", f"secret={CANARY}")
        self.send_header("X-Upstream-Private", CANARY)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.server.seen.append(("GET", dict(self.headers.items()), b""))
        if self.path.startswith("/.well-known/oauth-protected-resource"):
            document = {"resource": self.server.url, "authorization_servers": [f"https://{CANARY}.example/"],
                        "scopes_supported": [CANARY]}
            self._send(200, json.dumps(document).encode())
            return
        events = [{"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": CANARY}}]
        body = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
        self._send(200, body, "text/event-stream")

    def do_DELETE(self) -> None:
        self.server.seen.append(("DELETE", dict(self.headers.items()), b""))
        self._send(200, b"")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.seen.append(("POST", dict(self.headers.items()), body))
        try:
            msg = json.loads(body)
        except ValueError:
            self._send(400, b"not json: " + body, "text/plain")
            return
        if not isinstance(msg, dict) or "id" not in msg:
            self._send(202, b"")
            return
        name = (msg.get("params") or {}).get("name") or msg.get("method")
        reply = {"jsonrpc": "2.0", "id": msg["id"], "result": {"content": [{"type": "text", "text": CANARY}]}}
        if name == "sse":
            note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"message": CANARY}}
            stream = b": ping\r\n\r\n" + b"".join(b"data: " + json.dumps(m).encode() + b"\r\n\r\n"
                                                   for m in (note, reply))
            self._send(200, stream, "text/event-stream")
        elif name == "text":
            self._send(200, f"plain {CANARY}".encode(), "text/plain")
        elif name == "huge":
            self._send(200, b"x" * (MAX_HTTP_BODY_BYTES + 1))
        elif name == "auth":
            origin = f"http://127.0.0.1:{self.server.server_address[1]}"
            challenge = (f'Bearer error="invalid_token", error_description="{CANARY}", '
                         f'resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp"')
            self._send(401, b"", extra={"WWW-Authenticate": challenge})
        elif name == "redirect":
            self._send(302, b"", extra={"Location": "http://127.0.0.1:1/elsewhere"})
        elif name == "mrtr":
            answer = {"jsonrpc": "2.0", "id": msg["id"], "result": mrtr_result(msg["id"], msg["params"])}
            self._send(200, json.dumps(answer).encode())
        elif name == "status":
            error = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32000, "message": CANARY}}
            self._send(500, json.dumps(error).encode())
        else:
            self._send(200, json.dumps(reply).encode())


class Upstream(ThreadingHTTPServer):
    """The scripted upstream; ``seen`` lists ``(method, headers, body)`` per request."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[tuple[str, dict[str, str], bytes]] = []

    @property
    def url(self) -> str:
        """The endpoint URL."""
        return f"http://127.0.0.1:{self.server_address[1]}/mcp"


@contextmanager
def upstream() -> Iterator[Upstream]:
    """Run an Upstream on a background thread for the duration of the block."""
    server = Upstream()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
