"""The ``ext`` object of a call record: what the 2026-07-28 revision adds, content-free (docs/formats.md).

A call record carries ``ext`` only when the traffic gave it something to hold: a request's per-request
protocol version, a W3C trace context, a multi round-trip or task-augmented operation, a non-``complete``
result type or a content-free flag.  A legacy session without trace context never has one, so its journal
is byte for byte what it was (and what the Rust ``mcpeval`` writes); the Rust reader ignores the key.

Every member has a grammar, applied on every write and every read (``sanitize_ext``, the ``ext`` read
rule): a value outside it is dropped (``protocol`` and ``result_type`` fall back to ``invalid`` and
``other``), unknown members are dropped, and an object left empty is no ``ext`` at all.
"""

from __future__ import annotations

import re
from typing import Any

from .grammar import valid_tool

__all__ = [
    "ABANDONED",
    "EXT_KEYS",
    "FLAGS",
    "RESULT_TYPES",
    "TASK_CANCELLED",
    "TASK_STATUSES",
    "TRANSPORTS",
    "sanitize_ext",
    "valid_protocol",
]

#: ``flags`` members: a ``Mcp-Method``/``Mcp-Name`` header that disagreed with the body; a retry whose
#: ``requestState`` differs from the one the server issued, carries none although one was issued, or
#: carries one although none was issued.
FLAGS = ("header-mismatch", "state-changed", "state-dropped", "state-invented")
#: ``result_type`` values (``other`` for an extension's unknown type); absent means ``complete``.
RESULT_TYPES = ("complete", "input_required", "task", "other")
#: ``task`` values: a task's last status (terminal unless the operation was abandoned).
TASK_STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
#: ``transport`` values (OpenTelemetry's ``network.transport``): stdio is ``pipe``, HTTP ``tcp``.
TRANSPORTS = ("pipe", "tcp")
#: ``error.code`` of an operation the client never finished, and of a cancelled task.
ABANDONED = "capture-operation-abandoned"
TASK_CANCELLED = "capture-task-cancelled"

_PROTOCOL_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TRACE_RE = re.compile(r"[0-9a-f]{32}")
_SPAN_RE = re.compile(r"[0-9a-f]{16}")
_ADDRESS_RE = re.compile(r"[A-Za-z0-9.:\-]{1,253}")
_REQUEST_ID_RE = re.compile(r"-?[A-Za-z0-9_.:\-]{1,64}")


def valid_protocol(value: object) -> bool:
    """True for a protocol revision: ``YYYY-MM-DD``."""
    return isinstance(value, str) and _PROTOCOL_RE.fullmatch(value) is not None


def _u64(value: Any) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**64
    return value if ok else None


def _hex_id(pattern: re.Pattern[str], value: Any) -> str | None:
    ok = isinstance(value, str) and pattern.fullmatch(value) is not None and value.strip("0") != ""
    return value if ok else None


def _flags(value: Any) -> list[str] | None:
    if not isinstance(value, list):
        return None
    kept = sorted({v for v in value if isinstance(v, str) and v in FLAGS})
    return kept or None


def _one_of(values: tuple[str, ...], fallback: str | None) -> Any:
    def clean(value: Any) -> str | None:
        return value if isinstance(value, str) and value in values else fallback
    return clean


_RULES: dict[str, Any] = {
    "address": lambda v: v if isinstance(v, str) and _ADDRESS_RE.fullmatch(v) else None,
    "flags": _flags,
    "parent_span_id": lambda v: _hex_id(_SPAN_RE, v),
    "polls": _u64,
    "port": lambda v: v if _u64(v) is not None and 0 < v < 65536 else None,
    "prompt": lambda v: v if valid_tool(v) else None,
    "protocol": lambda v: v if valid_protocol(v) else "invalid",
    "request_id": lambda v: v if isinstance(v, str) and _REQUEST_ID_RE.fullmatch(v) else None,
    "result_type": _one_of(RESULT_TYPES, "other"),
    "rounds": _u64,
    "task": _one_of(TASK_STATUSES, None),
    "trace_id": lambda v: _hex_id(_TRACE_RE, v),
    "transport": _one_of(TRANSPORTS, None),
    "wait_ms": _u64,
}
#: The members ``ext`` may hold, in the (sorted) order they are written.
EXT_KEYS = tuple(sorted(_RULES))


def sanitize_ext(value: Any) -> dict[str, Any] | None:
    """The storable form of an ``ext`` value: known members within their grammars, keys sorted.

    Args:
        value: the value read or about to be written.

    Returns:
        The sanitised object, or None when nothing of it may be stored (not an object, or empty).
    """
    if not isinstance(value, dict):
        return None
    out = {}
    for key in EXT_KEYS:
        if key in value and (clean := _RULES[key](value[key])) is not None:
            out[key] = clean
    return out or None
