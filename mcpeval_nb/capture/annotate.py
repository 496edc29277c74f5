"""Annotations: typed remarks about a recorded call, joined to it by ``(session, seq)`` or, in the newer
record form, by the call's ``event_id`` (SPEC 2.5, 5)."""

from __future__ import annotations

import re
import unicodedata

from ..clock import now_ts
from ..errors import UsageError
from ..journal.append import append_record
from ..limits import MAX_NOTE_CHARS
from ..privacy.records import ANNOTATION_KINDS, AnnotationRecord
from ..root import Root, RootLike

__all__ = ["annotate", "validate_annotation"]

_UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def validate_annotation(kind: str, note: str, seq: int | None, event_id: str | None = None) -> None:
    """Check an annotation the way ``mcpeval annotate`` does; messages never quote the note.

    Raises:
        UsageError: unknown kind, an over-long note, control characters, a negative seq, an event id
            that is not a UUID, or neither a seq nor an event id.
    """
    if kind not in ANNOTATION_KINDS:
        raise UsageError(f'unknown annotation kind "{_safe(kind)}"; valid kinds are: '
                         + ", ".join(ANNOTATION_KINDS))
    count = len(note)
    if count > MAX_NOTE_CHARS:
        raise UsageError(f"note exceeds {MAX_NOTE_CHARS} characters (got {count})")
    if any(unicodedata.category(c) == "Cc" for c in note):
        raise UsageError("note must not contain control characters or newlines")
    if seq is None and event_id is None:
        raise UsageError("an annotation needs --seq or --event-id")
    if seq is not None and (seq < 0 or seq >= 2**64):
        raise UsageError("seq must be an unsigned 64-bit integer")
    if event_id is not None and not _UUID_RE.fullmatch(event_id.lower()):
        raise UsageError("event id must be a UUID (8-4-4-4-12 hexadecimal digits)")


def _safe(kind: str) -> str:
    # The kind is an operator-typed label, not payload, but keep the message bounded and printable.
    printable = "".join(c for c in kind if c.isprintable())[:64]
    return printable


def annotate(session: str, seq: int | None, kind: str, note: str, *,
             root: RootLike = None, event_id: str | None = None) -> AnnotationRecord:
    """Validate and append an annotation to ``annotations-<day>.jsonl``.

    Args:
        session: the raw session value or a stored ``session:<hex>`` token (hashed either way).
        seq: the call's sequence number in that session (None when ``event_id`` targets the call).
        kind: one of ``ANNOTATION_KINDS``.
        note: free text, at most 240 characters, no control characters.
        root: capture root (default: ``MCPEVAL_HOME`` or ``~/.mcp-eval``).
        event_id: the call record's event id (a UUID, stored lowercase), the newer target form.

    Returns:
        The stored (sanitised) annotation.

    Raises:
        UsageError: invalid kind, note, seq or event id, or neither target; nothing written.
        JournalError: the store could not be written.
    """
    validate_annotation(kind, note, seq, event_id)
    record = AnnotationRecord(ts=now_ts(), session=session, seq=seq, kind=kind, note=note,
                              event_id=event_id).sanitized()
    append_record(Root.of(root), record)
    return record
