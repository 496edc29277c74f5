"""Fixture: tools whose results have known sizes (``mcpeval-nb sizes`` tests, notebook 06).

- ``fixed_text``: one text item of 500 ``é`` (500 code points, 1000 UTF-8 bytes);
- ``sized_text``: ``chars`` (an integer argument, default 100, at most 100000) ASCII characters;
- ``mixed``: a text item (``CANARY raw response``), an image, a resource link and an item of an unknown
  type, plus ``structuredContent`` ``{"rows": [1, 2, 3]}``;
- ``tool_error``: an ``isError: true`` result whose text is ``CANARY private error``;
- ``rpc_error``: a JSON-RPC error -32001 with the same text;
- ``crash``: the process exits mid-call (the transport closes; a client must reconnect);
- ``wipe``: annotated ``destructiveHint: true`` (a writer: refused without both mutation controls);
- ``list_labels`` and ``get_table_details`` (``table_name``): the tools of mcp-xray's safe-calls
  example, so its call manifest runs unchanged.

Every description carries ``CANARY tool description``.  Run with ``http`` as the first argument to serve
Streamable HTTP on loopback instead of stdio.
"""

from __future__ import annotations

import os
import sys
from typing import Any

if __package__:
    from ._mcp import CANARY_ERROR, Context, Fail, Server, text_result
else:  # run by path (fast start: the package is not imported)
    from _mcp import (  # type: ignore[no-redef,import-not-found,unused-ignore]
        CANARY_ERROR,
        Context,
        Fail,
        Server,
        text_result,
    )

CANARY_DESCRIPTION = "CANARY tool description"
FIXED_TEXT = "é" * 500


def _describe(what: str) -> str:
    return f"{what} {CANARY_DESCRIPTION}."


def build() -> Server:
    """The server."""
    server = Server("result-sizes")

    def fixed_text(args: Any, ctx: Context) -> Any:
        return text_result(FIXED_TEXT)

    def sized_text(args: Any, ctx: Context) -> Any:
        chars = args.get("chars", 100)
        chars = chars if isinstance(chars, int) and 0 <= chars <= 100_000 else 100
        return text_result("a" * chars)

    def mixed(args: Any, ctx: Context) -> Any:
        return {
            "content": [
                {"type": "text", "text": "CANARY raw response"},
                {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
                {"type": "resource_link", "uri": "file:///CANARY", "name": "CANARY"},
                {"type": "CANARY-type"},
            ],
            "structuredContent": {"rows": [1, 2, 3]},
        }

    def tool_error(args: Any, ctx: Context) -> Any:
        return text_result(CANARY_ERROR, isError=True)

    def rpc_error(args: Any, ctx: Context) -> Any:
        raise Fail(-32001, CANARY_ERROR)

    def crash(args: Any, ctx: Context) -> Any:
        sys.stdout.flush()
        os._exit(3)

    def wipe(args: Any, ctx: Context) -> Any:
        return text_result("wiped")

    server.tool("fixed_text", fixed_text, description=_describe("Return 500 accented characters."))
    server.tool(
        "sized_text",
        sized_text,
        description=_describe("Return `chars` ASCII characters."),
        properties={"chars": {"type": "integer", "minimum": 0, "maximum": 100000}},
    )
    server.tool("mixed", mixed, description=_describe("Return one item of every content type."))
    server.tool("tool_error", tool_error, description=_describe("Always answer isError."))
    server.tool("rpc_error", rpc_error, description=_describe("Always answer a JSON-RPC error."))
    server.tool("crash", crash, description=_describe("Exit mid-call."))
    server.tool(
        "wipe",
        wipe,
        read_only=None,
        description=_describe("Delete everything (a writer)."),
        annotations={"destructiveHint": True, "readOnlyHint": False},
    )
    server.tool(
        "list_labels", lambda a, c: text_result("INBOX,CANARY"), description=_describe("List labels.")
    )
    server.tool(
        "get_table_details",
        lambda a, c: text_result("columns: id, total " * 10, structuredContent={"columns": ["id", "total"]}),
        description=_describe("Describe one table."),
        properties={"table_name": {"type": "string"}},
        required=["table_name"],
    )
    return server


def main(argv: list[str]) -> None:
    """Serve on stdio (or Streamable HTTP with ``http``)."""
    build().run(http=bool(argv) and argv[0] == "http")


if __name__ == "__main__":
    main(sys.argv[1:])
