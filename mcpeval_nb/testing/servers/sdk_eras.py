"""Official-SDK fixture servers for both protocol eras (``mcp`` 2.x ``MCPServer``).

One server, started in the era, transport and features a test needs::

    python -m mcpeval_nb.testing.servers.sdk_eras [--era dual|modern|legacy] [--http [--json]] [--oauth]
                                                  [--readiness]

* ``--era dual`` (the default) serves both eras, as the SDK does: a client that opens with
  ``server/discover`` (or any request carrying the 2026-07-28 ``_meta`` envelope) is served statelessly,
  one that opens with ``initialize`` gets the legacy handshake.  ``--era modern`` refuses the legacy era
  (stdio: the SDK's modern stream loop, which answers ``initialize`` with -32022; HTTP: a non-modern
  request gets 400 and -32022, GET and DELETE 405).  ``--era legacy`` refuses the modern era (stdio: the
  handshake-only loop; HTTP: a request carrying the modern envelope gets a 400 without a modern error
  body), so an ``auto`` client falls back to ``initialize``.
* ``--http`` serves stateless Streamable HTTP on 127.0.0.1 (a port the OS chooses) and prints the
  endpoint URL (``http://127.0.0.1:<port>/mcp``) as the first stdout line; ``--json`` answers with JSON
  bodies instead of event streams.  Without ``--http`` the server speaks stdio.
* ``--oauth`` (HTTP only) makes the endpoint an OAuth 2.1 protected resource: a request without a valid
  bearer token gets 401 with ``WWW-Authenticate: Bearer resource_metadata=...``; the protected-resource
  metadata is served at ``/.well-known/oauth-protected-resource/mcp``; the same origin is a minimal
  authorization server (dynamic registration, an authorization endpoint that approves at once, PKCE code
  exchange) whose access tokens start with ``CANARY-token-``.

Tools (both eras unless noted):

* ``echo(text)``, ``navigate(url, waitUntil)`` (an enum), ``fail(message)`` (a tool error quoting it);
* ``region(region, query)``: ``region`` carries ``x-mcp-header: Region`` (a 2026-07-28 HTTP client sends
  it as ``Mcp-Param-Region``);
* ``ask(rounds)``: asks ``rounds`` form questions, one per round; modern: a multi round-trip request
  (``resultType: "input_required"`` with an ``elicitation/create`` input request and a sealed
  ``requestState`` per round), legacy: ``elicitation/create`` requests to the client; answers with the
  answers it got, joined;
* ``visit(url)``: a URL-mode elicitation of ``url``, then ``visited``;
* ``confirm(item)``: a resolver-driven elicitation (the SDK's ``Resolve``/``Elicit``), then ``kept`` or
  ``dropped``;
* ``job(ms, end)`` (the Tasks extension, ``io.modelcontextprotocol/tasks``; modern clients that declare
  it): answered with a task handle (``resultType: "task"``); ``tasks/get`` reports ``working`` until
  ``ms`` have passed, then ``end``: ``completed`` (the result quotes the task's private note),
  ``failed`` (a JSON-RPC error) or ``input_required`` (then ``tasks/update`` answers it and the task
  completes); ``tasks/cancel`` cancels it.  A client without the extension gets the result at once;
* ``touch()``: sends ``notifications/tools/list_changed`` to ``subscriptions/listen`` streams.

Prompts and resources: ``greet(name)`` and ``note://{key}``, both plain.

``--readiness`` adds instructions and read-only annotated tools for the readiness battery, with canaries
in the instructions, a description and an elicitation URL (``_eras_readiness``).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import warnings
from typing import Annotated, Any, Literal

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

from mcpeval_nb.testing.servers._eras_tasks import TasksExtension

warnings.filterwarnings("ignore", message=".*deprecated.*")

__all__ = ["build", "main"]

REGION_HEADER: dict[str, Any] = {"x-mcp-header": "Region"}
ANSWER_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


class Keep(BaseModel):
    """The ``confirm`` question."""

    keep: bool


def _modern(ctx: Context) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _answer(response: Any) -> str:
    if isinstance(response, ElicitResult) and response.action == "accept" and response.content:
        return str(response.content.get("answer", ""))
    return ""


async def _ask(rounds: int, ctx: Context) -> str | InputRequiredResult:
    if not _modern(ctx):
        answers = []
        for n in range(rounds):
            got = await ctx.elicit(f"question {n + 1}", _Answer)
            answers.append(got.data.answer if isinstance(got, AcceptedElicitation) else "")
        return "answers: " + ",".join(answers)
    previous = (ctx.request_state or "").split("\x1f") if ctx.request_state else []
    answers = [*previous[1:], *(_answer(r) for r in (ctx.input_responses or {}).values())]
    if len(answers) >= rounds:
        return "answers: " + ",".join(answers[:rounds])
    key = f"q{len(answers) + 1}"
    request = ElicitRequest(params=ElicitRequestFormParams(message=f"question {len(answers) + 1}",
                                                           requested_schema=ANSWER_SCHEMA))
    return InputRequiredResult(input_requests={key: request},
                               request_state="\x1f".join(["ask", *answers]))


class _Answer(BaseModel):
    answer: str


async def _visit(url: str, ctx: Context) -> str | InputRequiredResult:
    if not _modern(ctx):
        await ctx.elicit_url("open this page", url, "visit-1")
        return "visited"
    if ctx.input_responses:
        return "visited"
    request = ElicitRequest(params=ElicitRequestURLParams(message="open this page", url=url))
    return InputRequiredResult(input_requests={"page": request}, request_state="visit")


async def _keep_question(item: str) -> Elicit[Keep]:
    return Elicit(f"keep {item}?", Keep)


def build(*, auth: dict[str, Any] | None = None, readiness: bool = False) -> MCPServer[Any]:
    """The fixture server with its tools, prompt, resource and the Tasks extension.

    Args:
        auth: ``MCPServer`` keyword arguments that make it a protected resource (``--oauth``), or None.
        readiness: add the ``--readiness`` profile (instructions and annotated tools).

    Returns:
        The server.
    """
    from mcpeval_nb.testing.servers._eras_readiness import INSTRUCTIONS, add_readiness_tools

    server: MCPServer[Any] = MCPServer("sdk-eras", log_level="WARNING", extensions=[TasksExtension()],
                                       instructions=INSTRUCTIONS if readiness else None, **(auth or {}))
    if readiness:
        add_readiness_tools(server)

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool()
    def navigate(url: str, waitUntil: Literal["commit", "networkIdle"] = "commit") -> str:
        """Pretend to open a page."""
        return f"opened after {waitUntil}"

    @server.tool()
    def fail(message: str) -> str:
        """Always fail, quoting the message."""
        raise ToolError(f"failed: {message}")

    @server.tool()
    def region(region: Annotated[str, Field(json_schema_extra=REGION_HEADER)], query: str) -> str:
        """Run a query in a region (the region travels in the Mcp-Param-Region header too)."""
        return f"ran in {region}: {len(query)} characters"

    @server.tool()
    async def ask(rounds: int, ctx: Context) -> str | InputRequiredResult:
        """Ask ``rounds`` questions, one per round, then answer with the answers."""
        return await _ask(rounds, ctx)

    @server.tool()
    async def visit(url: str, ctx: Context) -> str | InputRequiredResult:
        """Send the user to a page (URL-mode elicitation)."""
        return await _visit(url, ctx)

    @server.tool()
    def confirm(item: str, keep: Annotated[ElicitationResult[Keep], Resolve(_keep_question)]) -> str:
        """Ask whether to keep ``item``."""
        return "kept" if isinstance(keep, AcceptedElicitation) and keep.data.keep else "dropped"

    @server.tool()
    def job(ms: int, end: Literal["completed", "failed", "input_required"] = "completed",
            note: str = "") -> str:
        """A long job (a task for clients with the Tasks extension)."""
        if end == "failed":
            raise ToolError("job failed")
        return f"job done: {note}"

    @server.tool()
    async def touch(ctx: Context) -> str:
        """Tell ``subscriptions/listen`` streams that the tool list changed."""
        await ctx.notify_tools_changed()
        return "touched"

    @server.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello {name}"

    @server.resource("note://{key}")
    def note(key: str) -> str:
        """A note."""
        return f"note {key}"

    return server


def _bind() -> tuple[socket.socket, int]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock, int(sock.getsockname()[1])


async def _serve_http(*, era: str, json_response: bool, oauth: bool, readiness: bool) -> None:
    import uvicorn

    from mcpeval_nb.testing.servers._eras_http import era_gate, oauth_settings

    sock, port = _bind()
    origin = f"http://127.0.0.1:{port}"
    server = build(auth=oauth_settings(origin) if oauth else None, readiness=readiness)
    app = server.streamable_http_app(json_response=json_response, stateless_http=True, host="127.0.0.1")
    config = uvicorn.Config(era_gate(app, era), log_level="warning", lifespan="on")
    print(f"{origin}/mcp", flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


async def _serve_stdio(era: str, readiness: bool) -> None:
    from mcpeval_nb.testing.servers._eras_stdio import serve_stdio

    await serve_stdio(build(readiness=readiness), era)


def main(argv: list[str]) -> int:
    """Run the server as ``argv`` says (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="sdk_eras")
    parser.add_argument("--era", choices=("dual", "modern", "legacy"), default="dual")
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--oauth", action="store_true")
    parser.add_argument("--readiness", action="store_true")
    args = parser.parse_args(argv)
    if args.http:
        asyncio.run(_serve_http(era=args.era, json_response=args.json, oauth=args.oauth,
                                readiness=args.readiness))
    else:
        asyncio.run(_serve_stdio(args.era, args.readiness))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
