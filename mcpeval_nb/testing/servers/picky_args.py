"""Fixture: read-only tools whose free strings must have a shape the schema only describes in words.

``zone_now(timezone)`` accepts an IANA-style name (``Area/City`` or ``UTC``; the description quotes
examples) and answers anything else with an ``isError`` result naming the rule; ``at_time(time)`` wants
``HH:MM`` (said only in its error); ``sealed(code)`` refuses every value (nothing the tool says helps);
``broken(day: format date)`` fails with -32603 on a valid day (the server's own failure).
"""

from __future__ import annotations

import re
from typing import Any

if __package__:
    from ._mcp import Context, Fail, Server, text_result
else:  # run by path (fast start: the package is not imported)
    from _mcp import Context, Fail, Server, text_result  # type: ignore[no-redef,import-not-found,unused-ignore]

_ZONE = re.compile(r"UTC|[A-Z][a-z]+/[A-Za-z_]+")
_TIME = re.compile(r"[0-2][0-9]:[0-5][0-9]")


def _refuse(rule: str) -> dict[str, Any]:
    return text_result(f"invalid argument: {rule}", isError=True)


def _string(prop: str, description: str) -> dict[str, Any]:
    return {prop: {"type": "string", "description": description}}


def build() -> Server:
    """The picky-arguments server."""
    server = Server("picky-args")
    server.tool("zone_now", lambda a, c: text_result("ok") if _ZONE.fullmatch(str(a.get("timezone")))
                else _refuse("unknown time zone"),
                properties=_string("timezone", "IANA time-zone name (e.g., 'Europe/Paris', 'Asia/Tokyo')."),
                required=["timezone"])
    server.tool("at_time", lambda a, c: text_result("ok") if _TIME.fullmatch(str(a.get("time")))
                else _refuse("expected HH:MM"),
                properties=_string("time", "When."), required=["time"])
    server.tool("sealed", lambda a, c: _refuse("wrong code"), properties=_string("code", "A code."),
                required=["code"])

    def broken(a: Any, c: Context) -> Any:
        raise Fail(-32603, "internal error")

    server.tool("broken", broken, properties={"day": {"type": "string", "format": "date"}}, required=["day"])
    return server


if __name__ == "__main__":
    build().run()
