"""Catalog pins: the digests of each server's approved catalog (``<root>/catalog-pins.json``).

``catalog pin`` writes them (owner-only, audited: ``catalog.pins.write_pins``); ``catalog_drift(pins=)``,
``catalog check``, ``gate``'s ``catalog`` section and serve's ``get_catalog_status`` compare what the
shims recorded against them.  The file holds labels, digests and flag labels only (docs/catalog.md)::

    {"schema": "mcpeval-nb.catalog-pins/v1",
     "servers": {"<label>": {"pinned_at": "<ts>", "tools": {"<tool>": {"def_digest": "<16 hex>",
       "desc_digest": ..., "schema_digest": ..., "annotations_digest": ..., "flags": [...]}}}}}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..clock import valid_rfc3339
from ..errors import UsageError
from ..privacy.catalog_signals import FLAGS
from ..privacy.grammar import valid_server, valid_template_id, valid_tool
from ..root import Root, RootLike, layout

__all__ = ["PINS_NAME", "PINS_SCHEMA", "CatalogPins", "PinnedCatalog", "ToolState", "load_pins",
           "parse_pins", "pins_path"]

PINS_NAME = layout.CATALOG_PINS
PINS_SCHEMA = "mcpeval-nb.catalog-pins/v1"
_DIGESTS = ("def_digest", "desc_digest", "schema_digest", "annotations_digest")


@dataclass(frozen=True)
class ToolState:
    """What a catalog says about one tool: its four digests and its flags (no text)."""

    def_digest: str | None = None
    desc_digest: str | None = None
    schema_digest: str | None = None
    annotations_digest: str | None = None
    flags: tuple[str, ...] = ()

    def digests(self) -> tuple[str | None, ...]:
        """The four digests (what a change is judged on; flags follow the text they come from)."""
        return (self.def_digest, self.desc_digest, self.schema_digest, self.annotations_digest)

    def to_json(self) -> dict[str, Any]:
        """The pin file's object for this tool."""
        return {**{k: getattr(self, k) for k in _DIGESTS}, "flags": list(self.flags)}


@dataclass(frozen=True)
class PinnedCatalog:
    """One server's approved catalog: when it was pinned and each tool's state."""

    pinned_at: str
    tools: Mapping[str, ToolState] = field(default_factory=dict)


@dataclass(frozen=True)
class CatalogPins:
    """Every pinned server (an empty mapping when nothing is pinned)."""

    servers: Mapping[str, PinnedCatalog] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The pin file's document (servers and tools sorted)."""
        return {"schema": PINS_SCHEMA, "servers": {
            s: {"pinned_at": p.pinned_at, "tools": {t: p.tools[t].to_json() for t in sorted(p.tools)}}
            for s, p in sorted(self.servers.items())}}


def pins_path(root: Path) -> Path:
    """``<root>/catalog-pins.json`` (beside the store, never shared)."""
    return layout.catalog_pins_path(root)


def _fail(source: str, where: str) -> UsageError:
    return UsageError(f"{source}: {where} is not a valid catalog pin (see docs/catalog.md)")


def _state(raw: Any, source: str, where: str) -> ToolState:
    if not isinstance(raw, dict) or set(raw) - {*_DIGESTS, "flags"}:
        raise _fail(source, where)
    digests = {k: raw.get(k) for k in _DIGESTS}
    flags = raw.get("flags", [])
    if not all(v is None or valid_template_id(v) for v in digests.values()) or not (
            isinstance(flags, list) and all(f in FLAGS for f in flags)):
        raise _fail(source, where)
    return ToolState(**digests, flags=tuple(f for f in FLAGS if f in flags))


def _pinned(raw: Any, source: str, server: str) -> PinnedCatalog:
    if not isinstance(raw, dict) or not valid_rfc3339(raw.get("pinned_at")) or not isinstance(
            raw.get("tools"), dict):
        raise _fail(source, f"server {server}")
    tools = {}
    for name, state in raw["tools"].items():
        if not valid_tool(name):
            raise _fail(source, f"a tool name of server {server}")
        tools[name] = _state(state, source, f"tool {name} of server {server}")
    return PinnedCatalog(pinned_at=raw["pinned_at"], tools=tools)


def parse_pins(data: bytes | str | Mapping[str, Any], *, source: str = "catalog pins") -> CatalogPins:
    """Parse and check a pins document.

    Raises:
        UsageError: not JSON, another schema, or a field outside its grammar (named, never quoted).
    """
    if isinstance(data, bytes | str):
        try:
            data = json.loads(data)
        except ValueError:
            raise UsageError(f"{source} is not JSON") from None
    if not isinstance(data, Mapping) or data.get("schema") != PINS_SCHEMA or not isinstance(
            data.get("servers"), dict):
        raise UsageError(f"{source} is not a {PINS_SCHEMA} document")
    servers = {}
    for server, raw in data["servers"].items():
        if not valid_server(server):
            raise _fail(source, "a server label")
        servers[server] = _pinned(raw, source, server)
    return CatalogPins(servers=servers)


def load_pins(root: RootLike = None) -> CatalogPins:
    """The root's pins (empty when it has none).

    Raises:
        UsageError: the file cannot be read or is not a valid pins document.
    """
    path = pins_path(Root.of(root).path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return CatalogPins()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    return parse_pins(data, source=str(path))
