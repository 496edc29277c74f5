"""Helpers for the capture end-to-end tests: drive a real MCP server with the official SDK client."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcpeval_nb.testing.servers import sdk_demo

CANARY = "CANARY-e2e-91b4"


def shim_cli(server: str, command: list[str]) -> list[str]:
    """argv of ``mcpeval-nb shim --server <server> -- <command>``."""
    return [sys.executable, "-m", "mcpeval_nb", "shim", "--server", server, "--", *command]


def sdk_demo_command(*args: str) -> list[str]:
    """The MCPServer fixture run as a script (it imports only the SDK)."""
    return [sys.executable, sdk_demo.__file__, *args]


@dataclass
class Transcript:
    """What the SDK client saw: comparable results plus the log notifications received."""

    results: list[Any] = field(default_factory=list)
    logs: list[Any] = field(default_factory=list)


async def _drive(session: ClientSession, calls: list[tuple[str, dict[str, Any]]], out: Transcript) -> None:
    out.results.append((await session.initialize()).capabilities.model_dump(exclude_none=True))
    listing = await session.list_tools()
    out.results.append([t.model_dump(exclude_none=True) for t in listing.tools])
    for name, arguments in calls:
        result = await session.call_tool(name, arguments)
        out.results.append(result.model_dump(exclude_none=True))


def run_stdio(argv: list[str], calls: list[tuple[str, dict[str, Any]]], *, env: dict[str, str]) -> Transcript:
    """Start ``argv`` with the SDK's stdio client, initialize, list tools, make the calls."""
    out = Transcript()

    async def logged(params: Any) -> None:
        out.logs.append(params.model_dump(exclude_none=True))

    async def main() -> None:
        params = StdioServerParameters(command=argv[0], args=argv[1:], env={**os.environ, **env})
        with anyio.fail_after(120):
            async with stdio_client(params) as (read, write), ClientSession(
                    read, write, logging_callback=logged) as session:
                await _drive(session, calls, out)

    anyio.run(main)
    return out


def run_http(url: str, calls: list[tuple[str, dict[str, Any]]]) -> Transcript:
    """Connect the SDK's Streamable HTTP client to ``url``, initialize, list tools, make the calls."""
    from mcp.client.streamable_http import streamable_http_client

    out = Transcript()

    async def logged(params: Any) -> None:
        out.logs.append(params.model_dump(exclude_none=True))

    async def main() -> None:
        with anyio.fail_after(120):
            async with streamable_http_client(url) as (read, write), ClientSession(
                    read, write, logging_callback=logged) as session:
                await _drive(session, calls, out)

    anyio.run(main)
    return out


def store_text(root: Path) -> str:
    """Every byte under ``<root>/store`` as text."""
    return "".join(p.read_text() for p in sorted((root / "store").rglob("*")) if p.is_file())
