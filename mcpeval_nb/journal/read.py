"""The journal reader (SPEC 6.1-6.2): records and physical lines of a journal snapshot.

Lines come from the one snapshot reader (``journal.snapshot``): the size is taken under a shared
``flock``, physical lines are bounded at 4 MiB including the newline (never buffered beyond) and an
unterminated final line (an active writer's tail) is not consumed.  Here whitespace-only lines are
skipped, and any other complete line must be a valid record or the read fails naming the file and line.
Records are re-sanitised on the way out (SPEC 2.2) by their ``sanitized()`` read rules.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidRecord, ProfileError
from ..jsonfmt import JSONFormatError, loads
from ..limits import LINE_READ_BYTES, LOCK_TIMEOUT_S, MAX_RECORD_BYTES
from ..privacy.catalog import CatalogRecord
from ..privacy.records import AnnotationRecord, CallRecord, TrendPoint
from ..root.layout import ANNOTATIONS, CATALOGS, TRENDS, kind_of_name
from .snapshot import Chunk, Cursor, iter_chunks, locked_size, open_journal

__all__ = ["JournalEntry", "RawLine", "iter_lines", "parse_line", "parser_for", "read_records"]


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
    fd = open_journal(path)
    if end is None:
        try:
            end = locked_size(fd, path, timeout=timeout)  # the size of the descriptor then read
        except BaseException:
            os.close(fd)
            raise
    # Reads of at most the bound: a line over it is then the first of its read, so every line before
    # it is yielded before the error.
    try:
        for chunk in iter_chunks(fd, path, end, cursor=Cursor(start, first_line),
                                 chunk_bytes=max(1, min(LINE_READ_BYTES, limit)), limit=limit,
                                 tail=include_tail, strict_tail=False):
            yield from _split(chunk)
    finally:
        os.close(fd)


def _split(chunk: Chunk) -> Iterator[RawLine]:
    data = bytes(chunk.data)
    if chunk.tail:
        yield RawLine(chunk.first_line, chunk.offset, data)
        return
    cut, line = 0, chunk.first_line
    while cut < len(data):
        nl = data.index(b"\n", cut)
        yield RawLine(line, chunk.offset + cut, data[cut:nl])
        line += 1
        cut = nl + 1


def parser_for(path: Path | str) -> Callable[[Any], Any]:
    """The record type of a journal file, by its name."""
    kind = kind_of_name(Path(path).name)
    if kind is ANNOTATIONS:
        return AnnotationRecord.from_dict
    if kind is CATALOGS:
        return CatalogRecord.from_dict
    if kind is TRENDS:
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


def read_records(path: Path | str, *, start: int = 0, first_line: int = 1,
                 timeout: float = LOCK_TIMEOUT_S) -> Iterator[JournalEntry]:
    """Yield every record of a journal, re-sanitised (SPEC 2.2), with its line number and byte offset.

    Args:
        path: the journal (its name tells the record type: calls, annotations or trend history).
        start: byte offset of a line start to resume from.
        first_line: the line number of the line at ``start``.
        timeout: seconds to wait for the shared lock.

    Returns:
        An iterator of entries in line order.

    Raises:
        RecordTooLarge: a physical line over 4 MiB.
        InvalidRecord: a complete line that is not a valid record (file and line named).
        LockTimeout: the shared lock was not acquired in time.
    """
    return _entries(Path(path), start, first_line, timeout, sanitize=True)


def _read_raw_records(path: Path | str, *, start: int = 0, first_line: int = 1,
                      timeout: float = LOCK_TIMEOUT_S) -> Iterator[JournalEntry]:
    """``read_records`` without the re-sanitisation: records exactly as parsed (tests of the writer)."""
    return _entries(Path(path), start, first_line, timeout, sanitize=False)


def _entries(path: Path, start: int, first_line: int, timeout: float, *,
             sanitize: bool) -> Iterator[JournalEntry]:
    parse = parser_for(path)
    for raw in iter_lines(path, start=start, first_line=first_line, timeout=timeout):
        record = parse_line(raw, path, parse, sanitize)
        if record is not None:
            yield JournalEntry(raw.line, raw.offset, record)
