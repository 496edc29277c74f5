"""``sdk_eras`` over stdio: the SDK's serving loop of the era asked for.

``dual`` is ``MCPServer.run()``'s own loop (the client's first request decides the era); ``modern`` is the
SDK's 2026-07-28 stream loop, which answers ``initialize`` with -32022 naming the versions it serves;
``legacy`` is the SDK's handshake-only loop, which refuses ``server/discover`` before ``initialize``, so an
``auto`` client falls back.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.runner import _serve_modern_stream, serve_loop  # the SDK's own era loops
from mcp.server.stdio import stdio_server

__all__ = ["serve_stdio"]


async def serve_stdio(server: MCPServer[Any], era: str) -> None:
    """Serve ``server`` on stdin/stdout until the client closes its end.

    Args:
        server: the fixture server.
        era: ``dual``, ``modern`` or ``legacy``.
    """
    low = server._lowlevel_server  # the SDK's loops take the low-level server
    async with stdio_server() as (read, write), low.lifespan(low) as state:
        if era == "modern":
            await _serve_modern_stream(low, read, write, lifespan_state=state, raise_exceptions=False)
        elif era == "legacy":
            await serve_loop(low, read, write, lifespan_state=state,
                             init_options=low.create_initialization_options())
        else:
            from mcp.server.runner import serve_dual_era_loop

            await serve_dual_era_loop(low, read, write, lifespan_state=state,
                                      init_options=low.create_initialization_options())
