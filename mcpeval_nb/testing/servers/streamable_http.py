"""Fixture Streamable HTTP MCP server (stdlib ``http.server`` on 127.0.0.1, an OS-chosen port).

Run ``python -m mcpeval_nb.testing.servers.streamable_http MODE``: prints its endpoint URL
(``http://127.0.0.1:PORT/mcp``) as the first stdout line, then serves until stdin closes.  ``initialize``
issues an ``Mcp-Session-Id`` that every later POST must carry (else 400); notifications and replies get
202.  Tools: ``ok`` (canary text), ``slow`` (sleeps ``arguments.ms``), ``headers`` (reports which
headers arrived, as booleans and the protocol version, never their values), ``ask`` (SSE modes: sends an
``elicitation/create`` request on the stream and answers with the code of the client's reply),
``announce`` (sends ``notifications/resources/updated`` on every standalone GET stream; ``json`` and
``sse`` modes serve GET streams, the others answer 405), ``cancellable`` (opens an SSE stream and holds
it; a ``notifications/cancelled`` naming it ends the wait without an answer, as the SDKs do, else it
answers after ``arguments.ms``), ``cancels`` (how many cancellations named a call in flight, and how
many named a request the server had not received yet: those it ignores).

Modes: ``json`` (application/json answers), ``sse`` (text/event-stream answers with a progress event,
a comment, an event of another type and CRLF line ends), ``oversized`` (a 9 MiB JSON body with
Content-Length), ``oversized-sse`` (an endless SSE event, no Content-Length), ``redirect`` (307 to
itself), ``sse-cut`` (SSE answers end before the response), ``slow`` (every request waits 10 s),
``status`` (500 for every request after initialize), ``expire`` (404 for every request after
initialize), ``auth`` (401 unless ``Authorization`` equals ``$FIXTURE_EXPECTED_AUTHORIZATION``),
``forbidden`` (403 for every POST).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CANARY = "CANARY-streamable-http-5d2e"
MIB = 1024 * 1024
_TOOL_NAMES = ("ok", "slow", "headers", "ask", "announce", "cancellable", "cancels")
_TOOLS = [{"name": name, "inputSchema": {"type": "object"}} for name in _TOOL_NAMES]


class _State:
    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.sessions: set[str] = set()
        self.replies: dict[str, Any] = {}
        self.reply_ready = threading.Condition()
        self.streams: list[tuple[Any, threading.Lock]] = []
        self.streams_ready = threading.Condition()
        self.in_flight: dict[Any, threading.Event] = {}
        self.cancels = {"in_flight": 0, "unknown": 0}
        self.cancel_lock = threading.Lock()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: _State

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, body: bytes = b"", content_type: str | None = None,
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_DELETE(self) -> None:
        self.state.sessions.discard(self.headers.get("Mcp-Session-Id", ""))
        self._send(200)

    def do_GET(self) -> None:
        session = self.headers.get("Mcp-Session-Id")
        if self.state.mode not in ("json", "sse") or session not in self.state.sessions:
            return self._send(405)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.flush()
        lock = threading.Lock()
        with self.state.streams_ready:
            self.state.streams.append((self.wfile, lock))
            self.state.streams_ready.notify_all()
        self.close_connection = True
        try:
            while True:  # keep-alive comments until the client goes away
                time.sleep(0.5)
                with lock:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
        except OSError:
            pass

    def _announce(self) -> int:
        with self.state.streams_ready:
            self.state.streams_ready.wait_for(lambda: bool(self.state.streams), timeout=5.0)
            streams = list(self.state.streams)
        note = {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                "params": {"uri": "fixture://resource", "title": CANARY}}
        for wfile, lock in streams:
            with lock:
                wfile.write(f"data: {json.dumps(note)}\n\n".encode())
                wfile.flush()
        return len(streams)

    def do_POST(self) -> None:
        mode = self.state.mode
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        message = json.loads(body)
        if mode == "auth" and self.headers.get("Authorization") != os.environ.get(
                "FIXTURE_EXPECTED_AUTHORIZATION"):
            return self._send(401)
        if mode == "forbidden":
            return self._send(403)
        if mode == "redirect":
            return self._send(307, headers={"Location": self.path})
        if message.get("method") == "initialize":
            return self._initialize(message)
        if self.headers.get("Mcp-Session-Id") not in self.state.sessions:
            return self._send(400)
        if mode in ("status", "expire"):
            return self._send(500 if mode == "status" else 404)
        if "method" not in message:
            with self.state.reply_ready:
                self.state.replies[str(message.get("id"))] = message
                self.state.reply_ready.notify_all()
            return self._send(202)
        if "id" not in message:
            if message.get("method") == "notifications/cancelled":
                self._cancelled((message.get("params") or {}).get("requestId"))
            return self._send(202)
        params = message.get("params") or {}
        if message.get("method") == "tools/call" and params.get("name") == "cancellable":
            return self._cancellable(message, int((params.get("arguments") or {}).get("ms", 10_000)))
        if mode == "slow":
            time.sleep(10)
        if mode.startswith("oversized"):
            return self._oversized(message)
        result = self._result(message)
        if mode in ("sse", "sse-cut"):
            return self._stream(message, result)
        self._send(200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode(),
                   "application/json")

    def _initialize(self, message: dict[str, Any]) -> None:
        session = uuid.uuid4().hex
        self.state.sessions.add(session)
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "streamable-http-fixture", "version": "1"}}
        self._send(200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode(),
                   "application/json", {"Mcp-Session-Id": session})

    def _result(self, message: dict[str, Any]) -> Any:
        method, params = message["method"], message.get("params") or {}
        if method == "tools/list":
            return {"tools": _TOOLS}
        if method != "tools/call":
            return {}
        name, arguments = params.get("name"), params.get("arguments") or {}
        if name == "slow":
            time.sleep(int(arguments.get("ms", 0)) / 1000)
        if name == "announce":
            return {"announced": self._announce()}
        if name == "cancels":
            with self.state.cancel_lock:
                return dict(self.state.cancels)
        if name == "headers":
            return {"authorization": "Authorization" in self.headers,
                    "protocol_version": self.headers.get("MCP-Protocol-Version"),
                    "session": "Mcp-Session-Id" in self.headers}
        return {"content": [{"type": "text", "text": f"{CANARY} result"}]}

    def _event(self, payload: dict[str, Any], event: str | None = None) -> None:
        head = f"event: {event}\r\n" if event else ""
        self.wfile.write(f"{head}data: {json.dumps(payload)}\r\n\r\n".encode())
        self.wfile.flush()

    def _stream(self, message: dict[str, Any], result: Any) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(f": {CANARY} comment\r\n\r\n".encode())
        self._event({"jsonrpc": "2.0", "method": "notifications/progress",
                     "params": {"progressToken": 1, "progress": 1, "message": CANARY}})
        self._event({"jsonrpc": "2.0", "id": message["id"], "result": CANARY}, event="other")
        if self.state.mode == "sse-cut":
            self.close_connection = True
            return
        if (message.get("params") or {}).get("name") == "ask":
            result = {"reply": self._ask()}
        self._event({"jsonrpc": "2.0", "id": message["id"], "result": result})
        self.close_connection = True

    def _ask(self) -> Any:
        self._event({"jsonrpc": "2.0", "id": "srv-1", "method": "elicitation/create",
                     "params": {"message": CANARY, "requestedSchema": {"type": "object"}}})
        with self.state.reply_ready:
            self.state.reply_ready.wait_for(lambda: "srv-1" in self.state.replies, timeout=5.0)
            reply = self.state.replies.pop("srv-1", {})
        return reply.get("error", {}).get("code") if "error" in reply else reply.get("result")

    def _cancelled(self, request_id: Any) -> None:
        with self.state.cancel_lock:
            event = self.state.in_flight.get(request_id)
            self.state.cancels["in_flight" if event is not None else "unknown"] += 1
        if event is not None:
            event.set()

    def _cancellable(self, message: dict[str, Any], ms: int) -> None:
        cancelled = threading.Event()
        with self.state.cancel_lock:
            self.state.in_flight[message["id"]] = cancelled
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        if not cancelled.wait(ms / 1000):
            return self._event({"jsonrpc": "2.0", "id": message["id"], "result": {"content": []}})
        try:  # cancelled: no answer, the stream held open until the client goes away
            while True:
                time.sleep(0.5)
                self.wfile.write(b": held\n\n")
                self.wfile.flush()
        except OSError:
            pass

    def _oversized(self, message: dict[str, Any]) -> None:
        if self.state.mode == "oversized":
            text = CANARY + "x" * (9 * MIB)
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"text": text}})
            return self._send(200, body.encode(), "application/json")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b"data: {\"text\":\"" + CANARY.encode())
        chunk = b"x" * 65536
        try:
            for _ in range(16 * 16):
                self.wfile.write(chunk)
        except OSError:
            pass
        self.close_connection = True


def main(argv: list[str]) -> int:
    """Serve in the mode named by ``argv[0]`` until stdin closes."""
    state = _State(argv[0] if argv else "json")
    handler = type("Handler", (_Handler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdout.write(f"http://127.0.0.1:{server.server_address[1]}/mcp\n")
    sys.stdout.flush()
    sys.stdin.read()
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
