"""What an erase removes: a session or a server (optionally before a day), and the annotations that
go with it.  Catalog records (``catalogs-<day>.jsonl``) carry a session and a server too and are
selected exactly as call records are.

A call record is selected when its session token (read-side sanitised, SPEC 2.2) is the selected
token, or its server label is the selected label; with ``before``, only in journals of days before it
(``calls-unknown.jsonl`` has no day and is kept).  An annotation carries a session but no server: with
``--session`` it is selected by its own session token (and its own day); with ``--server`` it is
selected when it targets a selected call, by ``event_id`` or else by the one call with its ``(session,
seq)`` (the index's linking rule, SPEC 12.1).  An annotation whose target is no call, or more than one,
cannot be matched: it is kept and counted.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..clock import is_day, parse_day
from ..errors import JournalError, UsageError
from ..journal.listing import journals
from ..journal.read import iter_lines
from ..privacy import opaque_session, valid_server
from ..privacy.catalog import CatalogRecord
from ..privacy.records import AnnotationRecord, CallRecord
from ..root.layout import ANNOTATIONS, CALLS, CATALOGS, journal_kind, store_dir
from .rewrite import Filter

__all__ = ["AnnotationPlan", "Selection", "annotation_filter", "call_filter", "catalog_filter",
           "is_annotations", "journal_day", "plan_annotations", "record_kind", "store_journals"]



@dataclass(frozen=True)
class Selection:
    """Exactly one of ``session`` (an opaque token) or ``server`` (a label), and an optional ``before``
    day (``YYYY-MM-DD``, exclusive)."""

    session: str | None = None
    server: str | None = None
    before: str | None = None

    @classmethod
    def of(cls, *, session: str | None = None, server: str | None = None,
           before: str | dt.date | None = None) -> Selection:
        """Check and build: the raw session value is hashed with the shim's rule (SPEC 2.3).

        Raises:
            UsageError: neither or both of session and server, a bad label, or a bad day.
        """
        if (session is None) == (server is None):
            raise UsageError("erase needs exactly one of --session or --server")
        if server is not None and not valid_server(server):
            raise UsageError("--server must be a 1-128 character label using only ASCII letters, digits, "
                             "'.', '_', '-', or ':'")
        if session is not None and not session:
            raise UsageError("--session must not be empty")
        return cls(session=None if session is None else opaque_session(session), server=server,
                   before=_day(before))

    def to_json(self) -> dict[str, Any]:
        """The selection as the intent file holds it (a token or a label, never a raw value)."""
        return {"session": self.session, "server": self.server, "before": self.before}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Selection:
        """The selection read back from an intent file."""
        return cls(session=data.get("session"), server=data.get("server"), before=data.get("before"))

    def day_ok(self, day: str) -> bool:
        """Whether records of ``day`` are inside the selection's days."""
        return self.before is None or (is_day(day) and day < self.before)

    def selects_call(self, record: CallRecord | CatalogRecord, day: str) -> bool:
        """Whether a (sanitised) call or catalog record of a journal of ``day`` is selected."""
        if not self.day_ok(day):
            return False
        return record.session == self.session if self.session is not None else record.server == self.server

    @property
    def needle(self) -> bytes:
        """Bytes every canonical line of a selected record holds (the token's hex, or the label)."""
        if self.session is not None:
            return self.session.split(":", 1)[1].encode()
        return str(self.server).encode()


def _day(value: str | dt.date | None) -> str | None:
    day = parse_day(value, what="--before")
    return None if day is None else day.isoformat()


def record_kind(rel: str) -> str:
    """The records a daily journal holds, as erase and retention count them: ``calls``, ``annotations``
    or ``catalogs``."""
    kind = journal_kind(rel)
    return kind.name if kind in (ANNOTATIONS, CATALOGS) else "calls"


def journal_day(rel: str) -> str:
    """The day in a journal's file name (``calls-<day>.jsonl``), ``unknown`` included."""
    kind = journal_kind(rel)
    return (kind.day(rel) if kind is not None else None) or "unknown"


def is_annotations(rel: str) -> bool:
    """Whether the store-relative ``rel`` is an annotations journal."""
    return ANNOTATIONS.matches(rel)


def store_journals(root: Path, what: str) -> list[str]:
    """The store's call, annotation and catalog journals (store-relative), annotations first, from the one
    listing in its strict form: a symlink or special file anywhere in the store refuses the whole ``what``.

    Raises:
        JournalError: the store or an entry is a symlink or cannot be read.
    """
    return [j.rel for j in journals(root, (ANNOTATIONS.name, CALLS.name, CATALOGS.name), strict=what)]


def parse_record(line: bytes, parse: Callable[[Any], Any]) -> Any | None:
    data = line[:-1] if line.endswith(b"\r") else line
    if not data.strip():
        return None
    try:
        return parse(json.loads(data)).sanitized()
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None


#: A session value that is not a stored token (older or foreign journals store raw values): readers hash
#: it (SPEC 2.2), so such a line may belong to the selected session whatever its bytes, and is decided.
RAW_SESSION = re.compile(rb'"session"\s*:\s*"(?!session:[0-9A-Fa-f]{64}")')


