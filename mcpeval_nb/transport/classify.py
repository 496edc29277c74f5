"""Response validation and ``tools/call`` classification (SPEC 8.3, 14).

A response must carry exactly one of ``result`` and ``error``; an error must carry an integer code.
``tools/call`` responses are classified: ``result.isError === true`` is a tool error with code -32000
and payload ``{"code": "tool-error", "message": content[0].text or "tool error"}``; any other result is
a success; a JSON-RPC error keeps its code and its error object as the payload.
"""

from __future__ import annotations

from typing import Any

from . import jsonrpc
from .messages import TOOL_ERROR_CODE, Response, RpcError, ToolOutcome

__all__ = ["classify_tool_response", "parse_response", "tool_error_message"]

BAD_ERROR_CODE = "MCP error response lacks an integer code"


def parse_response(message: dict[str, Any]) -> Response:
    """Validate one JSON-RPC response object.

    Args:
        message: a decoded message whose id matched the outstanding request.

    Returns:
        The response.

    Raises:
        TransportError: ``transport-error`` when it has both or neither of result/error, or an error
            without an integer code.
    """
    has_result, has_error = "result" in message, "error" in message
    if has_result == has_error:
        raise jsonrpc.failure(jsonrpc.BAD_RESPONSE)
    if has_result:
        return Response(result=message["result"])
    error = message["error"]
    code = error.get("code") if isinstance(error, dict) else None
    if type(code) is not int or not isinstance(error, dict):
        raise jsonrpc.failure(BAD_ERROR_CODE)
    text = error.get("message")
    text = text if isinstance(text, str) else ""
    return Response(error=RpcError(code, text, error.get("data"), dict(error)))


def tool_error_message(result: dict[str, Any]) -> str:
    """``content[0].text`` of a tool-error result when it is a string, else ``tool error``."""
    content = result.get("content")
    first = content[0] if isinstance(content, list) and content else None
    text = first.get("text") if isinstance(first, dict) else None
    return text if isinstance(text, str) and text else "tool error"


def classify_tool_response(response: Response, *, latency_ms: int, server_requests: int = 0) -> ToolOutcome:
    """Classify a ``tools/call`` response (SPEC 8.3).

    Args:
        response: the validated response.
        latency_ms: milliseconds from send to response.
        server_requests: server-to-client requests answered during the call.

    Returns:
        The outcome.
    """
    if response.error is not None:
        return ToolOutcome("rpc-error", None, response.error.code, response.error.to_dict(), latency_ms,
                           server_requests)
    result = response.result
    if isinstance(result, dict) and result.get("isError") is True:
        payload = {"code": "tool-error", "message": tool_error_message(result)}
        return ToolOutcome("tool-error", result, TOOL_ERROR_CODE, payload, latency_ms, server_requests)
    return ToolOutcome("success", result, None, None, latency_ms, server_requests)
