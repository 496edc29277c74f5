"""Fixture: a server that always answers protocol ``2025-03-26`` (SPEC 17 ``old_protocol_server``).

Tool ``status`` (readOnlyHint); ``ping`` ok; unknown methods -32601.
"""

from __future__ import annotations

from typing import Any

if __package__:
    from ._mcp import Context, Server, text_result
else:  # run by path (fast start: the package is not imported)
    from _mcp import Context, Server, text_result  # type: ignore[no-redef,import-not-found,unused-ignore]


def build() -> Server:
    """The old-protocol server."""
    server = Server("old-protocol", version="2025-03-26")

    def status(args: Any, ctx: Context) -> Any:
        return text_result(status="ready")

    server.tool("status", status)
    return server


if __name__ == "__main__":
    build().run()
