"""Drop lines from one journal in place, safely against appenders and against SIGKILL.

Why in place, not a copy renamed over the journal: a shim (ours, or the Rust tool's) opens the journal
by name, waits for the exclusive lock, appends and closes.  A shim that opened the file before a rename
and waited on the lock would append to the replaced file and its record would be lost.  Rewriting the
same file (same inode) under the same exclusive lock makes every waiting appender land after the rewrite.

The steps, for a journal whose first dropped line starts at ``start``:

1. Without the exclusive lock, filter the snapshot taken under a shared lock into a copy of everything
   from ``start`` on (``<root>/.erase-work/``); then take the exclusive lock and filter what was appended
   since.  Lines before ``start`` are never read twice, copied or written.
2. fsync the copy, record the intent (``intent.py``: offsets, sizes, digests; no content).
3. Overwrite ``[new_end, old_end)`` with newlines (whitespace-only lines, which every reader skips),
   then the copy at ``start``, then truncate to ``new_end``; fsync after each step; release the lock.

Every state a SIGKILL can leave is told apart by ``finish``: untouched (the digest of ``[start,
old_end)`` matches), part-way (a newline at ``new_end``: appended records always start with ``{``) or
done (the copy's digest at ``start`` and the truncation).  The next command rolls it forward from the
copy, keeping whatever was appended after the kill.  Readers running during step 3 may see a torn
snapshot and fail naming a line: retry them.

A rewrite reports each step it reaches to its ``checkpoint`` (``after-copy``, ``after-pad``,
``after-write``, ``after-swap``: the truncation; the erase adds ``between-files``).  Production code passes
none; the crash tests pass one that SIGKILLs the process at a named step.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import GovernanceError, JournalError
from ..journal.digest import range_sha256
from ..journal.locks import flocked
from ..journal.snapshot import Cursor, iter_chunks, locked_size, open_journal
from ..limits import CHUNK_BYTES, LOCK_TIMEOUT_S
from ..root.layout import erase_intent_path, store_dir
from .intent import Current, Intent, work_dir

__all__ = ["Checkpoint", "Filter", "finish", "no_checkpoint", "remove_file", "rewrite"]

_BLOCK = 1 << 20
#: Called with the name of each step a rewrite (or an erase) reaches; only tests pass one, to stop the
#: process at a known step.
Checkpoint = Callable[[str], None]


def no_checkpoint(_name: str) -> None:
    """The production checkpoint: nothing is watching."""


@dataclass
class Filter:
    """What to drop: ``candidate(chunk)`` is a cheap test that a chunk of whole lines may hold a line to
    drop (False keeps the whole chunk unread); ``keep(line)`` decides one line (without its newline).
    With ``needle``, only lines holding it (in any case) or a backslash (an escape could spell it) are
    decided; every other line is kept without being parsed.  ``also`` marks more lines to decide (a
    session value that is not a token: readers hash it, so it may be the selected session)."""

    candidate: Callable[[bytes], bool]
    keep: Callable[[bytes], bool]
    needle: bytes | None = None
    also: re.Pattern[bytes] | None = None


def _marked(data: bytes, needle: bytes, also: re.Pattern[bytes] | None = None) -> list[tuple[int, int]]:
    """The ``(start, end)`` of every line of ``data`` (whole lines) holding ``needle`` (any case), a
    backslash or a match of ``also``, in order."""
    spans: set[tuple[int, int]] = set()
    for match in also.finditer(data) if also is not None else ():
        pos = match.start()
        spans.add((data.rfind(b"\n", 0, pos) + 1, data.index(b"\n", pos) + 1))
    for pattern, hay in ((needle.lower(), data.lower()), (b"\\", data)):
        pos = hay.find(pattern)
        while pos >= 0:
            end = data.index(b"\n", pos) + 1
            spans.add((data.rfind(b"\n", 0, pos) + 1, end))
            pos = hay.find(pattern, end)
    return sorted(spans)


class _Copy:
    """The filtered copy of ``[start, ...)``: opened at the first dropped line, digests of both sides."""

    def __init__(self, root: Path, *, dry_run: bool = False) -> None:
        self.root = root
        self.dry_run = dry_run
        self.start: int | None = None
        self.dropped = 0
        self.size = 0
        self.old = hashlib.sha256()
        self.new = hashlib.sha256()
        self.rel = ""
        self.fd = -1
        self.buf = bytearray()

    def _open(self, offset: int) -> None:
        self.start = offset
        if self.dry_run:
            return
        self.rel = f"{work_dir(self.root).name}/{uuid.uuid4().hex}.part"
        self.fd = os.open(self.root / self.rel, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)

    def _kept(self, data: bytes) -> None:
        self.buf += data
        self.new.update(data)
        self.size += len(data)
        if len(self.buf) >= _BLOCK:
            self.flush()

    def flush(self) -> None:
        if self.dry_run:
            self.buf = bytearray()
        elif self.buf:
            view = memoryview(self.buf)
            while view:
                view = view[os.write(self.fd, view):]
            self.buf = bytearray()

    def _bulk(self, data: bytes) -> None:
        """Lines kept without a decision."""
        if self.start is not None and data:
            self.old.update(data)
            self._kept(data)

    def _line(self, line: bytes, offset: int, rule: Filter) -> None:
        keep = rule.keep(line[:-1])
        if self.start is None and not keep:
            self._open(offset)
        if self.start is not None:
            self.old.update(line)
            if keep:
                self._kept(line)
            else:
                self.dropped += 1

    def feed(self, data: bytes, offset: int, rule: Filter) -> None:
        """Feed whole lines starting at file ``offset``."""
        if not rule.candidate(data):
            self._bulk(data)
            return
        if rule.needle is not None:
            pos = 0
            for start, end in _marked(data, rule.needle, rule.also):
                self._bulk(data[pos:start])
                self._line(data[start:end], offset + start, rule)
                pos = end
            self._bulk(data[pos:])
            return
        pos = 0
        while pos < len(data):
            nl = data.index(b"\n", pos) + 1
            self._line(data[pos:nl], offset + pos, rule)
            pos = nl

    def tail(self, data: bytes) -> None:
        """An unterminated final line (a writer that died mid-line): kept as it is."""
        if self.start is not None:
            self.old.update(data)
            self._kept(data)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _scan(fd: int, path: Path, end: int, cursor: Cursor, copy: _Copy, rule: Filter, *, tail: bool) -> None:
    for chunk in iter_chunks(fd, path, end, cursor=cursor, chunk_bytes=CHUNK_BYTES, tail=tail,
                             strict_tail=False):
        data = bytes(chunk.data)
        if chunk.tail:
            copy.tail(data)
        else:
            copy.feed(data, chunk.offset, rule)


def rewrite(root: Path, rel: str, rule: Filter, intent: Intent, *, dry_run: bool = False,
            timeout: float = LOCK_TIMEOUT_S, checkpoint: Checkpoint = no_checkpoint) -> tuple[int, Intent]:
    """Drop the lines ``rule`` refuses from ``<root>/store/<rel>``, in place (module docstring).

    Args:
        root: the capture root.
        rel: the journal's store-relative path.
        rule: what to drop.
        intent: the operation's intent, saved with ``current`` set during the in-place steps.
        dry_run: count only; nothing is written.
        timeout: seconds to wait for the journal's exclusive lock.
        checkpoint: told each step reached (tests only).

    Returns:
        The lines dropped, and the intent to continue with (unchanged when nothing was dropped).

    Raises:
        JournalError: the journal cannot be opened, read or written (its bytes are then as they were,
            or recorded in the intent for the next command to finish).
        LockTimeout: the journal's exclusive lock was not acquired in time; nothing was changed.
    """
    path = store_dir(root) / rel
    fd = open_journal(path, writable=True)
    copy = _Copy(root, dry_run=dry_run)
    try:
        cursor = Cursor()
        _scan(fd, path, locked_size(fd, path, timeout=timeout), cursor, copy, rule, tail=False)
        with flocked(fd, path, exclusive=True, timeout=timeout):
            old_end = os.fstat(fd).st_size
            _scan(fd, path, old_end, cursor, copy, rule, tail=True)
            if copy.start is None or dry_run:
                return copy.dropped, intent
            copy.flush()
            os.fsync(copy.fd)
            current = Current(path=rel, start=copy.start, old_end=old_end, new_end=copy.start + copy.size,
                              old_digest=copy.old.hexdigest(), copy=copy.rel,
                              copy_digest=copy.new.hexdigest(), dropped=copy.dropped)
            intent = intent.with_current(current)
            intent.save(root)
            checkpoint("after-copy")
            _apply(fd, path, root, current, checkpoint)
        return copy.dropped, intent
    except OSError as exc:
        raise JournalError(f"cannot rewrite journal {path}: {exc.strerror}") from None
    finally:
        copy.close()
        os.close(fd)


def _pwrite_all(fd: int, data: bytes | memoryview, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view, offset = view[written:], offset + written


def _pad(fd: int, current: Current) -> None:
    pos, block = current.new_end, b"\n" * _BLOCK
    while pos < current.old_end:
        n = min(_BLOCK, current.old_end - pos)
        _pwrite_all(fd, block[:n], pos)
        pos += n
    os.fdatasync(fd)


def _write_copy(fd: int, root: Path, current: Current) -> None:
    src = os.open(root / current.copy, os.O_RDONLY | os.O_CLOEXEC)
    try:
        pos = 0
        while pos < current.new_end - current.start:
            data = os.pread(src, _BLOCK, pos)
            if not data:
                raise GovernanceError(f"the filtered copy {root / current.copy} is short; nothing was lost "
                                      "(the journal keeps its padding)")
            _pwrite_all(fd, data, current.start + pos)
            pos += len(data)
    finally:
        os.close(src)
    os.fdatasync(fd)


def _apply(fd: int, path: Path, root: Path, current: Current, checkpoint: Checkpoint) -> None:
    """Steps 3: pad, write the copy, truncate (the caller holds the exclusive lock)."""
    _pad(fd, current)
    checkpoint("after-pad")
    _write_copy(fd, root, current)
    checkpoint("after-write")
    os.ftruncate(fd, current.new_end)
    os.fsync(fd)
    checkpoint("after-swap")


def _file_digest(path: Path) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return range_sha256(fd, 0, os.fstat(fd).st_size)
    finally:
        os.close(fd)


def finish(root: Path, current: Current, *, timeout: float = LOCK_TIMEOUT_S) -> bool:
    """Finish the interrupted in-place rewrite ``current`` (module docstring), under the exclusive lock.

    Returns:
        True when the journal may still hold the padding (records were appended after the kill, so it
        could not be truncated): the caller then drops its whitespace-only lines with a fresh rewrite.

    Raises:
        GovernanceError: the journal is in no state the rewrite could have left (changed by something
            else); it is left as it is, with the intent, for a person to look at.
    """
    path = store_dir(root) / current.path
    copy_ok = _file_digest(root / current.copy) == current.copy_digest
    fd = open_journal(path, writable=True)
    try:
        with flocked(fd, path, exclusive=True, timeout=timeout):
            size = os.fstat(fd).st_size
            untouched = size >= current.old_end and range_sha256(fd, current.start, current.old_end) == \
                current.old_digest
            midway = size >= current.old_end and os.pread(fd, 1, current.new_end) == b"\n"
            if (untouched or midway) and copy_ok:
                _pad(fd, current)
                _write_copy(fd, root, current)
                if size == current.old_end:
                    os.ftruncate(fd, current.new_end)
                    os.fsync(fd)
                    return False
                return True
            if untouched:
                return False  # the copy was lost before anything was written: rolled back
            if size >= current.new_end and range_sha256(fd, current.start, current.new_end) == \
                    current.copy_digest:
                return False  # truncated before the kill: done
    except OSError as exc:
        raise GovernanceError(f"cannot finish the interrupted erase of {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    raise GovernanceError(f"{path} changed in a way an interrupted erase cannot explain; left as it is "
                          f"with {erase_intent_path(root)}")


def remove_file(path: Path, *, timeout: float = LOCK_TIMEOUT_S) -> None:
    """Unlink a whole journal under its exclusive lock (retention); a missing file is fine."""
    try:
        fd = open_journal(path, writable=True)
    except JournalError:
        if not os.path.lexists(path):
            return
        raise
    try:
        with flocked(fd, path, exclusive=True, timeout=timeout), contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    finally:
        os.close(fd)
