"""Fixture: a server with many read-only tools (benchmarks and the readiness CLI tests).

Usage: ``many_tools.py [COUNT] [--delay-ms N] [--http]``.  Tools ``tool_000`` ... each take an optional
described string ``query``, are annotated ``readOnlyHint: true``, declare an output schema, refuse a
non-string ``query`` with -32602, and answer after ``N`` ms (default 0).  ``--http`` serves Streamable
HTTP on 127.0.0.1 (the URL is printed on stdout) instead of stdio.
"""

from __future__ import annotations

import sys
import time
from typing import Any

if __package__:
    from ._mcp import Context, Fail, Server, text_result
else:  # run by path (fast start: the package is not imported)
    from _mcp import Context, Fail, Server, text_result  # type: ignore[no-redef,import-not-found,unused-ignore]

OUTPUT_SCHEMA = {"type": "object", "properties": {"index": {"type": "integer"}}, "required": ["index"]}


def build(count: int, delay_ms: int) -> Server:
    """The server with ``count`` tools answering after ``delay_ms``."""
    server = Server("many-tools")

    def make(index: int) -> Any:
        def handler(args: Any, ctx: Context) -> Any:
            if "query" in args and not isinstance(args["query"], str):
                raise Fail(-32602, "query must be a string")
            if delay_ms:
                time.sleep(delay_ms / 1000)
            return text_result(f"tool {index} answered", structuredContent={"index": index})
        return handler

    for i in range(count):
        server.tool(f"tool_{i:03d}", make(i), description=f"Fixture read-only tool number {i} that answers "
                    "with its own index.", outputSchema=OUTPUT_SCHEMA,
                    properties={"query": {"type": "string", "description": "An optional query text."}})
    return server


def main(argv: list[str]) -> None:
    """Parse ``[COUNT] [--delay-ms N] [--http]`` and serve."""
    count, delay, http = 100, 0, False
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--delay-ms":
            delay = int(args.pop(0))
        elif arg == "--http":
            http = True
        else:
            count = int(arg)
    build(count, delay).run(http=http)


if __name__ == "__main__":
    main(sys.argv[1:])
