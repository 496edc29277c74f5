"""A real MCP peer built on the PyPI ``mcp`` SDK (test-only): ``python transport_sdk_peer.py stdio`` or
``python transport_sdk_peer.py http PORT`` (streamable-http on 127.0.0.1:PORT/mcp)."""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer

CANARY = "CANARY-sdk-peer-9a61"

app = MCPServer("sdk-peer")


@app.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@app.tool()
def explode() -> str:
    """Always fails."""
    raise ValueError(f"{CANARY} private failure")


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        app.run()
    else:
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
