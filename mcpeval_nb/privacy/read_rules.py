"""The read rules of the privacy boundary (SPEC 2.2, 5, 7.1): one rule per field, written once.

A record is sanitised by passing it through its chain of rules in SPEC order, the way structlog passes
an event through its processors: each rule names a field and maps the field's value to the value that
may be stored, falling back to a fixed value when the value fails the field's grammar.  The chains are
data: ``CallRecord.sanitized()`` (and ``AnnotationRecord``/``TrendPoint``) apply them record by record
on every append and every read, and the Arrow loader (``tables.sanitise``) applies the very same rule
objects once per distinct value of a column.  The fallback values are written here and nowhere else.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..clock import valid_rfc3339
from ..limits import MAX_NOTE_CHARS
from .errorinfo import sanitize_error
from .ext import sanitize_ext
from .grammar import opaque_session, valid_method, valid_server, valid_tool
from .shape import sanitize_shape

__all__ = [
    "ANNOTATION_KINDS",
    "ANNOTATION_RULES",
    "CALL_RULES",
    "KINDS",
    "OUTCOMES",
    "TREND_RULES",
    "UUID_RE",
    "ReadRule",
    "apply_rules",
    "keep",
    "rule_for",
    "sort_keys",
    "transform",
]

#: The values a stored ``outcome``, call ``kind`` and annotation ``kind`` may take (SPEC 2.1, 5).
OUTCOMES = ("ok", "error", "unparsed", "unknown")
KINDS = ("real", "synthetic", "unparsed")
ANNOTATION_KINDS = ("blocked-optimal-path", "undocumented-behavior", "false-success",
                    "instruction-divergence", "workaround")
UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_HEX64_RE = re.compile(r"[0-9a-f]{64}")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class ReadRule:
    """One field's read rule: ``rule(value)`` is what may be stored for ``value``.

    Attributes:
        field: the record attribute the rule reads and replaces.
        apply: maps a present value to its stored value.
        fallback: what a value failing the field's grammar becomes (None: the field is dropped, or the
            rule maps every value, as hashing the session does).
        optional: an absent value (None) stays absent without reaching ``apply``.
    """

    field: str
    apply: Callable[[Any], Any]
    fallback: Any = None
    optional: bool = False

    def __call__(self, value: Any) -> Any:
        """The stored value for ``value``."""
        if value is None and self.optional:
            return None
        return self.apply(value)


def keep(field: str, valid: Callable[[Any], bool], fallback: Any, *, optional: bool = False) -> ReadRule:
    """A rule that keeps a value passing ``valid`` and stores ``fallback`` instead of any other.

    Args:
        field: the record attribute.
        valid: the field's grammar.
        fallback: the value stored instead of an invalid one (None drops an optional field).
        optional: an absent value stays absent.

    Returns:
        The rule.
    """
    def apply(value: Any) -> Any:
        return value if valid(value) else fallback
    return ReadRule(field, apply, fallback, optional)


def transform(field: str, clean: Callable[[Any], Any], *, optional: bool = False) -> ReadRule:
    """A rule that stores ``clean(value)`` (hashing, re-shaping, truncating).

    Args:
        field: the record attribute.
        clean: value -> stored value.
        optional: an absent value stays absent.

    Returns:
        The rule.
    """
    return ReadRule(field, clean, None, optional)


def sort_keys(value: Any) -> Any:
    """``value`` with every object's keys in sorted order, at every depth (how ``args`` is stored)."""
    if isinstance(value, dict):
        return {k: sort_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [sort_keys(v) for v in value]
    return value


def _note(note: str) -> str:
    return _CONTROL_RE.sub("", note)[:MAX_NOTE_CHARS]


def _event_id(event: str) -> str | None:
    lower = event.lower()
    return lower if lower and UUID_RE.fullmatch(lower) else None


def _profile(profile: Any) -> Any:
    return profile.validate()  # raises ProfileError; a valid profile is stored as it is


_TS = keep("ts", valid_rfc3339, "unknown")
_SESSION = transform("session", opaque_session)
_SERVER = keep("server", valid_server, "invalid")

#: ``CallRecord`` (SPEC 2.2): ts, session, server, method, tool, args, outcome, kind, error; then the
#: 2026-07-28 extension object (``privacy.ext``), which SPEC's reader ignores.
CALL_RULES: tuple[ReadRule, ...] = (
    _TS,
    _SESSION,
    _SERVER,
    keep("method", valid_method, "unparsed/metadata"),
    keep("tool", valid_tool, None, optional=True),
    transform("args", lambda args: sort_keys(sanitize_shape(args)), optional=True),
    keep("outcome", OUTCOMES.__contains__, "unknown"),
    keep("kind", KINDS.__contains__, "unparsed"),
    transform("error", sanitize_error, optional=True),
    transform("ext", sanitize_ext, optional=True),
)
#: ``AnnotationRecord`` (SPEC 5): ts, hashed session, kind, note (controls stripped, capped), event id.
ANNOTATION_RULES: tuple[ReadRule, ...] = (
    _TS,
    _SESSION,
    keep("kind", ANNOTATION_KINDS.__contains__, "invalid"),
    transform("note", _note),
    transform("event_id", _event_id, optional=True),
)
#: ``TrendPoint`` (SPEC 7.1-7.2): the profile is validated first, then ts, server, hash and standard.
TREND_RULES: tuple[ReadRule, ...] = (
    transform("measurement_profile", _profile, optional=True),
    _TS,
    _SERVER,
    keep("manifest_sha256", lambda sha: _HEX64_RE.fullmatch(sha) is not None, None, optional=True),
    keep("standard", valid_method, None, optional=True),
)


def apply_rules(rules: tuple[ReadRule, ...], record: Any) -> Any:
    """``record`` (a frozen dataclass) with every field of ``rules`` replaced by its rule, in order.

    Raises:
        ProfileError: a trend point's measurement profile is invalid.
    """
    changes = {}
    for rule in rules:  # the rule's __call__, inlined: this runs for every record read or written
        value = getattr(record, rule.field)
        changes[rule.field] = None if value is None and rule.optional else rule.apply(value)
    return dataclasses.replace(record, **changes)


def rule_for(rules: tuple[ReadRule, ...], field: str) -> ReadRule:
    """The rule of ``field`` in a chain (the loader maps a column's distinct values through it).

    Raises:
        KeyError: the chain has no rule for ``field``.
    """
    for rule in rules:
        if rule.field == field:
            return rule
    raise KeyError(field)
