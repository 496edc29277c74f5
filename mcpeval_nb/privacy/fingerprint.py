"""Error-message skeletons and salted template ids (SPEC 4.3).

The skeleton keeps the *shape* of a message (words, punctuation) and replaces uuids, quoted runs, URLs,
paths and numbers, so that ``session 0be9... gone`` and ``session 4c1f... gone`` share one template id.
The skeleton itself is never stored: only ``template_id`` reaches disk.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["content_digest", "skeleton", "template_id"]

# Rust's \s is Unicode White_Space; Python's str \s also matches U+001C..U+001F, which Rust does not.
_WS = r"[^\S\x1c-\x1f]"
_UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_QUOTED_RE = re.compile(r"\"[^\"]*\"|(^|" + _WS + r"|[(\[{])'[^']*'")
_URL_RE = re.compile(r"[a-z][a-z0-9+.\-]*://(?:(?!" + _WS + r").)+", re.DOTALL)
_PATH_RE = re.compile(r"(^|" + _WS + r"|[\"'(\[])/(?:(?!" + _WS + r").)+", re.DOTALL)
_DIGITS_RE = re.compile(r"\d+")
_SPACES_RE = re.compile(_WS + "+")


def _quoted(match: re.Match[str]) -> str:
    return (match.group(1) or "") + "q"


def skeleton(message: str) -> str:
    """Reduce an error message to its content-free skeleton (SPEC 4.3, steps 1-7)."""
    text = message.lower()
    text = _UUID_RE.sub("u", text)
    text = _QUOTED_RE.sub(_quoted, text)
    text = _URL_RE.sub("l", text)
    text = _PATH_RE.sub(lambda m: m.group(1) + "p", text)
    text = _DIGITS_RE.sub("0", text)
    text = _SPACES_RE.sub(" ", text)
    return _strip_ws(text)


def _strip_ws(text: str) -> str:
    start, end = 0, len(text)
    while start < end and text[start].isspace() and text[start] not in "\x1c\x1d\x1e\x1f":
        start += 1
    while end > start and text[end - 1].isspace() and text[end - 1] not in "\x1c\x1d\x1e\x1f":
        end -= 1
    return text[start:end]


def template_id(salt: bytes, message: str) -> str:
    """Return the 16-hex-digit salted template id of an error message.

    Args:
        salt: the capture root's 32-byte salt.
        message: the raw error message (used in memory only).

    Returns:
        Lowercase hex of the first 8 bytes of SHA-256(salt || 0x00 || skeleton).
    """
    digest = hashlib.sha256(salt + b"\x00" + skeleton(message).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:16]


def content_digest(salt: bytes, kind: str, text: str) -> str:
    """A 16-hex-digit salted digest of exact text (a tool description, a schema's canonical JSON).

    Unlike ``template_id`` nothing is skeletonised: any change of the text changes the digest, so two
    snapshots can show that a description changed without either holding it.  ``kind`` separates the
    domains (a description never collides with a schema of the same text).

    Returns:
        Lowercase hex of the first 8 bytes of SHA-256(salt || 0x01 || kind || 0x00 || text).
    """
    data = salt + b"\x01" + kind.encode("utf-8") + b"\x00" + text.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:16]
