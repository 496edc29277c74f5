"""The demo's catalog step: a server whose catalog changes after it was approved, and one whose catalog
carries the signals of tool poisoning (the ``catalog_drift`` fixture server behind the real stdio shim).

``inventory`` is listed twice as ``v1`` (its tools called), pinned (``pin_catalogs``: the approved
catalog), then listed as ``v2`` (a quiet change: a description, a schema, annotations, a rename, a removal
and an addition) and changed again inside one session after ``notifications/tools/list_changed``.
``weather`` lists its ``poisoned`` catalog: one tool per signal rule.  Notebook 07 and the summary show
the drift and the flags; the generated history (``history.py``) adds the listings that make dead tools.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mcpeval_nb import StdioTarget, pin_catalogs
from mcpeval_nb.testing.servers import catalog_drift
from mcpeval_nb.transport import McpSession

__all__ = ["CatalogSummary", "catalog_sessions"]

Say = Callable[[str], None]


@dataclass(frozen=True)
class CatalogSummary:
    """What the catalog step did: sessions captured per server and the tools pinned."""

    sessions: dict[str, int]
    pinned: int


def _shim(root: Path, label: str, *server_args: str) -> StdioTarget:
    server = [sys.executable, catalog_drift.__file__, *server_args]
    return StdioTarget((sys.executable, "-m", "mcpeval_nb", "shim", "--server", label, "--root", str(root),
                        "--", *server))


def _session(target: StdioTarget, calls: tuple[str, ...], *, relist_after: str | None = None) -> None:
    with McpSession.connect(target, timeout=60.0) as session:
        session.initialize(capabilities={})
        session.list_tools()
        for tool in calls:
            session.call_tool(tool, {})
        if relist_after is not None:  # the server changes its tools and says so; the client lists again
            session.call_tool(relist_after, {})
            session.list_tools()


def catalog_sessions(root: Path, *, say: Say) -> CatalogSummary:
    """Capture the catalog sessions (see the module docstring).

    Raises:
        TransportError: a server or the shim failed to start or answer.
    """
    say("catalogs: inventory (v1 twice, pinned, then a quiet change) behind the stdio shim")
    _session(_shim(root, "inventory", "v1"), ("search_items", "get_item"))
    _session(_shim(root, "inventory", "v1"), ("search_items",))
    pinned = pin_catalogs(root, server="inventory")
    _session(_shim(root, "inventory", "v2"), ("search_items",))
    _session(_shim(root, "inventory", "v1", "v2", "--advance-on", "search_items"), (),
             relist_after="search_items")
    say("catalogs: weather (a poisoned catalog) behind the stdio shim")
    _session(_shim(root, "weather", "poisoned"), ("weather_now",))
    return CatalogSummary(sessions={"inventory": 4, "weather": 1},
                          pinned=sum(n for n, _ in pinned.servers.values()))
