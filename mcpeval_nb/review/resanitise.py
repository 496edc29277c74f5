"""Share's re-sanitisation: the store's read rules applied to every exported record (issue 19, item 6).

A hand-edited journal can hold text no writer produces: prose in ``server``, ``tool``, ``method`` or
``args`` values, in a wrongly typed field, or under an extra key.  ``summary`` and the tables apply the
read rules (``privacy.read_rules``) when they load a record, so they never show such text; the share
envelope leaves the machine, so it must not carry it either.  Each record of a known journal kind
(``calls-*``, ``annotations-*``, ``probes/history.jsonl``) passes through the very rule objects the
loader applies, field by field, and what the rules do not cover is made content-free (a result-size
point of ``probes/sizes.jsonl`` passes through ``SizePoint.sanitized``, a catalog record of
``catalogs-*`` through ``CatalogRecord.sanitized``: their readers' rules):

* a field with a read rule gets the rule's value (an optional field whose value fails its grammar is
  dropped, as the loader drops it); a wrongly typed text field gets the rule's fallback;
* a count (``seq``, ``latency_ms``, ...) that is not an unsigned integer becomes 0 (required) or is
  dropped (optional); an ``identity`` that is not two UUIDs is dropped;
* an extra key named by the identifier grammar keeps its name and stores the *shape* of its value
  (``privacy.shape.sanitize_shape``, the rule ``args`` values follow); any other extra key is dropped.

Other files in the store are normalised only, as SPEC 11 describes.  Sanitising is idempotent, so
journals the writers produced are fixed points and their bytes do not change: for call journals
``fixed_calls`` proves that for a whole chunk in a few C-level passes (each distinct value checked once
and remembered across chunks), and only a chunk that fails the proof is rewritten record by record.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from itertools import repeat
from typing import Any

import orjson

from ..clock import is_day
from ..errors import ProfileError
from ..privacy.errorinfo import sanitize_error
from ..privacy.grammar import valid_identifier
from ..privacy.read_rules import (
    ANNOTATION_RULES,
    CALL_RULES,
    TREND_RULES,
    UUID_RE,
    ReadRule,
    sort_keys,
)
from ..privacy.records import MeasurementProfile
from ..privacy.shape import sanitize_shape
from ..root import layout

__all__ = ["content_free", "fixed_calls", "journal_kind", "resanitise_record", "resanitise_values"]

_SORTED = orjson.OPT_SORT_KEYS
_U64 = 2**64
_CACHE_LIMIT = 1 << 16


def journal_kind(relpath: str) -> str:
    """The rule set of a store file by its path relative to the store ("" for other files)."""
    kind = layout.journal_kind(relpath)
    return "" if kind is None else kind.name


def _u64(value: Any) -> bool:
    return type(value) is int and 0 <= value < _U64


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON text (``1 == 1.0`` and ``True == 1`` in Python, not in a journal)."""
    return a is b or orjson.dumps(a, option=_SORTED) == orjson.dumps(b, option=_SORTED)


def content_free(value: Any) -> Any:
    """``value`` without content, of the same JSON type: strings become their length bucket (or stay
    a canonical shape token), arrays and objects keep their type with content-free members (object keys
    outside the identifier grammar dropped), numbers, booleans and null stay.

    A wrongly typed field keeps its wrong type this way, so the loader refuses the exported record
    exactly as it refuses the stored one.
    """
    if isinstance(value, str):
        shaped: str = sanitize_shape(value)
        return shaped
    if isinstance(value, list):
        return [content_free(item) for item in value]
    if isinstance(value, dict):
        return {key: content_free(item) for key, item in value.items() if valid_identifier(key)}
    return value


def _uuid(value: Any) -> bool:
    return type(value) is str and UUID_RE.fullmatch(value.lower()) is not None


def _identity(value: Any) -> Any:
    if (type(value) is dict and set(value) == {"capture_id", "event_id"}
            and _uuid(value["capture_id"]) and _uuid(value["event_id"])):
        return {"capture_id": value["capture_id"].lower(), "event_id": value["event_id"].lower()}
    return content_free(value)  # the loader refuses the record: so it stays refused


def _error(value: dict[str, Any]) -> Any:
    try:
        return sanitize_error(value)
    except TypeError:
        return content_free(value)


def _profile(value: dict[str, Any]) -> Any:
    try:
        return MeasurementProfile.from_dict(value).to_dict()
    except ProfileError:
        return content_free(value)


