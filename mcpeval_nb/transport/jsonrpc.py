"""JSON-RPC framing shared by the stdio and HTTP clients: encoding, decoding, display strings.

Every ``TransportError`` the clients raise uses one of the fixed messages below (SPEC 14 display
strings where SPEC names one), so no error ever carries frame contents.  ``decode`` skips what SPEC 14
says to skip (non-JSON lines, anything that is not a ``"jsonrpc": "2.0"`` object) by returning None.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import TransportError
from ..jsonfmt import JSONFormatError, loads

__all__ = [
    "BAD_RESPONSE",
    "CLOSED",
    "FRAME_TOO_LARGE",
    "MISMATCHED_ID",
    "NOTIFICATION_FLOOD",
    "OUTGOING_TOO_LARGE",
    "QUEUE_FULL",
    "SPAWN_FAILED",
    "SUB_REQUEST_FLOOD",
    "TIMED_OUT",
    "UNAUTHORIZED",
    "WRITE_TIMED_OUT",
    "Incoming",
    "closed",
    "decode",
    "encode",
    "failure",
    "loads_array",
    "refused",
    "timeout",
    "unauthorized",
]

#: A decoded message and the size of its frame in bytes (newline included).
Incoming = tuple[dict[str, Any], int]

TIMED_OUT = "MCP response timed out"
WRITE_TIMED_OUT = "MCP request write timed out"
CLOSED = "MCP server closed the connection"
FRAME_TOO_LARGE = "stdio frame exceeds 4 MiB"
OUTGOING_TOO_LARGE = "outgoing stdio frame exceeds limit"
QUEUE_FULL = "incoming frame queue exceeds limit"
NOTIFICATION_FLOOD = "notification buffer exceeds limit"
MISMATCHED_ID = "MCP response id does not match request"
BAD_RESPONSE = "MCP response must contain exactly one of result or error"
SUB_REQUEST_FLOOD = "server issued more sub-requests than the declared bound"
SPAWN_FAILED = "could not start the MCP server command"
#: The reason label of an HTTP endpoint that answered 401 or 403.
UNAUTHORIZED = "transport-unauthorized"


def timeout(message: str = TIMED_OUT) -> TransportError:
    """A ``transport-timeout`` error with a fixed message."""
    return TransportError(message, reason="transport-timeout")


def closed(message: str = CLOSED) -> TransportError:
    """A ``transport-closed`` error with a fixed message."""
    return TransportError(message, reason="transport-closed")


def failure(message: str) -> TransportError:
    """A ``transport-error`` error with a fixed message."""
    return TransportError(message, reason="transport-error")


def unauthorized(status: int, *, configured: bool) -> TransportError:
    """A ``transport-unauthorized`` error for an HTTP 401 or 403 (names the variable, never its value).

    Args:
        status: 401 or 403.
        configured: whether ``MCPEVAL_HTTP_AUTHORIZATION`` was set (then it is to be checked, not set).
    """
    what = "authorization required" if status == 401 else "forbidden"
    advice = "check" if configured else "set"
    return TransportError(f"HTTP endpoint answered {status} ({what}): {advice} MCPEVAL_HTTP_AUTHORIZATION",
                          reason=UNAUTHORIZED)


def refused(message: str) -> TransportError:
    """A ``transport-error`` for a message refused before anything was sent: the session stays open."""
    error = TransportError(message, reason="transport-error")
    error.keeps_session = True  # type: ignore[attr-defined]
    return error


def encode(message: dict[str, Any]) -> bytes:
    """Encode one JSON-RPC message as a compact UTF-8 line ending in ``\\n``.

    Args:
        message: the JSON-RPC object.

    Returns:
        The frame bytes, newline included.

    Raises:
        TransportError: the message is not JSON-serialisable (``transport-error``, no contents quoted).
    """
    try:
        text = json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        return text.encode("utf-8") + b"\n"
    except (TypeError, ValueError, UnicodeEncodeError):
        raise refused("outgoing MCP message is not valid JSON") from None


def decode(frame: bytes | bytearray | memoryview) -> dict[str, Any] | None:
    """Parse one incoming frame; None for frames SPEC 14 says to skip.

    Args:
        frame: the frame bytes without the newline (a trailing ``\\r`` is tolerated).

    Returns:
        The message object, or None for non-JSON text, invalid UTF-8, JSON nested 128 levels deep,
        or anything that is not an object with ``"jsonrpc": "2.0"``.
    """
    try:
        value = loads(bytes(frame))
    except (JSONFormatError, ValueError, RecursionError):
        return None
    if isinstance(value, dict) and value.get("jsonrpc") == "2.0":
        return value
    return None


def loads_array(body: bytes) -> list[Any]:
    """Parse a JSON array body (a batch of messages); an unparsable body yields an empty list."""
    try:
        value = loads(body)
    except (JSONFormatError, ValueError, RecursionError):
        return []
    return value if isinstance(value, list) else []
