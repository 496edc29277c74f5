"""A tiny single-threaded MCP server core for the probe fixture servers (stdio or Streamable HTTP).

Handlers answer with a result or raise ``Fail(code, message, **extra)``.  While handling a request a
handler may send server-to-client requests (``ctx.ask``) and notifications (``ctx.notify``) and may
wait for ``notifications/cancelled`` (``ctx.sleep``).  Messages that arrive meanwhile are queued and
handled afterwards, in order.  Over HTTP (``serve_http``) each POST carries one message and is answered
with one JSON body (no server-to-client requests); the URL is printed on stdout.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["CANARY_ERROR", "CANARY_TEXT", "Context", "Fail", "Server", "text_result"]

CANARY_TEXT = "CANARY raw response"
CANARY_ERROR = "CANARY private error"


class Fail(Exception):
    """A JSON-RPC error answer: ``code``, ``message`` and extra members (``retryable``, ``data``)."""

    def __init__(self, code: int, message: str = CANARY_ERROR, **extra: Any) -> None:
        super().__init__(message)
        self.error = {"code": code, "message": message, **extra}


def text_result(text: str = CANARY_TEXT, **extra: Any) -> dict[str, Any]:
    """A tool result with one text content item plus extra members."""
    return {"content": [{"type": "text", "text": text}], **extra}


class Context:
    """What a handler can do while it answers one request."""

    def __init__(self, server: Server, request_id: Any) -> None:
        self.server, self.request_id = server, request_id
        self.cancelled = False

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification to the client."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.server.write(message)

    def ask(self, method: str, params: Any, *, timeout: float = 10.0) -> dict[str, Any] | None:
        """Send a server-to-client request and wait for its response message (None on timeout)."""
        self.server.asks += 1
        ask_id = f"srv-{self.server.asks}"
        self.server.write({"jsonrpc": "2.0", "id": ask_id, "method": method, "params": params})
        end = time.monotonic() + timeout
        while True:
            message = self.server.next_message(end)
            if message is None:
                return None
            if message.get("id") == ask_id and "method" not in message:
                return message
            self._note(message)

    def sleep(self, seconds: float) -> bool:
        """Wait up to ``seconds``; True as soon as this request is cancelled by the client."""
        end = time.monotonic() + seconds
        while not self.cancelled:
            message = self.server.next_message(end)
            if message is None:
                return False
            self._note(message)
        return True

    def _note(self, message: dict[str, Any]) -> None:
        params = message.get("params")
        if (message.get("method") == "notifications/cancelled" and isinstance(params, dict)
                and params.get("requestId") == self.request_id):
            self.cancelled = True
        else:
            self.server.backlog.append(message)


Handler = Callable[[Any, Context], Any]


class Server:
    """Register ``methods`` and ``tools``, then ``run(argv)``.

    Args:
        name: serverInfo name. version: the protocol version answered (None echoes the client's).
        capabilities: the capabilities object of the initialize result.
    """

    def __init__(self, name: str, *, version: str | None = "2025-06-18",
                 capabilities: dict[str, Any] | None = None) -> None:
        self.name, self.version = name, version
        self.capabilities = {"tools": {}} if capabilities is None else capabilities
        self.tools: list[dict[str, Any]] = []
        self.tool_handlers: dict[str, Handler] = {}
        self.methods: dict[str, Handler] = {"initialize": self._initialize, "ping": lambda p, c: {},
                                            "tools/list": self._list, "tools/call": self._call}
        self.backlog: deque[dict[str, Any]] = deque()
        self.asks = 0
        self._buffer = b""
        self.skip_ids = False
        #: The request headers of the POST being answered (lowercase names; HTTP only, else None).
        self.request_headers: dict[str, str] | None = None
        #: HTTP status of a JSON-RPC error answer by code (HTTP only; unlisted codes: 200).
        self.error_statuses: dict[int, int] = {}

    # --- registration --------------------------------------------------------------------------------

    def tool(self, name: str, handler: Handler, *, description: str | None = None,
             properties: dict[str, Any] | None = None, required: list[str] | None = None,
             read_only: bool | None = True, **extra: Any) -> None:
        """Declare a tool (with an input schema built from ``properties``/``required``)."""
        schema: dict[str, Any] = {"type": "object", "properties": properties or {}}
        if required:
            schema["required"] = required
        text = description or f"Fixture tool {name} used by the mcpeval-nb probe tests."
        entry: dict[str, Any] = {"name": name, "description": text, "inputSchema": schema}
        if read_only is not None:
            entry["annotations"] = {"readOnlyHint": read_only}
        entry.update(extra)
        self.tools.append(entry)
        self.tool_handlers[name] = handler

    def _initialize(self, params: Any, ctx: Context) -> Any:
        offered = params.get("protocolVersion") if isinstance(params, dict) else None
        return {"protocolVersion": self.version or offered, "capabilities": self.capabilities,
                "serverInfo": {"name": self.name, "version": "1.0.0"}}

    def _list(self, params: Any, ctx: Context) -> Any:
        return {"tools": self.tools}

    def _call(self, params: Any, ctx: Context) -> Any:
        name = params.get("name") if isinstance(params, dict) else None
        handler = self.tool_handlers.get(name) if isinstance(name, str) else None
        if handler is None:
            raise Fail(-32602, "unknown tool")
        args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        return handler(args, ctx)

    # --- message loop ----------------------------------------------------------------------------------

    def write(self, message: dict[str, Any]) -> None:
        """Write one frame to stdout."""
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def next_message(self, deadline: float | None) -> dict[str, Any] | None:
        """The next parsed stdin message (skipping non-JSON lines); None at EOF or the deadline."""
        while True:
            if b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict):
                    return message
                continue
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([sys.stdin.fileno()], [], [], wait)
            if not ready:
                return None
            chunk = os.read(sys.stdin.fileno(), 1 << 16)
            if not chunk:
                raise EOFError
            self._buffer += chunk

    def handle(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """Answer one message; None for notifications and client responses."""
        method = message.get("method")
        if "id" not in message or not isinstance(method, str):
            return None
        ctx = Context(self, message["id"])
        handler = self.methods.get(method)
        try:
            if handler is None:
                raise Fail(-32601, "method not found")
            result = handler(message.get("params") or {}, ctx)
        except Fail as exc:
            return {"jsonrpc": "2.0", "id": message["id"], "error": exc.error}
        if result is None:  # the handler stays silent (cancelled)
            return None
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    def serve_stdio(self) -> None:
        """Serve newline-delimited JSON-RPC on stdin/stdout until EOF."""
        try:
            while True:
                message = self.backlog.popleft() if self.backlog else self.next_message(None)
                if message is None:
                    return
                answer = self.handle(message)
                if answer is not None:
                    self.write(answer)
        except (EOFError, BrokenPipeError):
            return

    def serve_http(self) -> None:
        """Serve Streamable HTTP (JSON answers, ``Mcp-Session-Id``) on 127.0.0.1; print the URL."""
        server = self

        class _Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                server.request_headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    message = json.loads(self.rfile.read(length))
                except ValueError:
                    message = None
                answer = server.handle(message) if isinstance(message, dict) else None
                body = b"" if answer is None else json.dumps(answer).encode()
                error = answer.get("error") if answer is not None else None
                code = error.get("code") if isinstance(error, dict) else None
                status = server.error_statuses.get(code, 200) if isinstance(code, int) else 200
                self.send_response(202 if answer is None else status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Mcp-Session-Id", "fixture-session")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_DELETE(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        print(f"http://127.0.0.1:{httpd.server_address[1]}/mcp", flush=True)
        try:
            httpd.serve_forever()
        finally:
            httpd.server_close()

    def run(self, http: bool = False) -> None:
        """Serve on stdio, or over HTTP when ``http``."""
        self.serve_http() if http else self.serve_stdio()
