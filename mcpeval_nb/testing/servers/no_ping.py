"""Fixture: a server without ``ping`` (SPEC 17 ``no_ping_server``).

Tool ``lookup(city: string)`` (readOnlyHint) refuses a non-string city with -32602; ``ping`` and unknown
methods answer -32601; an unknown tool answers -32602.
"""

from __future__ import annotations

from typing import Any

if __package__:
    from ._mcp import Context, Fail, Server, text_result
else:  # run by path (fast start: the package is not imported)
    from _mcp import Context, Fail, Server, text_result  # type: ignore[no-redef,import-not-found,unused-ignore]


def build() -> Server:
    """The no-ping server."""
    server = Server("no-ping")

    def lookup(args: Any, ctx: Context) -> Any:
        if not isinstance(args.get("city"), str):
            raise Fail(-32602, "city must be a string")
        return text_result()

    server.tool("lookup", lookup, properties={"city": {"type": "string", "description": "A city name."}})
    del server.methods["ping"]
    return server


if __name__ == "__main__":
    import sys

    build().run(http="--http" in sys.argv[1:])
