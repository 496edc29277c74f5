"""Each server's catalog against its pin: changes since it was approved, new flags, dead tools.

``catalog_status`` is what ``catalog check`` (the CI gate), ``gate``'s ``catalog`` section and serve's
``get_catalog_status`` answer from: for a pinned server, every change of its listings recorded since the
pinned listing (``catalog_drift(pins=...)``) and every flag the pin does not hold; for a server without
a pin, that it is unpinned and every flag of its latest listing; and the tools ``tool_usage`` calls dead.
Labels, digests, counts and times only.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from ..analysis.catalog import (
    Source,
    catalog_drift,
    catalog_history,
    listings,
    moment,
    open_source,
    resolve_pins,
)
from ..analysis.catalog_pins import CatalogPins, PinnedCatalog
from ..analysis.usage import tool_usage
from ..clock import now_ts

__all__ = ["CatalogChange", "CatalogStatus", "DeadTool", "NewFlag", "ServerStatus", "catalog_status"]


def _iso(when: dt.datetime | None) -> str | None:
    return None if when is None else now_ts(when)


@dataclass(frozen=True)
class CatalogChange:
    """A change of one tool against the pin (``catalog_drift``'s row)."""

    tool: str
    change: str
    previous_tool: str | None
    first_seen: dt.datetime | None
    sessions: int
    before: str | None
    after: str | None

    def to_json(self) -> dict[str, Any]:
        """Labels, digests, counts and the time as text."""
        return {"tool": self.tool, "change": self.change, "previous_tool": self.previous_tool,
                "first_seen": _iso(self.first_seen), "sessions": self.sessions, "before": self.before,
                "after": self.after}


@dataclass(frozen=True)
class NewFlag:
    """A flag a tool carries that its pin does not."""

    tool: str
    flag: str
    first_seen: dt.datetime | None

    def to_json(self) -> dict[str, Any]:
        """Labels and the time as text."""
        return {"tool": self.tool, "flag": self.flag, "first_seen": _iso(self.first_seen)}


@dataclass(frozen=True)
class DeadTool:
    """A tool listed in many sessions and never called (``tool_usage`` verdict ``dead``)."""

    tool: str
    listed_sessions: int
    catalog_tokens: int | None

    def to_json(self) -> dict[str, Any]:
        """Label and counts."""
        return {"tool": self.tool, "listed_sessions": self.listed_sessions,
                "catalog_tokens": self.catalog_tokens}


@dataclass(frozen=True)
class ServerStatus:
    """One server: its pin (None: unpinned), latest complete listing, changes since the pin, new flags,
    dead tools."""

    server: str
    pinned_at: str | None
    latest: dt.datetime | None
    tools: int
    changes: tuple[CatalogChange, ...]
    new_flags: tuple[NewFlag, ...]
    dead: tuple[DeadTool, ...]

    @property
    def pinned(self) -> bool:
        """The server has an approved catalog."""
        return self.pinned_at is not None

    def lines(self) -> list[str]:
        """One line for the server, one per change and new flag under it, one for the dead tools."""
        pin = f"pinned at {self.pinned_at}" if self.pinned else "unpinned"
        out = [f"{self.server} {pin} tools={self.tools} changes={len(self.changes)} "
               f"new_flags={len(self.new_flags)} dead_tools={len(self.dead)}"]
        out += [f"  {c.change} {c.tool}" + (f" (was {c.previous_tool})" if c.previous_tool else "")
                + f" first_seen={c.to_json()['first_seen']} sessions={c.sessions}" for c in self.changes]
        out += [f"  new flag {f.flag} on {f.tool} first_seen={f.to_json()['first_seen']}"
                for f in self.new_flags]
        if self.dead:
            dead = ", ".join(f"{d.tool} ({d.catalog_tokens or 0} tokens)" for d in self.dead)
            out.append(f"  dead: {dead}")
        return out

    def to_json(self) -> dict[str, Any]:
        """The status as JSON values."""
        return {"server": self.server, "pinned": self.pinned, "pinned_at": self.pinned_at,
                "latest_listing": _iso(self.latest), "tools": self.tools,
                "changes": [c.to_json() for c in self.changes],
                "new_flags": [f.to_json() for f in self.new_flags],
                "dead_tools": [d.to_json() for d in self.dead]}


@dataclass(frozen=True)
class CatalogStatus:
    """Every server's status, by label."""

    servers: tuple[ServerStatus, ...]

    def to_json(self) -> dict[str, Any]:
        """``{"servers": [...]}``."""
        return {"servers": [s.to_json() for s in self.servers]}


def _changes(store: Any, server: str, pins: CatalogPins, pin: PinnedCatalog) -> tuple[CatalogChange, ...]:
    drift = catalog_drift(store, server=server, since=pin.pinned_at, pins=pins).to_pylist()
    return tuple(CatalogChange(r["tool"], r["change"], r["previous_tool"], r["first_seen"], r["sessions"],
                               r["before"], r["after"]) for r in drift if r["change"] != "mid-session")


def _new_flags(items: list[Any], pin: PinnedCatalog | None) -> tuple[NewFlag, ...]:
    found: dict[tuple[str, str], NewFlag] = {}
    for listing in items if pin is not None else items[-1:]:
        for tool, state in listing.tools.items():
            held = pin.tools[tool].flags if pin is not None and tool in pin.tools else ()
            for flag in state.flags:
                if flag not in held and (tool, flag) not in found:
                    found[(tool, flag)] = NewFlag(tool, flag, listing.ts)
    return tuple(found.values())


def _since(items: list[Any], pin: PinnedCatalog | None) -> list[Any]:
    if pin is None:
        return items
    start = moment(pin.pinned_at, "pinned_at")
    return [item for item in items if item.ts is not None and start is not None and item.ts >= start]


def catalog_status(root: Source = None, *, server: str | None = None, pins: Any = True) -> CatalogStatus:
    """Each recorded or pinned server's catalog against its pin.

    Args:
        root: the capture root, or an open ``Store``.
        server: only this server label.
        pins: the pins (True: the root's ``catalog-pins.json``; a path, a document or ``CatalogPins``).

    Returns:
        The status of every server with a complete listing or a pin, sorted by label.

    Raises:
        UsageError: the pins file is unreadable or invalid.
    """
    store = open_source(root)
    pinned = resolve_pins(pins, store) or CatalogPins()
    grouped: dict[str, list[Any]] = {}
    for listing in listings(catalog_history(store, server=server)):
        if listing.complete:
            grouped.setdefault(listing.server, []).append(listing)
    names = set(grouped) | {s for s in pinned.servers if server in (None, s)}
    usage = tool_usage(store, server=server).to_pylist()
    out = []
    for name in sorted(names):
        items, pin = grouped.get(name, []), pinned.servers.get(name)
        dead = tuple(DeadTool(r["tool"], r["listed_sessions"], r["catalog_tokens"]) for r in usage
                     if r["server"] == name and r["verdict"] == "dead")
        out.append(ServerStatus(
            server=name, pinned_at=None if pin is None else pin.pinned_at,
            latest=items[-1].ts if items else None, tools=len(items[-1].tools) if items else 0,
            changes=_changes(store, name, pinned, pin) if pin is not None else (),
            new_flags=_new_flags(_since(items, pin), pin) if items else (), dead=dead))
    return CatalogStatus(tuple(out))
