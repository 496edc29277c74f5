"""Chunked, exactly bounded reading of a journal snapshot.

Large chunks are read into fresh buffers, cut after their last newline, and every complete physical line
is checked against the 4 MiB bound (newline included) with one vectorised pass over the newline
positions.  The semantics are those of ``journal.read.iter_lines``: lines are numbered from 1 over
complete lines, an unterminated final line is not consumed, and an over-long line is an error named by
file and line.  With ``skip_oversized`` an over-long complete line is reported and skipped instead.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from ..errors import RecordTooLarge
from ..journal.read import open_journal
from ..limits import MAX_RECORD_BYTES
from .canon import newline_positions

__all__ = ["Chunk", "ScanState", "scan_chunks"]

#: Bytes read per chunk: big enough to amortise Python overhead, bounded for memory.
CHUNK_BYTES = 8 * 1024 * 1024


@dataclass
class ScanState:
    """Where a file's complete-line prefix ends, and the SHA-256 of that prefix."""

    offset: int = 0
    next_line: int = 1
    digest: hashlib._Hash = field(default_factory=hashlib.sha256)


@dataclass(frozen=True)
class Chunk:
    """Complete lines of one chunk.

    Attributes:
        data: the bytes of the lines, each with its newline.
        offset: file offset of ``data[0]``.
        first_line: line number of the first line.
        ends: positions (in ``data``) of each line's newline.
        too_long: line numbers over the bound, to skip (only with ``skip_oversized``).
    """

    data: bytes | memoryview
    offset: int
    first_line: int
    ends: np.ndarray
    too_long: tuple[int, ...] = ()


def _read(fd: int, carry: bytes, pos: int, size: int) -> memoryview:
    """``carry`` followed by up to ``size`` bytes read at ``pos``, in a fresh buffer from Arrow's pool
    (not zero-filled; returned to the pool, not stuck in the C heap, once the chunk is done)."""
    buf = memoryview(pa.allocate_buffer(len(carry) + size)).cast("B")
    buf[: len(carry)] = carry
    got = os.preadv(fd, [buf[len(carry):]], pos)
    return buf[: len(carry) + got]


class _Digest:
    """Feeds the prefix digests in order from one background thread (hashlib releases the GIL on large
    buffers), so hashing overlaps the conversion.  Small updates run inline."""

    _ASYNC = 1 << 20

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._last: Future[None] | None = None

    def update(self, digest: hashlib._Hash, data: memoryview) -> None:
        if len(data) < self._ASYNC:
            self.sync()
            digest.update(data)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcpeval-digest")
        self._last = self._pool.submit(digest.update, data)

    def sync(self) -> None:
        if self._last is not None:
            self._last.result()
            self._last = None

    def close(self) -> None:
        try:
            self.sync()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)


def scan_chunks(path: Path, state: ScanState, end: int, *, limit: int = MAX_RECORD_BYTES,
                chunk_bytes: int = CHUNK_BYTES, skip_oversized: bool = False,
                on_bytes: Callable[[int], None] | None = None) -> Iterator[Chunk]:
    """Yield the complete lines between ``state.offset`` and ``end`` in chunks, advancing ``state``.

    Args:
        path: the journal.
        state: resume point; advanced past each chunk once the consumer asks for the next one.
        end: the snapshot size taken under a shared lock.
        limit: bound on a line including its newline.
        chunk_bytes: bytes read per chunk (at least ``limit + 1`` is used).
        skip_oversized: list over-long complete lines in ``Chunk.too_long`` instead of raising.
        on_bytes: progress callback, called with the bytes read so far by this scan.

    Returns:
        An iterator of chunks.

    Raises:
        RecordTooLarge: a line over the bound (file and line named), unless ``skip_oversized``.
    """
    chunk_bytes = max(chunk_bytes, limit + 1)
    fd = open_journal(path)
    digests = _Digest()
    try:
        yield from _Scanner(fd, path, state, limit, skip_oversized, digests).run(end, chunk_bytes, on_bytes)
    finally:
        try:
            digests.close()
        finally:
            os.close(fd)


class _Scanner:
    def __init__(self, fd: int, path: Path, state: ScanState, limit: int, skip: bool,
                 digests: _Digest) -> None:
        self.fd, self.path, self.state, self.limit, self.skip = fd, path, state, limit, skip
        self.digests = digests

    def run(self, end: int, chunk_bytes: int, on_bytes: Callable[[int], None] | None) -> Iterator[Chunk]:
        state, start = self.state, self.state.offset
        pos, carry = start, b""
        pending: hashlib._Hash | None = None  # digest while inside an over-long line being skipped
        while pos < end:
            base = pos - len(carry)
            buf = _read(self.fd, carry, pos, min(chunk_bytes, end - pos))
            if len(buf) == len(carry):
                break
            pos = base + len(buf)
            if on_bytes is not None:
                on_bytes(pos - start)
            ends = newline_positions(buf)
            if pending is not None:
                if len(ends) == 0:
                    pending.update(buf)
                    carry = b""
                    continue
                skip_to = int(ends[0]) + 1
                pending.update(buf[:skip_to])
                state.digest, pending = pending, None
                yield Chunk(b"", base, state.next_line, ends[:0], too_long=(state.next_line,))
                state.offset, state.next_line = base + skip_to, state.next_line + 1
                buf = buf[skip_to:]
                base += skip_to
                ends = ends[1:] - skip_to
            if len(ends) == 0:
                if len(buf) >= self.limit:
                    if not self.skip:
                        raise RecordTooLarge(self.path, state.next_line)
                    self.digests.sync()
                    pending = state.digest.copy()
                    pending.update(buf)
                    carry = b""
                else:
                    carry = bytes(buf)
                continue
            cut = int(ends[-1]) + 1
            carry = bytes(buf[cut:])
            lines = buf[:cut]
            yield self._chunk(lines, base, ends)
            self.digests.update(state.digest, lines)
            state.offset, state.next_line = base + cut, state.next_line + len(ends)
        if pending is None and len(carry) >= self.limit and not self.skip:
            raise RecordTooLarge(self.path, state.next_line)

    def _chunk(self, buf: memoryview, base: int, ends: np.ndarray) -> Chunk:
        over = np.flatnonzero(np.diff(ends, prepend=-1) > self.limit)
        if len(over) and not self.skip:
            raise RecordTooLarge(self.path, self.state.next_line + int(over[0]))
        first = self.state.next_line
        return Chunk(buf, base, first, ends, too_long=tuple(first + int(i) for i in over))