class _Kind:
    """One journal kind's field table: read rules and the JSON types the loader reads, counts, flags."""

    def __init__(self, chain: tuple[ReadRule, ...], *, objects: dict[str, Callable[[Any], Any]],
                 anything: tuple[str, ...] = (), counts: tuple[str, ...] = (), flags: tuple[str, ...] = (),
                 identity: bool = False) -> None:
        self.rules = {rule.field: rule for rule in chain}
        self.objects = objects
        self.anything = frozenset(anything)
        self.counts = frozenset(counts)
        self.flags = frozenset(flags)
        self.known = frozenset((*self.rules, *counts, *flags,
                                *(("identity", "capture_id", "event_id") if identity else ())))

    def field(self, key: str, value: Any) -> tuple[bool, Any]:
        """``(keep, stored value)`` for one present key, as the loader would read it.

        A value of the type the loader reads goes through the field's read rule (an optional field
        whose value fails its grammar is dropped, as the loader drops it); a value of another type makes
        the loader refuse the record, and is made content-free keeping its type, so it stays refused.
        """
        rule = self.rules.get(key)
        if rule is not None:
            if value is None and rule.optional:
                return True, None
            if key in self.objects:
                return True, self.objects[key](value) if type(value) is dict else content_free(value)
            if key not in self.anything and type(value) is not str:
                return True, content_free(value)
            stored = rule.apply(value)
            return stored is not None or not rule.optional, stored
        if key in self.counts:
            return True, value if _u64(value) or value is None else content_free(value)
        if key in self.flags:
            return True, value if type(value) is bool else content_free(value)
        if key == "identity":
            return True, _identity(value)
        if key in ("capture_id", "event_id"):
            return True, value.lower() if _uuid(value) else content_free(value)
        if valid_identifier(key):
            return True, sort_keys(sanitize_shape(value))  # an extra key: stored as args values are
        return False, None


_TABLE: dict[str, _Kind] = {
    "calls": _Kind(CALL_RULES, objects={"error": _error}, anything=("args",),
                   counts=("seq", "shim_self_us", "latency_ms"), identity=True),
    "annotations": _Kind(ANNOTATION_RULES, objects={}, counts=("seq",)),
    "trends": _Kind(TREND_RULES, objects={"measurement_profile": _profile},
                    counts=("cases_total", "cases_passed", "score"), flags=("passed",)),
}


def _sizes_point(value: dict[str, Any]) -> dict[str, Any]:
    """A result-size point as ``SizePoint.sanitized`` stores it (its own rules: labels outside their
    grammar become ``invalid``/``unlisted``, unknown keys and non-numbers are dropped); a record that is
    not a sizes point stays one the reader refuses, content-free."""
    from ..sizes.history import SizePoint

    try:
        point = SizePoint.from_dict(value).sanitized()
    except ValueError:
        stripped: dict[str, Any] = content_free(value)
        return stripped
    stored: dict[str, Any] = orjson.loads(point.encode())
    return stored


def _catalog_record(value: dict[str, Any]) -> dict[str, Any]:
    """A catalog record as ``CatalogRecord.sanitized`` stores it (docs/catalog.md); a record that is not
    one stays one the reader refuses, content-free."""
    from ..privacy.catalog import CatalogRecord

    try:
        record = CatalogRecord.from_dict(value).sanitized()
    except ValueError:
        stripped: dict[str, Any] = content_free(value)
        return stripped
    stored: dict[str, Any] = orjson.loads(record.encode())
    return stored


#: Kinds whose records pass through their record type's own ``sanitized`` (not a rule table here).
_RECORD_KINDS = {"sizes": _sizes_point, "catalogs": _catalog_record}


