"""Grammars for labels, methods, tools and identifiers, and opaque session tokens (SPEC 2.3, 4.4).

All classes are explicit ASCII: Rust's ``is_ascii_alphanumeric`` is ASCII only, so ``str.isalnum`` would
accept letters the Rust tool refuses.
"""

from __future__ import annotations

import re

__all__ = [
    "SERVER_LABEL_MESSAGE",
    "opaque_session",
    "valid_identifier",
    "valid_method",
    "valid_server",
    "valid_session_token",
    "valid_template_id",
    "valid_tool",
]

_TOOL_RE = re.compile(r"[A-Za-z0-9_.:\-]{1,128}")
_METHOD_RE = re.compile(r"[A-Za-z0-9_.:\-]+(?:/[A-Za-z0-9_.:\-]+)*")
_IDENT_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.:\-]{0,63}")
_TEMPLATE_ID_RE = re.compile(r"[0-9a-f]{16}")
_SESSION_RE = re.compile(r"session:[0-9A-Fa-f]{64}")

#: The message the shim, shim-http and probe print for a server label outside the grammar.
SERVER_LABEL_MESSAGE = (
    "server must be a 1-128 character label using only ASCII letters, digits, '.', '_', '-', or ':'"
)


def valid_tool(value: object) -> bool:
    """True for a tool name: 1-128 bytes of ``[A-Za-z0-9_.:-]``."""
    return isinstance(value, str) and _TOOL_RE.fullmatch(value) is not None


def valid_server(value: object) -> bool:
    """True for a server label: the same one-segment grammar as tool names."""
    return valid_tool(value)


def valid_method(value: object) -> bool:
    """True for a JSON-RPC method: 1-128 bytes, ``/``-separated non-empty segments."""
    return (isinstance(value, str) and 0 < len(value) <= 128
            and _METHOD_RE.fullmatch(value) is not None)


def valid_identifier(value: object) -> bool:
    """True for an identifier: a leading ASCII letter then up to 63 of ``[A-Za-z0-9_.:-]``."""
    return isinstance(value, str) and _IDENT_RE.fullmatch(value) is not None


def valid_template_id(value: object) -> bool:
    """True for a template id: exactly 16 lowercase hex digits."""
    return isinstance(value, str) and _TEMPLATE_ID_RE.fullmatch(value) is not None


def valid_session_token(value: object) -> bool:
    """True for an already-opaque session token ``session:<64 hex>`` (either case)."""
    return isinstance(value, str) and _SESSION_RE.fullmatch(value) is not None


def opaque_session(value: str) -> str:
    """Return the opaque session token for a raw session value (SPEC 2.3).

    A value that is already a token is lowercased (so stored tokens round-trip); anything else is
    replaced by ``session:`` + SHA-256 of its UTF-8 bytes.
    """
    if valid_session_token(value):
        return value.lower()
    from hashlib import sha256  # here, not at import: the stdio shim checks labels before its server starts

    return "session:" + sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
