"""serve's JSON-RPC layer: one request body in, one HTTP status and JSON body out (SPEC 13.1 steps 5-7).

A body that is not JSON is a 400; a message without ``id`` is acknowledged with 202 and ``null``;
``initialize``, ``ping``, ``tools/list`` and ``tools/call`` are answered with 200; any other method is
-32601 and a missing method -32600.  A tool's refusal or failure is -32000 with the tool layer's safe
message.  Nothing from the request is echoed except its ``id`` and a method or tool name that passes its
grammar.
"""

from __future__ import annotations

from typing import Any

from .._version import __version__
from ..jsonfmt import JSONFormatError, dumps, loads
from ..privacy.grammar import valid_method
from .base import Tool, ToolContext, ToolFailure
from .call import call_tool, tool_list

__all__ = ["PROTOCOL_VERSION", "SERVER_NAME", "handle_body"]

PROTOCOL_VERSION = "2025-06-18"
SERVER_NAME = "mcpeval-nb"
INVALID_JSON = b'{"error":"invalid JSON body"}'


def _reply(msg_id: Any, *, result: Any = None, error: tuple[int, str] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id}
    if error is not None:
        message["error"] = {"code": error[0], "message": error[1]}
    else:
        message["result"] = result
    return dumps(message, sort_keys=False).encode("utf-8")


def _initialize() -> dict[str, Any]:
    return {"protocolVersion": PROTOCOL_VERSION, "capabilities": {"tools": {}},
            "serverInfo": {"name": SERVER_NAME, "version": __version__}}


def handle_body(body: bytes, tools: tuple[Tool, ...], ctx: ToolContext) -> tuple[int, bytes]:
    """Answer one JSON-RPC request body.

    Returns:
        ``(status, body)``: 400 with ``{"error":"invalid JSON body"}``, 202 with ``null``, or 200 with the
        JSON-RPC response.
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
    if method == "initialize":
        return 200, _reply(msg_id, result=_initialize())
    if method == "ping":
        return 200, _reply(msg_id, result={})
    if method == "tools/list":
        return 200, _reply(msg_id, result={"tools": tool_list(tools, allow_spawn=ctx.allow_spawn)})
    if method == "tools/call":
        try:
            result = call_tool(tools, ctx, params.get("name"), params.get("arguments"))
        except ToolFailure as exc:
            return 200, _reply(msg_id, error=(-32000, str(exc)))
        return 200, _reply(msg_id, result=result)
    shown = f" {method}" if valid_method(method) else ""
    return 200, _reply(msg_id, error=(-32601, f"unknown method{shown}"))
