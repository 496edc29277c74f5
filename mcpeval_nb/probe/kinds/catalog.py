"""Catalog and protocol kinds: discovery-cost, token-cost, pagination, surface-listing,
protocol-negotiation (SPEC 8.3).  None of them calls a tool."""

from __future__ import annotations

import math
import re
from typing import Any

from ...errors import TransportError
from ...jsonfmt import dumps
from ...privacy.grammar import valid_tool
from ...transport.era import META_VERSION, MODERN_VERSION, UNSUPPORTED_VERSION, supported_versions
from ..cases import CaseResult, Detail, listed
from .base import CaseContext, failed, passed

__all__ = ["discovery_cost", "estimate_tokens", "pagination", "protocol_negotiation", "surface_listing",
           "token_cost", "tool_tokens"]

_VERSION_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
SUPPORTED_VERSION = "2025-06-18"


def _entries(ctx: CaseContext) -> list[dict[str, Any]]:
    return [] if ctx.run.catalog is None else list(ctx.run.catalog.tools)


def _compact_len(value: Any) -> int:
    return len(dumps(value, sort_keys=True).encode("utf-8"))


def estimate_tokens(encoded_bytes: int) -> int:
    """The token estimate of ``token-cost`` (SPEC 8.3): ``ceil(bytes / 4)`` of compact JSON text."""
    return math.ceil(encoded_bytes / 4)


def tool_tokens(entry: dict[str, Any]) -> int:
    """``ceil(entry_bytes / 4)`` of one raw ``tools/list`` entry (compact, key-sorted JSON)."""
    return estimate_tokens(_compact_len(entry))


def discovery_cost(ctx: CaseContext) -> CaseResult:
    """Catalog size and schema bytes against ``max_tools`` / ``max_schema_bytes``."""
    entries, f = _entries(ctx), ctx.fields
    count, size = len(entries), _compact_len(entries)
    meas = {"tool_count": count, "schema_bytes": size}
    if count > f["max_tools"]:
        return failed(ctx.case, "discovery-limit-exceeded", 1, 1,
                      detail=Detail("max_tools", f["max_tools"], count), **meas)
    if size > f["max_schema_bytes"]:
        return failed(ctx.case, "discovery-limit-exceeded", 1, 1,
                      detail=Detail("max_schema_bytes", f["max_schema_bytes"], size), **meas)
    return passed(ctx.case, 1, **meas)


def token_cost(ctx: CaseContext) -> CaseResult:
    """Per-tool and total context tokens against the budgets."""
    f = ctx.fields
    weights = sorted(((tool_tokens(e), str(e["name"])) for e in _entries(ctx)), key=lambda w: (-w[0], w[1]))
    per_tool = [{"tokens": tokens, "tool": listed(name)} for tokens, name in weights]
    total = sum(tokens for tokens, _ in weights)
    meas: dict[str, Any] = {"total_tokens": total, "per_tool": per_tool}
    if total > f["max_total_tokens"]:
        return failed(ctx.case, "token-budget-exceeded", 1, 1,
                      detail=Detail("max_total_tokens", f["max_total_tokens"], total), **meas)
    limit = f.get("max_tool_tokens")
    if limit is not None and weights and weights[0][0] > limit:
        return failed(ctx.case, "token-budget-exceeded", 1, 1,
                      detail=Detail("max_tool_tokens", limit, weights[0][0]), **meas)
    return passed(ctx.case, 1, **meas)


def _valid_entry(entry: Any) -> bool:
    return (isinstance(entry, dict) and valid_tool(entry.get("name"))
            and isinstance(entry.get("inputSchema"), dict))


def _next_cursor(result: dict[str, Any]) -> str | bool | None:
    """The next cursor, None at the end, False when the cursor member is malformed."""
    cursor = result.get("nextCursor")
    if cursor is None or cursor == "":
        return None
    return cursor if isinstance(cursor, str) else False


def pagination(ctx: CaseContext) -> CaseResult:
    """Walk ``tools/list`` with cursors, judging entries, duplicates and stalled cursors."""
    limit = ctx.fields["max_pages"]
    names: set[str] = set()
    cursor: str | None = None
    pages = 0
    while True:
        pages += 1
        if pages > limit:
            return failed(ctx.case, "pagination-stalled-cursor", pages, pages,
                          detail=Detail("max_pages", limit, pages), tool_count=len(names), pages=pages)
        ctx.run.check_cancel()
        response = ctx.session.request("tools/list", None if cursor is None else {"cursor": cursor})
        result = response.result if isinstance(response.result, dict) else None
        entries = result.get("tools") if result is not None else None
        if response.error is not None or not isinstance(entries, list) or not all(map(_valid_entry, entries)):
            return failed(ctx.case, "pagination-invalid-entry", pages, pages, tool_count=len(names),
                          pages=pages)
        for entry in entries:
            if entry["name"] in names:
                return failed(ctx.case, "pagination-duplicate-tool", pages, pages, tool_count=len(names),
                              pages=pages)
            names.add(entry["name"])
        assert result is not None
        nxt = _next_cursor(result)
        if nxt is False:
            return failed(ctx.case, "pagination-invalid-entry", pages, pages, tool_count=len(names),
                          pages=pages)
        if nxt is None:
            return passed(ctx.case, pages, tool_count=len(names), pages=pages)
        cursor = str(nxt)


