"""serve's ``get_catalog_status``: did a server's tool catalog change since it was approved?

Read-only: each recorded or pinned server's status against ``catalog-pins.json``
(``catalog.catalog_status``): the changes recorded since the pinned listing, the signal flags the pin
does not hold, and the dead tools.  Labels, digests, counts and times only, never a description.
"""

from __future__ import annotations

from typing import Any

from .base import ToolContext, ToolResult

__all__ = ["NO_CATALOG", "get_catalog_status"]

NO_CATALOG = "no catalog recorded and none pinned; capture a session through `mcpeval-nb shim`"


def get_catalog_status(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    """Every server's catalog against its pin (or only ``server``)."""
    from ..catalog import catalog_status  # here: serve starts without the catalog layer (pandas)

    status = catalog_status(ctx.root, server=args.get("server"))
    lines = [line for s in status.servers for line in s.lines()]
    return ToolResult("\n".join(lines) if lines else NO_CATALOG, status.to_json())
