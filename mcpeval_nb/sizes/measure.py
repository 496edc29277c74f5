"""What one call's result costs, measured from the bounded client's result: numbers and labels only.

Per call: text characters (code points of the ``text`` content items), encoded result bytes (compact
JSON, UTF-8), the ``token-cost`` estimate of those bytes, content items by type (MCP's types; anything
else counts as ``other``), ``structuredContent`` bytes and latency.  An erroring call is a row with its
reason label (``tool-error``, ``rpc-error``, or a transport reason) and a salted template id; the text
never leaves this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..jsonfmt import dumps
from ..privacy.errorinfo import error_info, tool_error_info
from ..privacy.fingerprint import template_id
from ..probe.kinds import estimate_tokens
from ..transport.messages import ToolOutcome

__all__ = ["CONTENT_TYPES", "CallSize", "measure_failure", "measure_outcome"]

#: Content item types counted by name (MCP 2025-06-18); any other type counts as ``other``.
CONTENT_TYPES = ("text", "image", "audio", "resource_link", "resource")


@dataclass(frozen=True)
class CallSize:
    """One row of the "Result sizes (per call)" table.

    Attributes:
        index: 1-based position in the call manifest. tool: the tool called. access: as declared.
        outcome: ``ok`` or ``error``. reason: None, ``tool-error``, ``rpc-error`` or a transport reason.
        template_id: the salted template id of the error text (None when ok or textless).
        error_code: the JSON-RPC code of an ``rpc-error`` (None otherwise).
        text_chars / result_bytes / tokens / structured_bytes: None when there was no result.
        content: content items by type. latency_ms: the call's round trip (None when it never completed).
    """

    index: int
    tool: str
    access: str
    outcome: str
    reason: str | None = None
    template_id: str | None = None
    error_code: int | None = None
    text_chars: int | None = None
    result_bytes: int | None = None
    tokens: int | None = None
    structured_bytes: int | None = None
    content: Mapping[str, int] = field(default_factory=dict)
    latency_ms: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The row as the result-sizes document holds it."""
        return {
            "index": self.index,
            "tool": self.tool,
            "access": self.access,
            "outcome": self.outcome,
            "reason": self.reason,
            "template_id": self.template_id,
            "error_code": self.error_code,
            "text_chars": self.text_chars,
            "result_bytes": self.result_bytes,
            "tokens": self.tokens,
            "structured_bytes": self.structured_bytes,
            "content": dict(sorted(self.content.items())),
            "latency_ms": self.latency_ms,
        }


def _bytes(value: Any) -> int:
    return len(dumps(value, sort_keys=True).encode("utf-8", "surrogatepass"))


def _content(result: dict[str, Any]) -> tuple[int, dict[str, int]]:
    items = result.get("content")
    chars, counts = 0, dict[str, int]()
    for item in items if isinstance(items, list) else ():
        kind = item.get("type") if isinstance(item, dict) else None
        label = kind if isinstance(kind, str) and kind in CONTENT_TYPES else "other"
        counts[label] = counts.get(label, 0) + 1
        if label == "text" and isinstance(item.get("text"), str):
            chars += len(item["text"])
    return chars, counts


def _with_sizes(row: CallSize, result: Any) -> CallSize:
    body = result if isinstance(result, dict) else {}
    chars, counts = _content(body)
    total = _bytes(result)
    structured = _bytes(body["structuredContent"]) if "structuredContent" in body else None
    return replace(
        row,
        text_chars=chars,
        result_bytes=total,
        tokens=estimate_tokens(total),
        structured_bytes=structured,
        content=counts,
    )


def measure_outcome(index: int, tool: str, access: str, outcome: ToolOutcome, salt: bytes) -> CallSize:
    """The row of a call that completed (a success, an ``isError`` result or a JSON-RPC error)."""
    if outcome.kind == "success":
        row = CallSize(index=index, tool=tool, access=access, outcome="ok", latency_ms=outcome.latency_ms)
        return _with_sizes(row, outcome.result)
    if outcome.kind == "tool-error":
        info = tool_error_info(outcome.result, salt)
        row = CallSize(
            index=index,
            tool=tool,
            access=access,
            outcome="error",
            reason="tool-error",
            template_id=info.get("template_id"),
            latency_ms=outcome.latency_ms,
        )
        return _with_sizes(row, outcome.result)
    info = error_info(outcome.payload or {}, salt)
    return CallSize(
        index=index,
        tool=tool,
        access=access,
        outcome="error",
        reason="rpc-error",
        template_id=info.get("template_id"),
        error_code=outcome.code,
        latency_ms=outcome.latency_ms,
    )


def measure_failure(index: int, tool: str, access: str, reason: str, message: str, salt: bytes) -> CallSize:
    """The row of a call whose transport failed (``message`` is the transport's fixed, content-free text)."""
    return CallSize(
        index=index,
        tool=tool,
        access=access,
        outcome="error",
        reason=reason,
        template_id=template_id(salt, message),
    )
