"""serve's JSON-RPC layer, both protocol eras: one request body in, one HTTP status and JSON body out.

Legacy (2025-06-18, SPEC 13.1 steps 5-7): a body that is not JSON is a 400; a message without ``id`` is
acknowledged with 202 and ``null``; ``initialize``, ``ping``, ``tools/list`` and ``tools/call`` are
answered with 200; any other method is -32601 and a missing method -32600.  A tool's refusal or failure
is -32000 with the tool layer's safe message.

Modern (2026-07-28, stateless): a request whose ``params._meta`` names a protocol version, or whose
``MCP-Protocol-Version`` header names one that is not a handshake version, is served on its own, with no
session: the header checks first (``MCP-Protocol-Version``, ``Mcp-Method`` and, for ``tools/call``,
``Mcp-Name`` present, single and equal to the body; else HTTP 400 with -32020), then the ``_meta``
checks (version and client capabilities present: else 400 with -32602; a version other than 2026-07-28:
400 with -32022 listing the supported versions).  ``server/discover`` answers the supported versions,
capabilities and server info; every result carries ``resultType: "complete"`` and the server info in
``_meta``; ``server/discover`` and ``tools/list`` carry ``ttlMs`` and ``cacheScope``.  ``ping`` and
``initialize`` are not modern methods (404 with -32601).  The tool set, the spawn gate and the tool call
path are the legacy era's.

Nothing from the request is echoed except its ``id`` and a method or tool name that passes its grammar;
header values are compared, never repeated.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

from .._version import __version__
from ..jsonfmt import JSONFormatError, dumps, loads
from ..privacy.grammar import valid_method
from .base import Tool, ToolContext, ToolFailure
from .call import call_tool, tool_list

__all__ = ["CACHE_TTL_MS", "MODERN_VERSION", "PROTOCOL_VERSION", "SERVER_NAME", "SUPPORTED_VERSIONS",
           "handle_body"]

PROTOCOL_VERSION = "2025-06-18"
MODERN_VERSION = "2026-07-28"
#: What ``server/discover`` and a -32022 refusal name: the modern revision, then the handshake one.
SUPPORTED_VERSIONS = (MODERN_VERSION, PROTOCOL_VERSION)
_HANDSHAKE_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
SERVER_NAME = "mcpeval-nb"
#: The tool list only changes when serve restarts: clients may keep it five minutes.
CACHE_TTL_MS = 300_000
INVALID_JSON = b'{"error":"invalid JSON body"}'
_META_VERSION = "io.modelcontextprotocol/protocolVersion"
_META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_META_SERVER = "io.modelcontextprotocol/serverInfo"
_NOT_FOUND = 404

Headers = Sequence[tuple[str, str]]


def _reply(msg_id: Any, *, result: Any = None, error: tuple[int, str] | None = None,
           data: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id}
    if error is not None:
        message["error"] = {"code": error[0], "message": error[1]}
        if data is not None:
            message["error"]["data"] = data
    else:
        message["result"] = result
    return dumps(message, sort_keys=False).encode("utf-8")


def _server_info() -> dict[str, str]:
    return {"name": SERVER_NAME, "version": __version__}


def _initialize() -> dict[str, Any]:
    return {"protocolVersion": PROTOCOL_VERSION, "capabilities": {"tools": {}}, "serverInfo": _server_info()}


def _unknown(method: str) -> tuple[int, str]:
    shown = f" {method}" if valid_method(method) else ""
    return -32601, f"unknown method{shown}"


def handle_body(body: bytes, tools: tuple[Tool, ...], ctx: ToolContext, *,
                headers: Headers = ()) -> tuple[int, bytes]:
    """Answer one JSON-RPC request body.

    Args:
        body: the request body.
        tools: the tool table.
        ctx: the tools' shared context.
        headers: the request's ``(lowercase name, value)`` header pairs (the modern era's checks).

    Returns:
        ``(status, body)``: 400 with ``{"error":"invalid JSON body"}``, 202 with ``null``, 200 with the
        JSON-RPC response, or (modern era) 400/404 with a JSON-RPC error.
    """
    try:
        message = loads(body)
    except (JSONFormatError, UnicodeDecodeError):
        return 400, INVALID_JSON
    if not isinstance(message, dict) or message.get("id") is None:
        return 202, b"null"
    msg_id, method = message["id"], message.get("method")
    if not isinstance(method, str):
        return 200, _reply(msg_id, error=(-32600, "invalid request"))
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    if method != "initialize" and _is_modern(params, headers):
        return _modern(msg_id, method, params, headers, tools, ctx)
    return 200, _legacy(msg_id, method, params, tools, ctx)


def _legacy(msg_id: Any, method: str, params: dict[str, Any], tools: tuple[Tool, ...],
            ctx: ToolContext) -> bytes:
    if method == "initialize":
        return _reply(msg_id, result=_initialize())
    if method == "ping":
        return _reply(msg_id, result={})
    if method == "tools/list":
        return _reply(msg_id, result={"tools": tool_list(tools, allow_spawn=ctx.allow_spawn)})
    if method == "tools/call":
        try:
            result = call_tool(tools, ctx, params.get("name"), params.get("arguments"))
        except ToolFailure as exc:
            return _reply(msg_id, error=(-32000, str(exc)))
        return _reply(msg_id, result=result)
    return _reply(msg_id, error=_unknown(method))


# --- the modern era ----------------------------------------------------------------------------------------


def _values(headers: Headers, name: str) -> list[str]:
    return [v for k, v in headers if k == name]


def _is_modern(params: dict[str, Any], headers: Headers) -> bool:
    meta = params.get("_meta")
    if isinstance(meta, dict) and _META_VERSION in meta:
        return True
    return any(v not in _HANDSHAKE_VERSIONS for v in _values(headers, "mcp-protocol-version"))


def _decoded(value: str) -> str | None:
    if not (value.startswith("=?base64?") and value.endswith("?=") and len(value) >= 11):
        return value
    try:
        raw = base64.b64decode(value[9:-2], validate=True)
        return raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def _header_agrees(headers: Headers, name: str, expected: Any) -> bool:
    found = _values(headers, name)
    return len(found) == 1 and isinstance(expected, str) and _decoded(found[0]) == expected


def _header_error(method: str, params: dict[str, Any], headers: Headers, version: Any) -> str | None:
    """Which standard header is missing, repeated or disagrees with the body (None: all agree)."""
    if not _header_agrees(headers, "mcp-protocol-version", version):
        return "MCP-Protocol-Version"
    if not _header_agrees(headers, "mcp-method", method):
        return "Mcp-Method"
    if method == "tools/call" and not _header_agrees(headers, "mcp-name", params.get("name")):
        return "Mcp-Name"
    return None


def _modern(msg_id: Any, method: str, params: dict[str, Any], headers: Headers, tools: tuple[Tool, ...],
            ctx: ToolContext) -> tuple[int, bytes]:
    meta = params.get("_meta")
    meta = meta if isinstance(meta, dict) else {}
    version = meta.get(_META_VERSION)
    wrong = _header_error(method, params, headers, version)
    if wrong is not None:
        return 400, _reply(msg_id, error=(-32020, f"header mismatch: {wrong} is missing or disagrees "
                                                  "with the request body"))
    if not isinstance(version, str) or not isinstance(meta.get(_META_CAPABILITIES), dict):
        return 400, _reply(msg_id, error=(-32602, "request _meta lacks the protocol version or the client "
                                                  "capabilities"))
    if version != MODERN_VERSION:
        return 400, _reply(msg_id, error=(-32022, "unsupported protocol version"),
                           data={"supported": list(SUPPORTED_VERSIONS)})
    return _answer(msg_id, method, params, tools, ctx)


def _complete(result: dict[str, Any], *, cacheable: bool = False) -> dict[str, Any]:
    out = {**result, "resultType": "complete", "_meta": {_META_SERVER: _server_info()}}
    if cacheable:
        out.update(ttlMs=CACHE_TTL_MS, cacheScope="public")
    return out


def _answer(msg_id: Any, method: str, params: dict[str, Any], tools: tuple[Tool, ...],
            ctx: ToolContext) -> tuple[int, bytes]:
    if method == "server/discover":
        return 200, _reply(msg_id, result=_complete({"supportedVersions": list(SUPPORTED_VERSIONS),
                                                     "capabilities": {"tools": {}}}, cacheable=True))
    if method == "tools/list":
        listed = {"tools": tool_list(tools, allow_spawn=ctx.allow_spawn)}
        return 200, _reply(msg_id, result=_complete(listed, cacheable=True))
    if method == "tools/call":
        try:
            result = call_tool(tools, ctx, params.get("name"), params.get("arguments"))
        except ToolFailure as exc:
            return 200, _reply(msg_id, error=(-32000, str(exc)))
        return 200, _reply(msg_id, result=_complete(result))
    return _NOT_FOUND, _reply(msg_id, error=_unknown(method))
