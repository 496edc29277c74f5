"""A fixture server written with the official SDK's ``MCPServer`` (stdio, or Streamable HTTP).

Tools: ``navigate(url, waitUntil)`` with an enum (``commit``/``networkIdle``), ``echo(text)`` returning the
text, ``fail(message)`` raising an error that quotes the message (an ``isError`` result), ``notify(message)``
sending a log notification that quotes the message before returning, and ``big(size)`` returning ``size``
bytes of text.

Usage: ``python -m mcpeval_nb.testing.servers.sdk_demo [stdio]`` or ``... sdk_demo http [--json]``.  In
HTTP mode the server binds 127.0.0.1 on a port the OS chooses, prints its endpoint URL
(``http://127.0.0.1:<port>/mcp``) as the first line on stdout, and serves until terminated; ``--json``
answers POSTs with JSON bodies instead of SSE streams.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import warnings
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

warnings.filterwarnings("ignore", message="The logging capability is deprecated")


def build() -> MCPServer[Any]:
    """The demo server with its five tools."""
    server: MCPServer[Any] = MCPServer("sdk-demo", log_level="WARNING")

    @server.tool()
    def navigate(url: str, waitUntil: Literal["commit", "networkIdle"] = "commit") -> str:
        """Pretend to open a page."""
        return f"opened after {waitUntil}"

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool()
    def fail(message: str) -> str:
        """Always fail, quoting the message."""
        raise ToolError(f"failed: {message}")

    @server.tool()
    async def notify(message: str, ctx: Context) -> str:
        """Send a log notification quoting the message, then answer."""
        await ctx.info(f"note: {message}")
        return "notified"

    @server.tool()
    def big(size: int) -> str:
        """Return ``size`` bytes of text."""
        return "x" * size

    return server


async def _serve_http(server: MCPServer[Any], *, json_response: bool) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = server.streamable_http_app(json_response=json_response, host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"http://127.0.0.1:{port}/mcp", flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


def main(argv: list[str]) -> int:
    """Run the server in the mode named by ``argv``."""
    server = build()
    mode = argv[0] if argv else "stdio"
    if mode == "http":
        asyncio.run(_serve_http(server, json_response="--json" in argv))
    else:
        server.run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