def resanitise_record(value: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """The record as the read rules store it, or None when it is already stored that way.

    Args:
        value: a parsed record (not modified).
        kind: ``journal_kind`` of its file ("" leaves every record as it is).
    """
    if kind in _RECORD_KINDS:
        stored = _RECORD_KINDS[kind](value)
        return None if _same(stored, value) else stored
    table = _TABLE.get(kind)
    if table is None:
        return None
    out: dict[str, Any] = {}
    changed = False
    for key, item in value.items():
        keep, stored = table.field(key, item)
        if keep:
            out[key] = stored
        changed = changed or not keep or not _same(stored, item)
    return out if changed else None


def resanitise_values(values: list[dict[str, Any]], kind: str) -> list[int]:
    """Re-sanitise parsed records in place; the indices of the records that changed.

    Args:
        values: one chunk's parsed records.
        kind: ``journal_kind`` of their file.
    """
    if (kind not in _TABLE and kind not in _RECORD_KINDS) or (kind == "calls" and fixed_calls(values)):
        return []
    changed = []
    for index, value in enumerate(values):
        new = resanitise_record(value, kind)
        if new is not None:
            values[index] = new
            changed.append(index)
    return changed


# ----------------------------------------------------------------------------------------------
# The proof for call journals: every record already a fixed point, checked per distinct value.

_CALLS = _TABLE["calls"]
#: Text fields whose rule is checked once per distinct value.
_TEXT = ("session", "server", "method", "tool", "outcome", "kind")
_OPTIONAL_TEXT = frozenset(("tool",))
#: What a writer stamps: ``%Y-%m-%dT%H:%M:%S`` with optional fraction and ``Z``, one per line.
_TS_LINES = re.compile(
    r"(?:[0-9]{4}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\.[0-9]+)?Z\n)*")
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_IDENTITIES = re.compile(
    rf'\[(?:(?:null|\{{"capture_id":"{_UUID}","event_id":"{_UUID}"\}}),)*'
    rf'(?:null|\{{"capture_id":"{_UUID}","event_id":"{_UUID}"\}})?\]'.encode())
_UUIDS = re.compile(rf'\[(?:(?:null|"{_UUID}"),)*(?:null|"{_UUID}")?\]'.encode())
_DAY = operator.itemgetter(slice(0, 10))
_fixed: dict[str, set[Any]] = {name: set() for name in (*_TEXT, "args", "error", "day")}


def _remember(name: str, value: Any) -> None:
    seen = _fixed[name]
    if len(seen) >= _CACHE_LIMIT:
        seen.clear()
    seen.add(value)


def _text_fixed(values: list[dict[str, Any]], name: str) -> bool:
    try:
        distinct = set(map(dict.get, values, repeat(name)))
    except TypeError:  # an unhashable (object or array) value
        return False
    rule = _CALLS.rules[name]
    for item in distinct - _fixed[name]:
        if item is None:
            if name not in _OPTIONAL_TEXT:
                return False  # absent or null: the per-record path decides
            continue
        if type(item) is not str or rule.apply(item) != item:
            return False
        _remember(name, item)
    return True


def _ts_fixed(values: list[dict[str, Any]]) -> bool:
    stamps: list[Any] = list(map(dict.get, values, repeat("ts")))
    if set(map(type, stamps)) != {str}:
        return False
    joined = "\n".join(stamps) + "\n"
    if joined.count("\n") != len(stamps) or _TS_LINES.fullmatch(joined) is None:
        return False
    days: set[str] = set(map(_DAY, stamps))  # every stamp is a string (checked above)
    for day in days - _fixed["day"]:
        if not is_day(day):
            return False
        _remember("day", day)
    return True


def _counts_fixed(values: list[dict[str, Any]], name: str, *, optional: bool) -> bool:
    counts = list(map(dict.get, values, repeat(name)))
    allowed = {int, type(None)} if optional else {int}
    if not set(map(type, counts)) <= allowed:
        return False
    present: list[int] = [c for c in counts if c is not None]
    return not present or (min(present) >= 0 and max(present) < _U64)


def _shape_fixed(values: list[dict[str, Any]], name: str, clean: Callable[[Any], Any]) -> bool:
    texts = set(map(orjson.dumps, map(dict.get, values, repeat(name)), repeat(None), repeat(_SORTED)))
    for text in texts - _fixed[name]:
        if text != b"null":
            try:
                if orjson.dumps(clean(orjson.loads(text)), option=_SORTED) != text:
                    return False
            except (TypeError, ValueError):
                return False
        _remember(name, text)
    return True


def _identity_fixed(values: list[dict[str, Any]], keys: set[str]) -> bool:
    if "identity" in keys and _IDENTITIES.fullmatch(orjson.dumps(
            list(map(dict.get, values, repeat("identity"))), option=_SORTED)) is None:
        return False
    return all(_UUIDS.fullmatch(orjson.dumps(list(map(dict.get, values, repeat(name))))) is not None
               for name in ("capture_id", "event_id") if name in keys)


def fixed_calls(values: list[dict[str, Any]]) -> bool:
    """True when every call record is already stored as the read rules store it (no byte changes).

    False means only "not proven": the per-record path then decides, record by record.
    """
    keysets = set(map(frozenset, values))
    keys: set[str] = set().union(*keysets)
    if not keys <= _CALLS.known:
        return False
    return (_ts_fixed(values) and all(_text_fixed(values, name) for name in _TEXT)
            and _counts_fixed(values, "seq", optional=False)
            and _counts_fixed(values, "shim_self_us", optional=False)
            and _counts_fixed(values, "latency_ms", optional=True)
            and _shape_fixed(values, "args", lambda v: sort_keys(sanitize_shape(v)))
            and _shape_fixed(values, "error", _error)
            and _identity_fixed(values, keys))
