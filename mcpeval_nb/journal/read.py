"""The journal reader (SPEC 6.1-6.2).

A shared ``flock`` is held only while the file's size is taken: writers append whole lines under an
exclusive lock, so the bytes before that size form a consistent snapshot that later appends never
change.  Physical lines are bounded at 4 MiB including the newline (never buffered beyond), an
unterminated final line (an active writer's tail) is not consumed, whitespace-only lines are skipped,
and any other complete line must be a valid record or the read fails naming the file and line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidRecord, JournalError, ProfileError, RecordTooLarge
from ..jsonfmt import JSONFormatError, loads
from ..limits import LOCK_TIMEOUT_S, MAX_RECORD_BYTES
from ..privacy.records import AnnotationRecord, CallRecord, TrendPoint
from .locks import flocked

__all__ = ["JournalEntry", "RawLine", "iter_lines", "parser_for", "read_records", "snapshot_size"]

_READ_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW
_CHUNK = 1 << 20


@dataclass(frozen=True)
class RawLine:
    """A complete physical line: 1-based number, byte offset of its start, bytes without ``\\n``."""

    line: int
    offset: int
    data: bytes


@dataclass(frozen=True)
class JournalEntry:
    """A parsed record with where it came from."""

    line: int
    offset: int
    record: Any


def open_journal(path: Path) -> int:
    """Open a journal read-only without following a final symlink."""
    try:
        return os.open(path, _READ_FLAGS)
    except OSError as exc:
        raise JournalError(f"cannot open journal {path}: {exc.strerror}") from None


def snapshot_size(path: Path | str, *, timeout: float = LOCK_TIMEOUT_S) -> int:
    """Size of the journal taken under a shared lock: a boundary no writer is inside of."""
    path = Path(path)
    fd = open_journal(path)
    try:
        with flocked(fd, path, exclusive=False, timeout=timeout):
            return os.fstat(fd).st_size
    finally:
        os.close(fd)


def iter_lines(path: Path | str, *, start: int = 0, end: int | None = None, first_line: int = 1,
               limit: int = MAX_RECORD_BYTES, timeout: float = LOCK_TIMEOUT_S,
               include_tail: bool = False) -> Iterator[RawLine]:
    """Yield the complete physical lines of ``path`` between byte offsets ``start`` and ``end``.

    Args:
        path: the journal.
        start: byte offset of a line start to resume from (an earlier ``consumed`` value).
        end: snapshot size; taken under a shared lock when None.
        first_line: the line number of the line at ``start``.
        limit: bound on a line including its newline.
        include_tail: also yield an unterminated final line (the redaction check scans it).

    Raises:
        RecordTooLarge: a line exceeds ``limit`` (named by file and line, never by content).
    """
    path = Path(path)
    if end is None:
        end = snapshot_size(path, timeout=timeout)
    fd = open_journal(path)
    try:
        yield from _scan(fd, path, start, end, first_line, limit, include_tail)
    finally:
        os.close(fd)


def _scan(fd: int, path: Path, pos: int, end: int, line_no: int, limit: int,
          include_tail: bool) -> Iterator[RawLine]:
    pending = b""
    pending_at = pos
    while pos < end:
        chunk = os.pread(fd, min(_CHUNK, end - pos), pos)
        if not chunk:
            break
        pos += len(chunk)
        buf = pending + chunk if pending else chunk
        cut = 0
        while True:
            nl = buf.find(b"\n", cut)
            if nl < 0:
                break
            if nl + 1 - cut > limit:
                raise RecordTooLarge(path, line_no)
            yield RawLine(line_no, pending_at + cut, buf[cut:nl])
            line_no += 1
            cut = nl + 1
        pending_at += cut
        pending = buf[cut:]
        # A line of `limit` bytes with no newline yet can only end over the bound; at the snapshot's end it
        # is an unterminated tail and is judged only when longer than the bound.
        if len(pending) > limit or (len(pending) == limit and pos < end):
            raise RecordTooLarge(path, line_no)
    if include_tail and pending:
        yield RawLine(line_no, pending_at, pending)


def parser_for(path: Path | str) -> Callable[[Any], Any]:
    """The record type of a journal file, by its name."""
    name = Path(path).name
    if name.startswith("annotations-"):
        return AnnotationRecord.from_dict
    if name == "history.jsonl":
        return TrendPoint.from_dict
    return CallRecord.from_dict


def parse_line(raw: RawLine, path: Path, parse: Callable[[Any], Any], sanitize: bool) -> Any | None:
    """Parse one complete line; None for a whitespace-only line.

    Raises:
        InvalidRecord: the line is not a valid record of the expected type.
    """
    data = raw.data[:-1] if raw.data.endswith(b"\r") else raw.data
    if not data.strip():
        return None
    try:
        record = parse(loads(data))
        return record.sanitized() if sanitize else record
    except ProfileError as exc:
        raise InvalidRecord(path, raw.line, str(exc)) from None
    except (JSONFormatError, ValueError, TypeError):
        raise InvalidRecord(path, raw.line) from None


def read_records(path: Path | str, *, start: int = 0, first_line: int = 1, sanitize: bool = True,
                 timeout: float = LOCK_TIMEOUT_S) -> Iterator[JournalEntry]:
    """Yield every record of a journal with its line number and byte offset.

    Records are re-sanitised (SPEC 2.2) unless ``sanitize=False``.

    Raises:
        RecordTooLarge: a physical line over 4 MiB.
        InvalidRecord: a complete line that is not a valid record (file and line named).
        LockTimeout: the shared lock was not acquired in time.
    """
    path = Path(path)
    parse = parser_for(path)
    for raw in iter_lines(path, start=start, first_line=first_line, timeout=timeout):
        record = parse_line(raw, path, parse, sanitize)
        if record is not None:
            yield JournalEntry(raw.line, raw.offset, record)
