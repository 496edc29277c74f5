"""The one journal snapshot reader (SPEC 6.1-6.2): open, lock, size, bounded chunks of whole lines, tail.

A journal is opened read-only without following a final symlink, and its size is taken under a shared
``flock``: writers append whole lines under an exclusive one, so that size is a line boundary and the
bytes below it form a snapshot later appends never change.  Only those bytes are read, without the
lock, as chunks of whole lines.  Every physical line is held to the 4 MiB bound (newline included),
lines are numbered from 1 over complete lines, and an unterminated final line (an active writer's tail)
is never consumed: it is refused only when it cannot end within the bound, and handed over alone, as a
``tail`` chunk, to readers that ask for it.  Errors name the file and line, never the content.

Every reader of the package goes through ``iter_chunks``: the line reader (``journal.read``), the Arrow
loader (``tables``), the redaction check and the share export (``review``).  Two inner loops serve them:
by default the bound is checked with a few ``rfind`` jumps per chunk (the review's fast path); given a
``newlines`` function (the loader's compiled ``memchr`` scan), every newline position is found once,
carried on the chunk and checked in one vectorised pass, and reads go into buffers from ``allocate``
(Arrow's pool).  ``spans`` cuts the same snapshot into whole-line spans for helper processes while
reading only a few KiB per span: each ends at the last newline of a stretch, found reading backwards.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import JournalError, RecordTooLarge
from ..limits import CHUNK_BYTES, LOCK_TIMEOUT_S, MAX_RECORD_BYTES
from .digest import PrefixDigests
from .locks import flocked

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "Buffer",
    "Chunk",
    "Cursor",
    "iter_chunks",
    "locked_size",
    "open_journal",
    "snapshot_size",
    "spans",
]

_READ_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
#: Chunk bytes: ``bytes`` from plain reads, a ``memoryview`` of an ``allocate``d buffer otherwise.
Buffer = bytes | memoryview


@dataclass(frozen=True)
class Chunk:
    """Whole lines of a snapshot.

    Attributes:
        data: the lines, each with its newline (a ``tail`` chunk: the unterminated final line alone).
        offset: file offset of ``data[0]``.
        first_line: the number of the first line.
        tail: ``data`` is the unterminated final line, not consumed.
        ends: positions (in ``data``) of every newline, when the reader was given ``newlines``.
        too_long: numbers of over-long lines to skip (only with ``skip_oversized``).
    """

    data: Buffer
    offset: int
    first_line: int
    tail: bool = False
    ends: np.ndarray | None = None
    too_long: tuple[int, ...] = ()


@dataclass
class Cursor:
    """Where a read resumes, advanced past each chunk once the consumer asks for the next one.

    Attributes:
        offset: byte offset of a line start (the end of the consumed complete-line prefix).
        next_line: the number of the line starting there.
        digest: when set, the SHA-256 of the consumed prefix, fed as chunks are consumed.
    """

    offset: int = 0
    next_line: int = 1
    digest: hashlib._Hash | None = None


def open_journal(path: Path | str, *, writable: bool = False) -> int:
    """Open a journal read-only (``writable``: read-write, for an in-place erase) without following a
    final symlink and without blocking.

    The open itself is non-blocking and the opened file is checked to be a regular file, so a FIFO or a
    device planted where a journal belongs is refused at once (never a hang), and a file swapped in
    between a listing and the open is judged by what was actually opened.

    Raises:
        JournalError: the file cannot be opened or is not a regular file (path and reason named).
    """
    try:
        fd = os.open(path, _READ_FLAGS | (os.O_RDWR if writable else 0))  # O_RDONLY is 0
    except OSError as exc:
        raise JournalError(f"cannot open journal {path}: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise JournalError(f"journal {path} is not a regular file; refusing to "
                           f"{'rewrite' if writable else 'read'} it")
    return fd


def locked_size(fd: int, path: Path | str, *, timeout: float = LOCK_TIMEOUT_S) -> int:
    """The size of the open journal ``fd`` taken under a shared lock: no writer is inside a line there.

    Args:
        fd: the open journal.
        path: its path, for the timeout message.
        timeout: seconds to wait for the lock.

    Returns:
        The snapshot size in bytes.

    Raises:
        LockTimeout: a writer held the journal past the deadline.
    """
    with flocked(fd, path, exclusive=False, timeout=timeout):
        return os.fstat(fd).st_size


def snapshot_size(path: Path | str, *, timeout: float = LOCK_TIMEOUT_S) -> int:
    """Open ``path``, take its size under a shared lock (``locked_size``) and close it.

    Raises:
        JournalError: the journal cannot be opened.
        LockTimeout: a writer held the journal past the deadline.
    """
    fd = open_journal(path)
    try:
        return locked_size(fd, path, timeout=timeout)
    finally:
        os.close(fd)


def iter_chunks(fd: int, path: Path, end: int, *, cursor: Cursor | None = None,
                chunk_bytes: int = CHUNK_BYTES, limit: int = MAX_RECORD_BYTES, tail: bool = False,
                strict_tail: bool = True, skip_oversized: bool = False,
                newlines: Callable[[Buffer], np.ndarray] | None = None,
                allocate: Callable[[int], memoryview] | None = None,
                shrunk: Callable[[Path], Exception] | None = None,
                on_bytes: Callable[[int], None] | None = None) -> Generator[Chunk, None, None]:
    """Yield the complete lines of ``fd`` between ``cursor.offset`` and ``end`` in chunks.

    An over-long line is raised before the chunk holding it is yielded; with ``chunk_bytes <= limit``
    that chunk holds no earlier line, so every line before the bad one has been yielded.

    Args:
        fd: the open journal.
        path: its path, for messages.
        end: the snapshot size (``locked_size``).
        cursor: resume point (default: offset 0, line 1), advanced as chunks are consumed.
        chunk_bytes: bytes per read (a chunk also carries the partial line left by the previous read).
        limit: the line bound, newline included.
        tail: yield an unterminated final line as a last ``tail`` chunk.
        strict_tail: refuse an unterminated final line of exactly ``limit`` bytes (it can only end over
            the bound); False judges it by its own length, as the Rust reader does.
        skip_oversized: list over-long complete lines in ``Chunk.too_long`` (and step over over-long
            lines longer than a read) instead of raising; needs ``newlines``.
        newlines: positions of every newline of a buffer (int64); the chunks then carry them.
        allocate: a writable buffer of the given size for each read (needs ``newlines``).
        shrunk: the error raised when the file turns out shorter than ``end`` (default: stop there).
        on_bytes: progress callback, called with the bytes read so far by this scan.

    Returns:
        An iterator of chunks in file order.

    Raises:
        RecordTooLarge: a line over the bound, named by file and line (unless ``skip_oversized``).
    """
    if (skip_oversized or allocate is not None) and newlines is None:
        raise ValueError("skip_oversized and allocate need newlines")
    digests = PrefixDigests()
    scan = _Scan(fd, path, cursor or Cursor(), limit, strict_tail, skip_oversized, newlines, allocate,
                 digests)
    try:
        yield from scan.run(end, chunk_bytes, tail, shrunk, on_bytes)
    finally:
        digests.close()


class _Scan:
    """One pass of ``iter_chunks``; ``skipping`` while inside an over-long line being stepped over, whose
    bytes feed ``pending`` (a copy of the cursor's digest, kept only once the line ends)."""

    def __init__(self, fd: int, path: Path, cursor: Cursor, limit: int, strict: bool, skip: bool,
                 newlines: Callable[[Buffer], np.ndarray] | None,
                 allocate: Callable[[int], memoryview] | None, digests: PrefixDigests) -> None:
        self.fd, self.path, self.cursor, self.limit = fd, path, cursor, limit
        self.strict, self.skip = strict, skip
        self.newlines, self.allocate, self.digests = newlines, allocate, digests
        self.skipping = False
        self.pending: hashlib._Hash | None = None

    def _read(self, carry: bytes, pos: int, size: int) -> Buffer:
        """``carry`` followed by up to ``size`` bytes read at ``pos``."""
        if self.allocate is None:
            data = os.pread(self.fd, size, pos)
            return carry + data if carry else data
        buf = self.allocate(len(carry) + size)
        buf[: len(carry)] = carry
        got = os.preadv(self.fd, [buf[len(carry):]], pos)
        return buf[: len(carry) + got]

    def _over(self, size: int, more: bool) -> bool:
        """Whether ``size`` bytes without a newline can no longer end within the bound."""
        return size > self.limit or (size == self.limit and (self.strict or more))

    def _unterminated(self, buf: Buffer, more: bool) -> bytes:
        """What to carry of a read without a newline: all of it, or nothing once it is over the bound
        and being skipped.

        Raises:
            RecordTooLarge: it is over the bound and over-long lines are not skipped.
        """
        if not self._over(len(buf), more):
            return bytes(buf)
        if not self.skip:
            raise RecordTooLarge(self.path, self.cursor.next_line)
        self.skipping = True
        if self.cursor.digest is not None:
            self.digests.sync()
            self.pending = self.cursor.digest.copy()
            self.pending.update(buf)
        return b""

    def _skipped(self, data: Buffer, *, done: bool) -> None:
        """Feed bytes of the over-long line being skipped; ``done`` at its newline."""
        if self.pending is not None:
            self.pending.update(data)
            if done:
                self.cursor.digest, self.pending = self.pending, None
        self.skipping = not done

    def run(self, end: int, chunk_bytes: int, tail: bool, shrunk: Callable[[Path], Exception] | None,
            on_bytes: Callable[[int], None] | None) -> Iterator[Chunk]:
        state, start = self.cursor, self.cursor.offset
        pos, carry = start, b""
        while pos < end:
            base = pos - len(carry)
            buf = self._read(carry, pos, min(chunk_bytes, end - pos))
            if len(buf) == len(carry):
                if shrunk is not None:
                    raise shrunk(self.path)
                break
            pos = base + len(buf)
            if on_bytes is not None:
                on_bytes(pos - start)
            ends = self.newlines(buf) if self.newlines is not None else None
            if self.skipping:
                assert ends is not None
                if len(ends) == 0:
                    self._skipped(buf, done=False)
                    carry = b""
                    continue
                skip_to = int(ends[0]) + 1
                self._skipped(buf[:skip_to], done=True)
                yield Chunk(b"", base, state.next_line, ends=ends[:0], too_long=(state.next_line,))
                state.offset, state.next_line = base + skip_to, state.next_line + 1
                buf, base, ends = buf[skip_to:], base + skip_to, ends[1:] - skip_to
            cut = _last_cut(buf, ends)
            if cut == 0:
                carry = self._unterminated(buf, pos < end)
                continue
            carry = bytes(buf[cut:])
            lines = buf if cut == len(buf) else buf[:cut]
            chunk, count = self._chunk(lines, base, ends)
            yield chunk
            if state.digest is not None:
                self.digests.update(state.digest, lines)
            state.offset, state.next_line = base + cut, state.next_line + count
        if not self.skipping and not self.skip and self._over(len(carry), False):
            raise RecordTooLarge(self.path, state.next_line)
        if tail and carry and not self.skipping:
            tail_ends = self.newlines(carry) if self.newlines is not None else None
            yield Chunk(carry, state.offset, state.next_line, tail=True, ends=tail_ends)

    def _chunk(self, lines: Buffer, base: int, ends: np.ndarray | None) -> tuple[Chunk, int]:
        """The chunk of whole ``lines`` at ``base`` and its line count; raises at an over-long line."""
        import numpy as np

        first = self.cursor.next_line
        if ends is None:
            assert isinstance(lines, bytes)
            _check_bounds(lines, self.path, first, self.limit)
            count = int(np.count_nonzero(np.frombuffer(lines, dtype=np.uint8) == 0x0A))
            return Chunk(lines, base, first), count
        over = np.flatnonzero(np.diff(ends, prepend=-1) > self.limit)
        if len(over) and not self.skip:
            raise RecordTooLarge(self.path, first + int(over[0]))
        return Chunk(lines, base, first, ends=ends, too_long=tuple(first + int(i) for i in over)), len(ends)


def _last_cut(buf: Buffer, ends: np.ndarray | None) -> int:
    """The end of the last whole line in ``buf`` (0 without a newline)."""
    if ends is None:
        assert isinstance(buf, bytes)  # plain reads without newline positions
        return buf.rfind(b"\n") + 1
    return int(ends[-1]) + 1 if len(ends) else 0


def _check_bounds(buf: bytes, path: Path, first_line: int, limit: int) -> None:
    """Raise at the first line of ``buf`` (whole lines) longer than ``limit``, by ``rfind`` jumps."""
    pos, end = 0, len(buf)
    while end - pos > limit:
        nl = buf.rfind(b"\n", pos, pos + limit)
        if nl < 0:
            raise RecordTooLarge(path, first_line + buf.count(b"\n", 0, pos))
        pos = nl + 1


_PROBE = 64 * 1024


def _last_newline(fd: int, lo: int, hi: int) -> int:
    """Offset of the last newline in ``[lo, hi)`` of ``fd``, or -1 (read backwards in small blocks)."""
    end = hi
    while end > lo:
        start = max(lo, end - _PROBE)
        found = os.pread(fd, end - start, start).rfind(b"\n")
        if found >= 0:
            return start + found
        end = start
    return -1


def _first_newline(fd: int, lo: int, hi: int) -> int:
    """Offset of the first newline in ``[lo, hi)`` of ``fd``, or -1."""
    start = lo
    while start < hi:
        block = os.pread(fd, min(_PROBE, hi - start), start)
        if not block:
            return -1
        found = block.find(b"\n")
        if found >= 0:
            return start + found
        start += len(block)
    return -1


def _line_at(fd: int, pos: int) -> int:
    """The 1-based number of the line starting at ``pos`` (only for error messages)."""
    count, start = 1, 0
    while start < pos:
        block = os.pread(fd, min(1 << 20, pos - start), start)
        if not block:
            break
        count += block.count(b"\n")
        start += len(block)
    return count


def spans(fd: int, path: Path, size: int, *, window: int,
          limit: int = MAX_RECORD_BYTES) -> Iterator[tuple[int, int, bool]]:
    """Cut the snapshot ``[0, size)`` into spans of whole lines.

    Each span ends at the last newline of a ``window``-byte stretch (``window <= limit``, so a line
    inside a stretch is within the bound); a line longer than the stretch is followed to its newline,
    which must come within ``limit`` bytes of its start (newline included).  A final unterminated line
    comes alone, as ``iter_chunks`` gives it.

    Args:
        fd: the open journal.
        path: its path, for messages.
        size: the snapshot size (``locked_size``).
        window: bytes per span (at most ``limit``).
        limit: the line bound, newline included.

    Returns:
        ``(offset, length, tail)`` for each span, in order.

    Raises:
        RecordTooLarge: a line over ``limit``, named by file and line.
    """
    pos = 0
    while pos < size:
        hi = min(pos + window, size)
        nl = _last_newline(fd, pos, hi)
        if nl < 0:
            nl = _first_newline(fd, hi, min(pos + limit, size))
            if nl < 0:
                if pos + limit <= size:
                    raise RecordTooLarge(path, _line_at(fd, pos))
                yield pos, size - pos, True
                return
        yield pos, nl + 1 - pos, False
        pos = nl + 1
        if hi == size and pos < size:  # what follows the window's last newline is unterminated
            yield pos, size - pos, True
            return
