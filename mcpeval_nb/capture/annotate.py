"""Annotations: typed remarks about a recorded call, joined to it by ``(session, seq)`` or, in the newer
record form, by the call's ``event_id`` (SPEC 2.5, 5).

An annotation is written only for a call the store holds: the capture root must exist and one of its
call journals must hold a record with that session and seq (or that event id), so a typo never leaves a
dangling annotation behind.  Values are checked at this write boundary (CLI, serve, API alike): ``seq`` is
an unsigned 64-bit integer (never a float), and a value shaped like a stored token must be one.
"""

from __future__ import annotations

import unicodedata

from ..clock import now_ts
from ..errors import UsageError
from ..journal.append import append_record
from ..limits import MAX_NOTE_CHARS
from ..privacy.grammar import opaque_session, valid_session_token
from ..privacy.read_rules import UUID_RE
from ..privacy.records import ANNOTATION_KINDS, AnnotationRecord, is_u64
from ..root import Root, RootLike, entry_exists
from ..root.layout import store_dir
from .targets import CallTarget, recorded

__all__ = ["annotate", "validate_annotation"]

_TOKEN_PREFIX = "session:"


def validate_annotation(kind: str, note: str, seq: int | None, event_id: str | None = None,
                        session: str | None = None) -> None:
    """Check an annotation the way ``mcpeval annotate`` does; messages never quote the note.

    Raises:
        UsageError: unknown kind, an over-long note, control characters, a seq that is not an unsigned
            64-bit integer (a float such as ``1.0`` included), an event id that is not a UUID, neither
            a seq nor an event id, or a session that looks like a stored token but is not one.
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
    if seq is not None and not is_u64(seq):
        raise UsageError("seq must be an unsigned 64-bit integer")
    if event_id is not None and not (isinstance(event_id, str) and UUID_RE.fullmatch(event_id.lower())):
        raise UsageError("event id must be a UUID (8-4-4-4-12 hexadecimal digits)")
    if session is not None:
        _check_session(session)


def _check_session(session: str) -> None:
    if not isinstance(session, str) or not session:
        raise UsageError("session must be a non-empty string")
    if session[:len(_TOKEN_PREFIX)].lower() == _TOKEN_PREFIX and not valid_session_token(session):
        # Hashing it would silently name a session nobody recorded (a token hashed a second time).
        raise UsageError("session starts with session: but is not a stored token (session: and 64 "
                         "hexadecimal digits); pass the token exactly as stored or the raw session value")


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
        root: capture root (default: ``MCPEVAL_HOME`` or ``~/.mcp-eval``); it must exist.
        event_id: the call record's event id (a UUID, stored lowercase), the newer target form.

    Returns:
        The stored (sanitised) annotation.

    Raises:
        UsageError: invalid kind, note, seq, session or event id, neither target, a capture root that
            does not exist, or no recorded call with that target; nothing written.
        JournalError: the store could not be read or written.
    """
    validate_annotation(kind, note, seq, event_id, session)
    base = Root.of(root).path
    if not entry_exists(base):
        raise UsageError(f"capture root {base} does not exist; nothing written (an annotation targets a "
                         "recorded call)")
    target = CallTarget(session=opaque_session(session), raw_session=session, seq=seq,
                        event_id=None if event_id is None else event_id.lower())
    if not recorded(base, target):
        raise UsageError(f"no recorded call in {store_dir(base)} has {target.describe()}; nothing written")
    record = AnnotationRecord(ts=now_ts(), session=session, seq=seq, kind=kind, note=note,
                              event_id=event_id).sanitized()
    append_record(base, record)
    return record
