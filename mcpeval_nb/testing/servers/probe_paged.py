"""Fixture: a paginated catalog (SPEC 17 ``probe_paged_server``).

Modes: ``clean`` (page one ``alpha_read``, ``beta_status``, ``slow_read`` with ``nextCursor: "page-2"``;
page two ``gamma_reset``, ``delta_slow``), ``duplicate`` (page two repeats ``alpha_read``), ``invalid``
(page-two entries lack inputSchema), ``stalled`` (an empty page two with a never-ending cursor),
``page-error`` (any cursor page errors -32603), ``late`` (every page-one tool answers ``isError``).
``slow_read`` and ``delta_slow`` sleep 150 ms.
"""

from __future__ import annotations

import sys
import time
from typing import Any

if __package__:
    from ._mcp import Context, Fail, Server, text_result
else:  # run by path (fast start: the package is not imported)
    from _mcp import Context, Fail, Server, text_result  # type: ignore[no-redef,import-not-found,unused-ignore]

PAGE_ONE = ("alpha_read", "beta_status", "slow_read")
PAGE_TWO = ("gamma_reset", "delta_slow")


def build(mode: str) -> Server:
    """The paged server for ``mode``."""
    server = Server("probe-paged")

    def tool(name: str) -> Any:
        def handler(args: Any, ctx: Context) -> Any:
            if name.endswith("slow") or name.startswith("slow"):
                time.sleep(0.15)
            if mode == "late" and name in PAGE_ONE:
                return text_result(isError=True)
            return text_result(structuredContent={"tool": name})
        return handler

    for name in PAGE_ONE + PAGE_TWO:
        server.tool(name, tool(name), read_only=name != "gamma_reset")
    entries = {entry["name"]: entry for entry in server.tools}

    def listing(params: Any, ctx: Context) -> Any:
        cursor = params.get("cursor") if isinstance(params, dict) else None
        if cursor is None:
            return {"tools": [entries[n] for n in PAGE_ONE], "nextCursor": "page-2"}
        if mode == "page-error":
            raise Fail(-32603)
        if mode == "stalled":
            return {"tools": [], "nextCursor": "page-3"}
        page = [dict(entries[n]) for n in PAGE_TWO]
        if mode == "duplicate":
            page.append(entries["alpha_read"])
        if mode == "invalid":
            for entry in page:
                entry.pop("inputSchema")
        return {"tools": page}

    server.methods["tools/list"] = listing
    return server


if __name__ == "__main__":
    build(sys.argv[1] if len(sys.argv) > 1 else "clean").run()
