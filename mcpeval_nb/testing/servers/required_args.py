"""Fixture: read-only tools that require arguments (SPEC 17 ``required_args_server``).

``lookup_by_kind(kind: alpha|beta)``, ``on_date(day: format date)``, ``page(limit: integer >= 5)``,
``patterned(code: pattern ^[A-Z]{3}$)`` (unsynthesizable), ``nested(filter: $ref -> {field: string
minLength 3})``.  Valid arguments succeed, anything else answers -32602; ``ping`` answers {}; unknown
methods -32601.
"""

from __future__ import annotations

import re
from typing import Any

if __package__:
    from ._mcp import Context, Fail, Server, text_result
else:  # run by path (fast start: the package is not imported)
    from _mcp import Context, Fail, Server, text_result  # type: ignore[no-redef,import-not-found,unused-ignore]

_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _check(ok: bool) -> Any:
    if not ok:
        raise Fail(-32602, "invalid arguments")
    return text_result()


def build() -> Server:
    """The required-arguments server."""
    server = Server("required-args")
    server.tool("lookup_by_kind", lambda a, c: _check(a.get("kind") in ("alpha", "beta")),
                properties={"kind": {"type": "string", "enum": ["alpha", "beta"], "description": "Kind."}},
                required=["kind"])
    server.tool("on_date", lambda a, c: _check(isinstance(a.get("day"), str)
                                               and bool(_DATE.fullmatch(a["day"]))),
                properties={"day": {"type": "string", "format": "date", "description": "A day."}},
                required=["day"])
    server.tool("page", lambda a, c: _check(isinstance(a.get("limit"), int) and a["limit"] >= 5),
                properties={"limit": {"type": "integer", "minimum": 5, "description": "Page size."}},
                required=["limit"])
    server.tool("patterned", lambda a, c: _check(isinstance(a.get("code"), str)
                                                 and bool(re.fullmatch(r"[A-Z]{3}", a["code"]))),
                properties={"code": {"type": "string", "pattern": "^[A-Z]{3}$", "description": "A code."}},
                required=["code"])
    nested: dict[str, Any] = {
        "type": "object", "properties": {"filter": {"$ref": "#/$defs/filter", "description": "A filter."}},
        "required": ["filter"],
        "$defs": {"filter": {"type": "object", "properties": {"field": {"type": "string", "minLength": 3}},
                             "required": ["field"]}}}

    def nested_call(a: Any, c: Context) -> Any:
        flt = a.get("filter")
        return _check(isinstance(flt, dict) and isinstance(flt.get("field"), str) and len(flt["field"]) >= 3)

    server.tool("nested", nested_call)
    server.tools[-1]["inputSchema"] = nested
    return server


if __name__ == "__main__":
    build().run()
