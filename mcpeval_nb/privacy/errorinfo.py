"""Error information that is safe to store (SPEC 4.1-4.2).

Only a code (kept when it is an identifier or a number), length buckets of ``layer``/``kind``, the
``retryable`` flag and a salted template id survive; messages, data and stacks are dropped.
"""

from __future__ import annotations

from typing import Any

from ..jsonfmt import JSONFormatError, dumps, loads
from .fingerprint import template_id
from .grammar import valid_identifier, valid_template_id
from .shape import string_bucket

__all__ = ["code_json", "code_text", "code_value", "error_info", "privacy_safe_code", "safe_string_bucket",
           "sanitize_error", "tool_error_info"]

_BUCKETS = frozenset(("str<8", "str<32", "str<128", "str<512", "str<4096", "str>4096"))
TEMPLATE = "{message}"


def safe_string_bucket(value: str) -> str:
    """Keep a length-bucket token, otherwise bucket the string by its length."""
    return value if value in _BUCKETS else string_bucket(value)


def code_text(code: Any) -> str:
    """A stored error code as the tables show it: a string code as itself (``tool-error``), any other
    code as compact JSON text (``-32602``, ``null``, ``{"object":2}``).

    A string that would read as JSON (``"null"``, ``"-1"``) keeps its quotes, so ``code_value`` gives
    back exactly the stored code: the journal and ``index.db`` keep the JSON form (SPEC 2, 12).
    """
    if isinstance(code, str) and not _reads_as_json(code):
        return code
    return dumps(code, sort_keys=True)


def code_value(text: str) -> Any:
    """The stored error code that ``code_text`` showed as ``text``."""
    try:
        return loads(text)
    except JSONFormatError:
        return text


def code_json(text: str) -> str:
    """The stored JSON text (journal, ``index.db``) of the code that ``code_text`` showed as ``text``."""
    return dumps(code_value(text), sort_keys=True)


def _reads_as_json(text: str) -> bool:
    try:
        loads(text)
    except JSONFormatError:
        return False
    return True


def _is_u64(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**64


def privacy_safe_code(code: Any) -> Any:
    """Return the storable form of an error code (SPEC 4.1)."""
    if isinstance(code, str):
        return code if valid_identifier(code) else safe_string_bucket(code)
    if isinstance(code, list):
        return {"array": len(code)}
    if isinstance(code, dict):
        if len(code) == 1:
            ((key, val),) = code.items()
            if key in ("array", "object") and _is_u64(val):
                return {key: val}
        return {"object": len(code)}
    return code


def error_info(payload: Any, salt: bytes) -> dict[str, Any]:
    """Reduce a JSON-RPC error (or a bare error object) to storable ErrorInfo.

    Args:
        payload: the whole message (``payload["error"]`` is used when present) or the error object.
        salt: the capture root's 32-byte salt, for the template id.

    Returns:
        A dict in ErrorInfo key order: ``code``, ``layer``, ``retryable``, ``kind``, ``template``,
        ``template_id``; each present only when the source had it.
    """
    inner = payload.get("error", payload) if isinstance(payload, dict) else payload
    if not isinstance(inner, dict):
        return {}
    info: dict[str, Any] = {}
    if "code" in inner:
        info["code"] = privacy_safe_code(inner["code"])
    if isinstance(inner.get("layer"), str):
        info["layer"] = safe_string_bucket(inner["layer"])
    if isinstance(inner.get("retryable"), bool):
        info["retryable"] = inner["retryable"]
    if isinstance(inner.get("kind"), str):
        info["kind"] = safe_string_bucket(inner["kind"])
    message = inner.get("message")
    if isinstance(message, str):
        info["template"] = TEMPLATE
        info["template_id"] = template_id(salt, message)
    return info


def tool_error_info(result: Any, salt: bytes) -> dict[str, Any]:
    """ErrorInfo for a ``tools/call`` result with ``isError: true`` (SPEC 2.6)."""
    info: dict[str, Any] = {"code": "tool-error"}
    content = result.get("content") if isinstance(result, dict) else None
    first = content[0] if isinstance(content, list) and content else None
    text = first.get("text") if isinstance(first, dict) else None
    if isinstance(text, str):
        info["template"] = TEMPLATE
        info["template_id"] = template_id(salt, text)
    return info


def sanitize_error(info: dict[str, Any]) -> dict[str, Any]:
    """Re-apply the ErrorInfo serialisers to a stored or constructed error object (idempotent).

    Raises:
        TypeError: a field has the wrong JSON type (a record that cannot be deserialised).
    """
    out: dict[str, Any] = {}
    if "code" in info:
        out["code"] = privacy_safe_code(info["code"])
    for key in ("layer", "kind", "template", "template_id"):
        if info.get(key) is not None and not isinstance(info[key], str):
            raise TypeError(f"error.{key} must be a string")
    if info.get("retryable") is not None and not isinstance(info["retryable"], bool):
        raise TypeError("error.retryable must be a boolean")
    if info.get("layer") is not None:
        out["layer"] = safe_string_bucket(info["layer"])
    if info.get("retryable") is not None:
        out["retryable"] = info["retryable"]
    if info.get("kind") is not None:
        out["kind"] = safe_string_bucket(info["kind"])
    if info.get("template") is not None:
        out["template"] = TEMPLATE
    if valid_template_id(info.get("template_id")):
        out["template_id"] = info["template_id"]
    return out
