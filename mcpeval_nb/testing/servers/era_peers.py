"""Official-SDK fixture servers for both protocol eras: modern-only, dual-era and legacy-only.

Usage: ``python -m mcpeval_nb.testing.servers.era_peers <modern|dual|legacy> [stdio|http]``.  Over HTTP
the server binds 127.0.0.1 on a port the OS chooses and prints its endpoint URL as its first line.

The SDK (``mcp`` 2.3) serves both eras by default (``dual``).  ``modern`` serves only 2026-07-28: on
stdio the SDK's modern stream loop (``initialize`` answered with -32022 naming 2026-07-28), over HTTP a
request without a modern ``MCP-Protocol-Version`` gets 400 with -32022.  ``legacy`` serves only the
handshake: on stdio the SDK's handshake loop, over HTTP a modern request gets 400 without a modern error
body (what a 2025 SDK answers to a request without a session).

Tools (each read-only annotated, canary strings in what a client must never print):

- ``describe_weather(city)``: a structured result under an output schema.
- ``region_lookup(region)``: ``region`` is marked ``x-mcp-header: Region`` (an ``Mcp-Param-Region``
  header on modern HTTP).
- ``confirm_action(item)``: asks for confirmation by form elicitation (modern: an input-required
  round; legacy: an ``elicitation/create`` request); an error result without the capability.
- ``open_portal()``: URL-mode elicitation to a URL holding a canary.
- ``ask_model()``: sampling with ``tools`` and ``toolChoice``.
- ``long_job()``: a task (the ``io.modelcontextprotocol/tasks`` extension) when the modern client
  declares it, completing shortly after with a canary in its result; a plain result otherwise.

The instructions and one description carry canaries too.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any

import anyio
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolRequestParams, InputRequiredResult, RequestParams, ToolAnnotations
from pydantic import BaseModel, Field

warnings.filterwarnings("ignore")

__all__ = ["CANARY_DESCRIPTION", "CANARY_INSTRUCTIONS", "CANARY_TASK", "CANARY_URL", "ERAS", "build", "main"]

ERAS = ("modern", "dual", "legacy")
MODERN = "2026-07-28"
CANARY_INSTRUCTIONS = "CANARY-era-instructions-51d2"
CANARY_DESCRIPTION = "CANARY-era-description-7be0"
CANARY_URL = "https://example.invalid/CANARY-era-url-c3a9"
CANARY_TASK = "CANARY-era-task-0f4e"
TASKS = "io.modelcontextprotocol/tasks"
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


class Weather(BaseModel):
    """Today's weather."""

    city: str
    celsius: int
    sky: str


class _TaskParams(RequestParams):
    taskId: str