def _session_filter(selection: Selection, keep: Callable[[bytes], bool]) -> Filter:
    """A session selection's filter: lines holding the token, an escape, or a raw session value."""
    token = _candidate(selection.needle)
    return Filter(candidate=lambda chunk: token(chunk) or RAW_SESSION.search(chunk) is not None, keep=keep,
                  needle=selection.needle, also=RAW_SESSION)


def _candidate(needle: bytes) -> Callable[[bytes], bool]:
    # A line that does not hold the needle can only select through an escape (\u...) or a differently
    # cased token, so such chunks are read line by line too.
    def candidate(chunk: bytes) -> bool:
        return needle in chunk or b"\\" in chunk or needle.upper() in chunk.upper()
    return candidate


@dataclass
class Tally:
    """Lines that could not be read as records (kept as they are)."""

    unreadable: int = 0


def _keeper(parse: Callable[[Any], Any], tally: Tally,
            drop: Callable[[Any], bool]) -> Callable[[bytes], bool]:
    """``keep(line)``: lines that are not records are kept (and counted), records unless ``drop``."""
    def keep(line: bytes) -> bool:
        record = parse_record(line, parse)
        if record is None:
            if line.strip():
                tally.unreadable += 1
            return True
        return not drop(record)
    return keep


def call_filter(selection: Selection, day: str, tally: Tally) -> Filter:
    """The filter of one calls journal of ``day``."""
    keep = _keeper(CallRecord.from_dict, tally, lambda record: selection.selects_call(record, day))
    if selection.server == "invalid":  # an invalid label is any label outside the grammar: read every line
        return Filter(candidate=_always, keep=keep)
    if selection.session is not None:
        return _session_filter(selection, keep)
    return Filter(candidate=_candidate(selection.needle), keep=keep, needle=selection.needle)


def catalog_filter(selection: Selection, day: str, tally: Tally) -> Filter:
    """The filter of one catalogs journal of ``day`` (records selected as call records are)."""
    keep = _keeper(CatalogRecord.from_dict, tally, lambda record: selection.selects_call(record, day))
    if selection.server == "invalid":
        return Filter(candidate=_always, keep=keep)
    if selection.session is not None:
        return _session_filter(selection, keep)
    return Filter(candidate=_candidate(selection.needle), keep=keep, needle=selection.needle)


def _always(chunk: bytes) -> bool:
    return True


Key = tuple[str, int]


@dataclass
class AnnotationPlan:
    """Annotation targets (``--server`` only): which ``(session, seq)`` keys and event ids name
    exactly one call, and whether that call is selected."""

    by_event: dict[str, bool] = field(default_factory=dict)
    by_key: dict[Key, list[bool]] = field(default_factory=dict)
    unmatched: int = 0

    def selected(self, note: AnnotationRecord) -> bool | None:
        """True/False for a matched annotation, None when its target is no call or several."""
        if note.event_id is not None and note.event_id in self.by_event:
            return self.by_event[note.event_id]
        hits = self.by_key.get((note.session, note.seq)) if note.seq is not None else None
        return hits[0] if hits is not None and len(hits) == 1 else None


def _records(root: Path, rel: str, parse: Callable[[Any], Any]) -> Iterator[Any]:
    for raw in iter_lines(store_dir(root) / rel):
        record = parse_record(raw.data, parse)
        if record is not None:
            yield record


def plan_annotations(root: Path, selection: Selection, journals: list[str]) -> AnnotationPlan:
    """Resolve every annotation's target once, before anything is rewritten (``--server`` only)."""
    plan = AnnotationPlan()
    if selection.server is None:
        return plan
    notes = [n for rel in journals if is_annotations(rel)
             for n in _records(root, rel, AnnotationRecord.from_dict)]
    if not notes:
        return plan
    events = {n.event_id for n in notes if n.event_id is not None}
    keys = {(n.session, n.seq) for n in notes if n.seq is not None}
    event_hits: Counter[str] = Counter()
    for rel in journals:
        if not CALLS.matches(rel):
            continue
        day = journal_day(rel)
        for call in _records(root, rel, CallRecord.from_dict):
            chosen = selection.selects_call(call, day)
            event = call.identity.event_id if call.identity is not None else None
            if event in events:
                assert event is not None
                event_hits[event] += 1
                plan.by_event[event] = chosen
            if (call.session, call.seq) in keys:
                plan.by_key.setdefault((call.session, call.seq), []).append(chosen)
    for event, hits in event_hits.items():
        if hits > 1:
            del plan.by_event[event]
    plan.unmatched = sum(1 for n in notes if plan.selected(n) is None)
    return plan


def annotation_filter(selection: Selection, plan: AnnotationPlan, tally: Tally) -> Filter:
    """The filter of one annotations journal."""
    def drop(note: AnnotationRecord) -> bool:
        if selection.session is not None:
            return note.session == selection.session and selection.day_ok(note.day)
        return plan.selected(note) is True
    keep = _keeper(AnnotationRecord.from_dict, tally, drop)
    if selection.session is not None:
        return _session_filter(selection, keep)
    return Filter(candidate=_always, keep=keep)


def check_store(root: Path) -> None:
    """Raises JournalError when there is no store to act on."""
    if not store_dir(root).is_dir():
        raise JournalError(f"nothing to erase: store does not exist ({store_dir(root)})")
