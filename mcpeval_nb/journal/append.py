"""The journal writer (SPEC 6.1-6.2).

Encode first, check the 4 MiB bound (newline included) before any file is opened, then take an
exclusive ``flock`` on the journal file itself and write the whole line in one write.  A refused record
leaves every existing byte unchanged and creates no file.  A write that fails part-way (a full disk, a
file-size limit, an I/O error) is undone under the same lock: the file is truncated back to the size it
had before, so no partial line is left for the next append to be glued onto.  A journal path that is not
a regular file (a FIFO, a device) is refused without blocking.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from ..errors import JournalError, RecordTooLarge
from ..limits import CHUNK_BYTES, LOCK_TIMEOUT_S, MAX_RECORD_BYTES
from ..privacy.catalog import CatalogRecord
from ..privacy.records import AnnotationRecord, CallRecord, TrendPoint, check_unsigned
from ..root import Root, RootLike
from ..root.layout import annotations_path, calls_path, catalogs_path, history_path
from .locks import flocked

__all__ = ["Record", "append_line", "append_record", "append_records", "encode_line", "journal_path"]

Record = CallRecord | AnnotationRecord | TrendPoint | CatalogRecord

_OPEN_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK


def encode_line(record: Record) -> bytes:
    """Sanitise and encode a record as one journal line (UTF-8, trailing newline).

    Raises:
        RecordTooLarge: the line would exceed 4 MiB including the newline.
        ProfileError: a trend point carries an invalid measurement profile.
        UsageError: an unsigned field (``seq`` ...) is not an unsigned integer: no reader could read it.
    """
    return _encode_clean(record.sanitized())


def _encode_clean(clean: Record) -> bytes:
    check_unsigned(clean)
    line = (clean.encode() + "\n").encode("utf-8")
    if len(line) > MAX_RECORD_BYTES:
        raise RecordTooLarge()
    return line


def journal_path(root: Path, record: Record) -> Path:
    """The journal file a (sanitised) record belongs to."""
    if isinstance(record, CallRecord):
        return calls_path(root, record.day)
    if isinstance(record, AnnotationRecord):
        return annotations_path(root, record.day)
    if isinstance(record, CatalogRecord):
        return catalogs_path(root, record.day)
    return history_path(root)


def _open_for_append(path: Path) -> int:
    try:
        try:
            fd = os.open(path, _OPEN_FLAGS, 0o666)
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, _OPEN_FLAGS, 0o666)
    except OSError as exc:
        raise JournalError(f"cannot open journal {path}: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise JournalError(f"journal {path} is not a regular file; refusing to write to it")
    return fd


def _write_all(fd: int, data: bytes, path: Path) -> None:
    """Write every byte, or put the file back as it was and raise (the caller holds the lock)."""
    before = os.fstat(fd).st_size
    view = memoryview(data)
    try:
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except OSError as exc:
        try:
            os.ftruncate(fd, before)
        except OSError:
            raise JournalError(f"cannot write journal {path}: {exc.strerror}; the partial line could not "
                               "be removed (the next reader will name its line)") from None
        raise JournalError(f"cannot write journal {path}: {exc.strerror}; nothing was written") from None


def _write_locked(path: Path, data: bytes, timeout: float) -> None:
    fd = _open_for_append(path)
    try:
        with flocked(fd, path, exclusive=True, timeout=timeout):
            _write_all(fd, data, path)
    finally:
        os.close(fd)


def append_record(root: RootLike, record: Record, *, timeout: float = LOCK_TIMEOUT_S) -> Path:
    """Append one record to its journal under ``root`` (sanitised on the way).

    Args:
        root: the capture root.
        record: a call record, annotation or trend point.
        timeout: seconds to wait for the exclusive lock.

    Returns:
        The journal path written.

    Raises:
        RecordTooLarge: nothing was written and no file was created.
        UsageError: an unsigned field is not an unsigned integer (a float ``seq``); nothing written.
        LockTimeout: another process held the journal past the deadline; nothing was written.
        JournalError: the store is not writable.
    """
    clean = record.sanitized()
    line = _encode_clean(clean)
    path = journal_path(Root.of(root, check=False).path, clean)
    _write_locked(path, line, timeout)
    return path


def append_records(root: RootLike, records: Iterable[Record], *, timeout: float = LOCK_TIMEOUT_S,
                   chunk_bytes: int = CHUNK_BYTES) -> int:
    """Append many records, grouped per journal, a chunk of whole lines per locked write.

    Every record is encoded and checked before anything is written, so one oversized record refuses the
    whole batch with no byte changed.

    Returns:
        The number of records written.
    """
    base = Root.of(root, check=False).path
    groups: dict[Path, list[bytes]] = {}
    count = 0
    for record in records:
        clean = record.sanitized()
        groups.setdefault(journal_path(base, clean), []).append(_encode_clean(clean))
        count += 1
    for path, lines in groups.items():
        chunk: list[bytes] = []
        size = 0
        for line in lines:
            if size + len(line) > chunk_bytes and chunk:
                _write_locked(path, b"".join(chunk), timeout)
                chunk, size = [], 0
            chunk.append(line)
            size += len(line)
        if chunk:
            _write_locked(path, b"".join(chunk), timeout)
    return count


def append_line(path: Path | str, text: str, *, timeout: float = LOCK_TIMEOUT_S) -> Path:
    """Append one already-sanitised JSON line to a journal of the package's own (the sizes history).

    The same writer as ``append_record``: the 4 MiB bound (newline included) checked before any file is
    opened, the exclusive ``flock`` on the file itself, one write, undone on a partial failure.

    Args:
        path: the journal file (created with its parent directories on demand).
        text: one JSON document without a newline (the caller's record type sanitised it).
        timeout: seconds to wait for the exclusive lock.

    Returns:
        The journal path written.

    Raises:
        RecordTooLarge: nothing was written and no file was created.
        LockTimeout, JournalError: as ``append_record``; nothing was written.
    """
    line = (text + "\n").encode("utf-8")
    if len(line) > MAX_RECORD_BYTES:
        raise RecordTooLarge()
    _write_locked(Path(path), line, timeout)
    return Path(path)