class _Tasks(Extension):
    """The tasks extension: ``long_job`` becomes a task for a client that declares the extension."""

    identifier = TASKS

    def __init__(self) -> None:
        self._tasks: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def methods(self) -> Sequence[MethodBinding]:
        return (MethodBinding("tasks/get", _TaskParams, self._get),
                MethodBinding("tasks/cancel", _TaskParams, self._cancel),
                MethodBinding("tasks/update", _TaskParams, self._update))

    async def intercept_tool_call(self, params: CallToolRequestParams, ctx: Any,
                                  call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        caps = ctx.session.client_capabilities
        declared = getattr(caps, "extensions", None) or {}
        if params.name != "long_job" or TASKS not in declared or ctx.protocol_version != MODERN:
            return await call_next(ctx)
        task_id = str(uuid.uuid4())
        now = _now()
        with self._lock:
            self._tasks[task_id] = {"taskId": task_id, "status": "working", "createdAt": now,
                                    "lastUpdatedAt": now, "ttlMs": 60000, "pollIntervalMs": 100,
                                    "done_at": time.monotonic() + 0.3}
        return {"resultType": "task", **self._public(task_id)}

    def _public(self, task_id: str) -> dict[str, Any]:
        with self._lock:
            task = self._tasks[task_id]
            if task["status"] == "working" and time.monotonic() >= task["done_at"]:
                task.update(status="completed", lastUpdatedAt=_now(),
                            result={"content": [{"type": "text", "text": f"job done {CANARY_TASK}"}],
                                    "isError": False, "resultType": "complete"})
            return {k: v for k, v in task.items() if k != "done_at"}

    async def _get(self, _ctx: Any, params: _TaskParams) -> dict[str, Any]:
        if params.taskId not in self._tasks:
            from mcp.shared.exceptions import MCPError
            raise MCPError(code=-32602, message="unknown task")
        return {"resultType": "complete", **self._public(params.taskId)}

    async def _cancel(self, _ctx: Any, params: _TaskParams) -> dict[str, Any]:
        with self._lock:
            task = self._tasks.get(params.taskId)
            if task is not None and task["status"] == "working":
                task.update(status="cancelled", lastUpdatedAt=_now())
        return {"resultType": "complete"}

    async def _update(self, _ctx: Any, _params: _TaskParams) -> dict[str, Any]:
        return {"resultType": "complete"}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _modern(ctx: Context) -> bool:
    return ctx.protocol_version == MODERN


def _declared(ctx: Context, capability: str) -> bool:
    caps = ctx.client_capabilities
    return caps is not None and getattr(caps, capability, None) is not None


def _ask(key: str, method: str, params: dict[str, Any]) -> InputRequiredResult:
    return InputRequiredResult.model_validate(
        {"inputRequests": {key: {"method": method, "params": params}}, "requestState": f"state-{key}"})


def _tools(server: MCPServer[Any]) -> None:
    @server.tool(annotations=READ_ONLY, description=f"Describe today's weather in a city: temperature in "
                 f"degrees Celsius and the sky. {CANARY_DESCRIPTION}")
    def describe_weather(city: Annotated[str, Field(description="The city to describe")]) -> Weather:
        return Weather(city=city, celsius=21, sky="clear")

    @server.tool(annotations=READ_ONLY, description="Look up the data centre serving a cloud region; the "
                 "region travels in a header as well.")
    def region_lookup(region: Annotated[str, Field(description="The cloud region",
                                                   json_schema_extra={"x-mcp-header": "Region"})]) -> str:
        return f"region {region} is served"

    @server.tool(annotations=READ_ONLY, description="Ask the user to confirm an action before it is "
                 "reported as confirmed (form elicitation).")
    async def confirm_action(item: Annotated[str, Field(description="What to confirm")],
                             ctx: Context) -> Any:
        if not _declared(ctx, "elicitation"):
            raise ToolError("this tool needs the elicitation capability")
        if _modern(ctx):
            if ctx.input_responses:
                return "confirmed"
            schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
            return _ask("confirm", "elicitation/create",
                        {"mode": "form", "message": "Confirm?", "requestedSchema": schema})

        class Ok(BaseModel):
            ok: bool

        answer = await ctx.elicit("Confirm?", Ok)
        return "confirmed" if answer.action == "accept" else "declined"

    @server.tool(annotations=READ_ONLY, description="Send the user to a web page to finish signing in "
                 "(URL-mode elicitation).")
    async def open_portal(ctx: Context) -> Any:
        if not _declared(ctx, "elicitation"):
            raise ToolError("this tool needs the elicitation capability")
        if _modern(ctx):
            if ctx.input_responses:
                return "portal visited"
            return _ask("portal", "elicitation/create",
                        {"mode": "url", "message": "Sign in", "url": CANARY_URL})
        answer = await ctx.elicit_url("Sign in", CANARY_URL, str(uuid.uuid4()))
        return f"portal {answer.action}"

    @server.tool(annotations=READ_ONLY, description="Ask the client's model a question, offering it one "
                 "tool (sampling with tools).")
    async def ask_model(ctx: Context) -> Any:
        if not _declared(ctx, "sampling"):
            raise ToolError("this tool needs the sampling capability")
        tool = {"name": "lookup", "inputSchema": {"type": "object", "properties": {}}}
        params = {"messages": [{"role": "user", "content": {"type": "text", "text": "Which city?"}}],
                  "maxTokens": 50, "tools": [tool], "toolChoice": {"mode": "auto"}}
        if _modern(ctx):
            if ctx.input_responses:
                return "model answered"
            return _ask("sample", "sampling/createMessage", params)
        from mcp_types import SamplingMessage, TextContent, Tool

        await ctx.session.create_message(
            [SamplingMessage(role="user", content=TextContent(type="text", text="Which city?"))],
            max_tokens=50, tools=[Tool.model_validate(tool)], tool_choice={"mode": "auto"})
        return "model answered"

    @server.tool(annotations=READ_ONLY, description="Run a short background job and report when it is "
                 "done (a task for clients that support tasks).")
    def long_job() -> str:
        return "job done"


def build(era: str = "dual") -> MCPServer[Any]:
    """The fixture server (the era only changes how ``main`` serves it)."""
    server: MCPServer[Any] = MCPServer(f"era-{era}", instructions=f"Use describe_weather first, then "
                                       f"forecast_tomorrow. {CANARY_INSTRUCTIONS}", extensions=[_Tasks()],
                                       log_level="WARNING")
    _tools(server)

    @server.resource("weather://today", description="Today's weather report.")
    def today() -> str:
        return "clear"

    return server


async def _stdio(server: MCPServer[Any], era: str) -> None:
    from mcp.server.runner import _serve_modern_stream, serve_loop
    from mcp.server.stdio import stdio_server

    low = server._lowlevel_server
    async with stdio_server() as (read, write), low.lifespan(low) as state:
        if era == "modern":
            await _serve_modern_stream(low, read, write, lifespan_state=state, raise_exceptions=False)
        else:
            await serve_loop(low, read, write, lifespan_state=state,
                             init_options=low.create_initialization_options())


def _gate(app: Any, era: str) -> Any:
    """ASGI wrapper: a modern-only or legacy-only endpoint in front of the SDK's dual-era app."""
    from starlette.responses import JSONResponse, Response

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        modern = headers.get("mcp-protocol-version") == MODERN
        if era == "modern" and scope["method"] in ("GET", "DELETE"):
            await Response(status_code=405)(scope, receive, send)
            return
        if era == "modern" and not modern and scope["method"] == "POST":
            error = {"code": -32022, "message": "Unsupported protocol version",
                     "data": {"supported": [MODERN]}}
            body = await _body(receive)
            await JSONResponse({"jsonrpc": "2.0", "id": _id(body), "error": error},
                               status_code=400)(scope, receive, send)
            return
        if era == "legacy" and modern:
            await _body(receive)
            await JSONResponse({"jsonrpc": "2.0", "id": None, "error": {
                "code": -32000, "message": "Bad Request: No valid session ID provided"}},
                status_code=400)(scope, receive, send)
            return
        await app(scope, receive, send)

    return wrapped


async def _body(receive: Any) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _id(body: bytes) -> Any:
    import json

    try:
        value = json.loads(body)
    except ValueError:
        return None
    return value.get("id") if isinstance(value, dict) else None


async def _http(server: MCPServer[Any], era: str) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts: the URL is usable at once
    port = sock.getsockname()[1]
    app = _gate(server.streamable_http_app(host="127.0.0.1", json_response=True), era)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"http://127.0.0.1:{port}/mcp", flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


def main(argv: list[str]) -> int:
    """Serve the era and transport ``argv`` names."""
    era = argv[0] if argv and argv[0] in ERAS else "dual"
    transport = argv[1] if len(argv) > 1 else "stdio"
    server = build(era)
    if transport == "http":
        asyncio.run(_http(server, era))
    elif era == "dual":
        server.run()
    else:
        anyio.run(_stdio, server, era)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
