"""Hints for the battery's second attempt at valid arguments (an mcpeval-nb extension of SPEC 8.4).

SPEC 8.4 fills a free string with ``"mcpeval"``.  A server that refuses that value (an ``isError``
result or ``-32602``) may be right: ``mcpeval`` is not a time-zone name.  Before the battery charges the
server, it tries up to ``MAX_ALTERNATIVES`` more candidates, each string taken from what the tool itself
says, in this order:

1. values quoted in the property's ``description`` after "e.g.", "for example", "such as" or "like"
   (``'America/New_York'``), then any other quoted value there;
2. a format the description or the tool's own error names (``HH:MM``, ``HH:MM:SS``, ``YYYY-MM-DD``,
   ISO 8601, a URL, an e-mail address);
3. the property's name (the first rule that matches: a time zone, a date, a URL, a language code ...);
4. the shortest string its ``pattern`` matches (regular-expression syntax walked with ``re._parser``).

Every candidate must still validate against the whole schema.  The error text and the description are
read in this process only: nothing of them is printed, stored or returned except the argument values
sent back to the same server.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["MAX_ALTERNATIVES", "pattern_example", "string_hints"]

MAX_ALTERNATIVES = 3
_MAX_HINT = 128
_QUOTED = re.compile(r"""['"`]([^'"`\n]{1,128})['"`]""")
_LEAD = re.compile(r"(?:e\.g\.|eg\.|for example|for instance|such as|like|example:)\s*,?\s*(.*)", re.I | re.S)
#: A format named in words -> a value of that format.
_FORMAT_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"HH:MM:SS", re.I), "12:00:00"),
    (re.compile(r"HH:MM", re.I), "12:00"),
    (re.compile(r"YYYY-MM-DD[T ]HH", re.I), "2026-01-01T12:00:00Z"),
    (re.compile(r"YYYY-MM-DD", re.I), "2026-01-01"),
    (re.compile(r"ISO[ -]?8601|RFC[ -]?3339", re.I), "2026-01-01T12:00:00Z"),
    (re.compile(r"\bURL\b|\bURI\b", re.I), "https://example.com"),
    (re.compile(r"e-?mail", re.I), "user@example.com"),
)
#: A property name -> a value such a property usually takes.
_NAME_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"time_?zone|^tz$|_tz$", re.I), "UTC"),
    (re.compile(r"date_?time|timestamp", re.I), "2026-01-01T12:00:00Z"),
    (re.compile(r"date", re.I), "2026-01-01"),
    (re.compile(r"time", re.I), "12:00"),
    (re.compile(r"url|uri|link|href", re.I), "https://example.com"),
    (re.compile(r"e-?mail", re.I), "user@example.com"),
    (re.compile(r"lang(uage)?|locale", re.I), "en"),
    (re.compile(r"country", re.I), "US"),
    (re.compile(r"currency", re.I), "USD"),
    (re.compile(r"path|file", re.I), "README.md"),
)


def _quoted(text: str) -> list[str]:
    lead = _LEAD.search(text)
    first = _QUOTED.findall(lead.group(1)) if lead else []
    return [*first, *(q for q in _QUOTED.findall(text) if q not in first)]


def _formats(text: str) -> list[str]:
    return [value for rule, value in _FORMAT_WORDS if rule.search(text)]


def _unique(values: list[str]) -> list[str]:
    seen: list[str] = []
    for value in values:
        if value not in seen and 0 < len(value) <= _MAX_HINT:
            seen.append(value)
    return seen


def string_hints(name: str, schema: dict[str, Any], error_text: str = "") -> list[str]:
    """Candidate values for one free string property, best first (see the module docstring).

    Args:
        name: the property's name. schema: its schema. error_text: what the tool answered to the
            rule's placeholder (read here only).

    Returns:
        Distinct values of at most 128 characters that match the property's ``pattern`` if it has one.
    """
    description = schema.get("description") if isinstance(schema.get("description"), str) else ""
    assert isinstance(description, str)
    values = [*_quoted(description), *_formats(description), *_formats(error_text),
              *[value for rule, value in _NAME_WORDS if rule.search(name)][:1]]
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        matches = _matcher(pattern)
        values = [v for v in values if matches(v)]
        example = pattern_example(pattern)
        if example is not None:
            values.append(example)
    return _unique(values)


def _matcher(pattern: str) -> Callable[[str], bool]:
    try:
        compiled = re.compile(pattern)
    except (re.error, RecursionError):
        return lambda _: False
    return lambda value: compiled.search(value) is not None


def pattern_example(pattern: str) -> str | None:
    """The shortest-ish string a (Python-syntax) regular expression matches, or None.

    Each repeat is taken its minimum number of times, a class by its first member, an alternation by
    its first branch; the result is checked against the pattern.
    """
    from re import _parser  # type: ignore[attr-defined]

    try:
        text = _build(_parser.parse(pattern), 0)
        return text if re.search(pattern, text) is not None and len(text) <= _MAX_HINT else None
    except (re.error, RecursionError, ValueError, TypeError, _TooDeep):
        return None


class _TooDeep(Exception):
    pass


def _build(parsed: Any, depth: int) -> str:
    if depth > 16:
        raise _TooDeep()
    return "".join(_piece(op, av, depth) for op, av in parsed)


def _piece(op: Any, av: Any, depth: int) -> str:
    from re import _constants as c  # type: ignore[attr-defined]

    if op is c.LITERAL:
        return chr(av)
    if op is c.NOT_LITERAL:
        return "b" if av == ord("a") else "a"
    if op is c.ANY:
        return "a"
    if op is c.IN:
        return _member(av)
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
        low, _high, sub = av
        piece: str = _build(sub, depth + 1) * max(low, 0)
        return piece
    if op is c.SUBPATTERN:
        return _build(av[-1], depth + 1)
    if op is c.BRANCH:
        return _build(av[1][0], depth + 1)
    if op is c.CATEGORY:
        return _category(av)
    if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
        return ""
    raise ValueError("unsupported")


def _member(items: Any) -> str:
    from re import _constants as c  # type: ignore[attr-defined]

    for op, av in items:
        if op is c.NEGATE:
            return "a" if all(not (o is c.LITERAL and v == ord("a")) for o, v in items) else "b"
        if op is c.LITERAL:
            return chr(av)
        if op is c.RANGE:
            return chr(av[0])
        if op is c.CATEGORY:
            return _category(av)
    raise ValueError("empty class")


def _category(av: Any) -> str:
    from re import _constants as c  # type: ignore[attr-defined]

    text: str = {c.CATEGORY_DIGIT: "0", c.CATEGORY_WORD: "a", c.CATEGORY_SPACE: " ",
            c.CATEGORY_NOT_DIGIT: "a", c.CATEGORY_NOT_WORD: "-", c.CATEGORY_NOT_SPACE: "a"}[av]
    return text
