"""One phase snapshot: what a phase's surface costs and what changed, never what it says.

Per listed tool: its name (tool grammar; other names are only counted, as ``unlisted_tools``), its
boolean annotation hints, input-schema bytes and property count, the ``token-cost`` estimate of its
listing entry, and salted digests of its description and of its schema (canonical JSON), so a change
between phases shows without the text.  Resource and prompt counts when the server declares them.  Never a
description, schema text or argument value.
"""

from __future__ import annotations

from typing import Any

from ...jsonfmt import dumps
from ...limits import MAX_TOOL_PAGES
from ...privacy.fingerprint import content_digest
from ...privacy.grammar import valid_tool
from ...probe.kinds import tool_tokens
from ...transport.messages import Catalog
from ...transport.session import McpSession

__all__ = ["HINTS", "SNAPSHOT_SCHEMA", "snapshot_of", "surface_count", "tool_facts"]

SNAPSHOT_SCHEMA = "mcpeval-nb.phase-snapshot/v1"
#: The annotation hints a snapshot keeps (booleans only).
HINTS = ("destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint")


def _canonical(value: Any) -> str:
    return dumps(value, sort_keys=True)


def tool_facts(entry: dict[str, Any], salt: bytes) -> dict[str, Any]:
    """The content-free facts of one listed tool (its name must already pass the tool grammar)."""
    notes = entry.get("annotations")
    notes = notes if isinstance(notes, dict) else {}
    schema = entry.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    description = entry.get("description")
    return {
        "name": entry["name"],
        "hints": {h: notes[h] for h in HINTS if isinstance(notes.get(h), bool)},
        "schema_bytes": len(_canonical(schema).encode("utf-8", "surrogatepass")) if schema is not None else 0,
        "property_count": len(props) if isinstance(props, dict) else 0,
        "tokens": tool_tokens(entry),
        "description_digest": content_digest(salt, "description", description)
        if isinstance(description, str)
        else None,
        "schema_digest": content_digest(salt, "input-schema", _canonical(schema))
        if schema is not None
        else None,
    }


def surface_count(session: McpSession, surface: str) -> int | None:
    """Items of a declared ``resources``/``prompts`` listing (cursor walk, at most 20 pages), else None.

    None when the server does not declare the surface or the listing is refused or malformed.
    """
    if not isinstance(session.server_capabilities.get(surface), dict):
        return None
    count, cursor = 0, None
    for _ in range(MAX_TOOL_PAGES):
        response = session.request(f"{surface}/list", None if cursor is None else {"cursor": cursor})
        result = response.result if isinstance(response.result, dict) else None
        items = result.get(surface) if result is not None else None
        if response.error is not None or not isinstance(items, list):
            return None
        count += len(items)
        assert result is not None
        nxt = result.get("nextCursor")
        if not isinstance(nxt, str) or not nxt:
            break
        cursor = nxt
    return count


def snapshot_of(
    name: str, index: int, catalog: Catalog, salt: bytes, *, resources: int | None, prompts: int | None
) -> dict[str, Any]:
    """The snapshot document of one phase (tools sorted by name)."""
    tools = sorted(
        (tool_facts(e, salt) for e in catalog.tools if valid_tool(e["name"])), key=lambda t: str(t["name"])
    )
    unlisted = sum(not valid_tool(e["name"]) for e in catalog.tools)
    return {
        "schema": SNAPSHOT_SCHEMA,
        "phase": name,
        "index": index,
        "tools": tools,
        "unlisted_tools": unlisted,
        "tool_count": len(catalog.tools),
        "total_tokens": sum(tool_tokens(e) for e in catalog.tools),
        "resources": resources,
        "prompts": prompts,
    }