def surface_listing(ctx: CaseContext) -> CaseResult:
    """Walk the declared ``resources`` and ``prompts`` listings with cursors."""
    limit = ctx.fields["max_pages"]
    caps = ctx.session.server_capabilities
    requests, items = 0, 0
    for surface in ("resources", "prompts"):
        if not isinstance(caps.get(surface), dict):
            continue
        cursor: str | None = None
        pages = 0
        while True:
            pages += 1
            if pages > limit:
                return failed(ctx.case, "surface-stalled-cursor", requests, requests,
                              detail=Detail("max_pages", limit, pages), tool_count=items)
            ctx.run.check_cancel()
            requests += 1
            response = ctx.session.request(f"{surface}/list", None if cursor is None else {"cursor": cursor})
            result = response.result if isinstance(response.result, dict) else None
            listed = result.get(surface) if result is not None else None
            if response.error is not None or not isinstance(listed, list):
                return failed(ctx.case, "surface-invalid-envelope", requests, requests, tool_count=items)
            items += len(listed)
            assert result is not None
            nxt = _next_cursor(result)
            if nxt is False:
                return failed(ctx.case, "surface-invalid-envelope", requests, requests, tool_count=items)
            if nxt is None:
                break
            cursor = str(nxt)
    return passed(ctx.case, requests, tool_count=items)


def _handshake(ctx: CaseContext, version: str) -> str | bool | None:
    """Offer ``version`` on a fresh connection; the answered version, None (refused) or False (malformed)."""
    session = ctx.run.connect(initialize=False)
    try:
        params = {"protocolVersion": version, "capabilities": {},
                  "clientInfo": {"name": "mcpeval", "version": "0"}}
        response = session.request("initialize", params)
    finally:
        session.close()
    if response.error is not None:
        return None
    result = response.result
    answered = result.get("protocolVersion") if isinstance(result, dict) else None
    return answered if isinstance(answered, str) and _VERSION_RE.fullmatch(answered) else False


def _modern_negotiation(ctx: CaseContext, bogus: str) -> CaseResult:
    """The 2026-07-28 form (no handshake): a request at ``bogus`` must be refused with -32022 whose
    ``data.supported`` names date-shaped versions including the one this run speaks."""
    try:
        response = ctx.session.request("tools/list", None, meta={META_VERSION: bogus},
                                       headers={"MCP-Protocol-Version": bogus})
    except TransportError as exc:
        if not getattr(exc, "keeps_session", False):
            raise
        return failed(ctx.case, "negotiation-invalid-version", 1, 1)
    if response.error is None:
        return failed(ctx.case, "negotiation-echoed-unknown", 1, 1)
    supported = supported_versions(response.error.data)
    if response.error.code != UNSUPPORTED_VERSION or not supported:
        return failed(ctx.case, "negotiation-invalid-version", 1, 1)
    if MODERN_VERSION not in supported:
        return failed(ctx.case, "negotiation-inconsistent-support", 1, 1)
    return passed(ctx.case, 1)


def protocol_negotiation(ctx: CaseContext) -> CaseResult:
    """Three fresh handshakes: the supported version, the bogus one, then the version the server claimed.

    A server that refuses the bogus version with a JSON-RPC error is treated as negotiating correctly
    (MCP lets a server reject a version it cannot speak); one that answers must answer a date-shaped
    version other than the bogus one, and must accept that version on a third handshake.  In the
    2026-07-28 era (no handshake) one request at the bogus version must be refused with -32022 naming
    the versions the server serves (``_modern_negotiation``).
    """
    bogus = ctx.fields["bogus_version"]
    if ctx.session.modern:
        return _modern_negotiation(ctx, bogus)
    first = _handshake(ctx, SUPPORTED_VERSION)
    if first is False or first is None:
        return failed(ctx.case, "negotiation-invalid-version", 1, 1)
    claimed = _handshake(ctx, bogus)
    if claimed is None:
        return passed(ctx.case, 2)
    if claimed is False:
        return failed(ctx.case, "negotiation-invalid-version", 2, 2)
    if claimed == bogus:
        return failed(ctx.case, "negotiation-echoed-unknown", 2, 2)
    again = _handshake(ctx, str(claimed))
    if again != claimed:
        return failed(ctx.case, "negotiation-inconsistent-support", 3, 3)
    return passed(ctx.case, 3)
