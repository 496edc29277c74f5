"""The text patterns of the redaction check (SPEC 10 ``text_patterns``), owned once.

``review.detectors`` applies them to journal lines; ``transport.stderr_tail`` applies them to the last
lines a crashed server wrote to stderr before they are shown.  A line that matches is withheld, never
quoted.
"""

from __future__ import annotations

import re

__all__ = ["text_detectors"]

_EMAIL_RE = re.compile(r"\w@\w")
_KEYWORDS = ((b"/users/", "home-path"), (b"/home/", "home-path"), (b"token=", "token-param"),
             (b"password", "password"))


def text_detectors(text: str) -> list[str]:
    """The text-pattern detectors that fire on ``text`` (SPEC 10 ``text_patterns``).

    Args:
        text: one line (or one re-serialised annotation).

    Returns:
        Detector ids in SPEC 10's order, without duplicates; empty when nothing matched.
    """
    found: list[str] = []
    if "@" in text and _EMAIL_RE.search(text):
        found.append("email-like")
    low = text.encode("utf-8", "surrogatepass").lower()  # bytes.lower() is ASCII-only, like Rust's
    for needle, name in _KEYWORDS:
        if name not in found and needle in low:
            found.append(name)
    return found
