"""Symlink-proof store walks and bounded chunked reads of journal snapshots (SPEC 6, 10, 11).

The walk opens every directory and file relative to its parent's descriptor with ``O_NOFOLLOW``, so a
symlink swapped in after it was listed still cannot be followed; any symlink, special file or unreadable
entry stops the walk with a ``ReviewError`` that names the path.  Each journal's size is taken under a
shared ``flock`` (writers append whole lines under an exclusive one, so that size is a line boundary) and
only the bytes below it are read, in large chunks of whole lines.  Every physical line is held to the
4 MiB bound (newline included) with a few ``rfind`` jumps per chunk, and every chunk is checked to be
UTF-8; errors name the file and line, never the content.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import RecordTooLarge, ReviewError
from ..journal.locks import flocked
from ..limits import LOCK_TIMEOUT_S, MAX_RECORD_BYTES

__all__ = ["Chunk", "StoreFile", "check_utf8", "iter_chunks", "walk_store"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
#: Bytes read per chunk; a chunk also carries at most one partial line (< 4 MiB) from the previous read.
CHUNK_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class StoreFile:
    """A journal found in the store: its path relative to the store (POSIX form) and its display path."""

    relpath: str
    path: Path

    @property
    def is_annotations(self) -> bool:
        """True for ``annotations-*`` files, whose ``note`` field is exempt and counted."""
        return self.relpath.rsplit("/", 1)[-1].startswith("annotations-")


@dataclass(frozen=True)
class Chunk:
    """Whole lines of a snapshot: bytes, the number of their first line, and ``tail`` for a final
    unterminated line (always alone in its chunk)."""

    data: bytes
    first_line: int
    tail: bool = False


def _refuse(what: str, path: Path, reason: str) -> ReviewError:
    return ReviewError(f"{what} refuses {reason} in the store: {path}")


def _open_dir(name: str | Path, dir_fd: int | None, path: Path, what: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(path):
            raise _refuse(what, path, "symlinks") from None
        raise ReviewError(f"{what} cannot read {path}: {exc.strerror}") from None


def open_store(store: Path, what: str) -> int:
    """Open the store directory itself, refusing a symlink (``<what> refuses a symlinked store``).

    Args:
        store: ``<root>/store``.
        what: the command name for messages.

    Returns:
        A read-only directory descriptor (the caller closes it).

    Raises:
        ReviewError: the store is missing, a symlink, not a directory or unreadable.
    """
    try:
        st = os.lstat(store)
    except FileNotFoundError:
        raise ReviewError(f"nothing to {what}: store does not exist ({store})") from None
    except OSError as exc:
        raise ReviewError(f"{what} cannot read {store}: {exc.strerror}") from None
    if stat.S_ISLNK(st.st_mode):
        raise ReviewError(f"{what} refuses a symlinked store: {store}")
    if not stat.S_ISDIR(st.st_mode):
        raise ReviewError(f"{what} needs a directory at {store}")
    return _open_dir(store, None, store, what)


def _open_file(name: str, dir_fd: int, path: Path, what: str) -> int:
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the entry became a symlink after it was listed
            raise _refuse(what, path, "symlinks") from None
        raise ReviewError(f"{what} cannot read {path}: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _refuse(what, path, "special files")
    return fd


def _entries(dir_fd: int, path: Path, what: str) -> list[tuple[str, os.stat_result]]:
    try:
        names = sorted(os.listdir(dir_fd))
        return [(name, os.stat(name, dir_fd=dir_fd, follow_symlinks=False)) for name in names]
    except OSError as exc:
        raise ReviewError(f"{what} cannot read {path}: {exc.strerror}") from None


def walk_store(store: Path, *, what: str, skip_probes: bool = False) -> Iterator[tuple[StoreFile, int]]:
    """Yield every ``*.jsonl`` regular file under ``store`` (sorted by name at each level) with an open
    read-only descriptor, which the caller must close.

    Args:
        store: the store directory.
        what: the command name for messages (``doctor``, ``share``).
        skip_probes: skip the top-level ``probes`` directory (share without probe history).

    Raises:
        ReviewError: the store or any entry is a symlink, a ``.jsonl`` entry is not a regular file, or an
            entry cannot be read (named by path).
    """
    top = open_store(store, what)
    try:
        yield from _walk(top, store, "", what, skip_probes)
    finally:
        os.close(top)


def _walk(dir_fd: int, path: Path, rel: str, what: str, skip_probes: bool) -> Iterator[tuple[StoreFile, int]]:
    for name, st in _entries(dir_fd, path, what):
        child, child_rel = path / name, f"{rel}{name}"
        if stat.S_ISLNK(st.st_mode):
            raise _refuse(what, child, "symlinks")
        if stat.S_ISDIR(st.st_mode):
            if skip_probes and child_rel == "probes":
                continue
            sub = _open_dir(name, dir_fd, child, what)
            try:
                yield from _walk(sub, child, child_rel + "/", what, skip_probes)
            finally:
                os.close(sub)
        elif name.endswith(".jsonl") and name != ".jsonl":
            fd = _open_file(name, dir_fd, child, what)
            yield StoreFile(child_rel, child), fd


def snapshot(fd: int, path: Path, *, timeout: float = LOCK_TIMEOUT_S) -> int:
    """The file's size taken under a shared lock: no writer is inside a line there.

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


def _check_bounds(buf: bytes, end: int, path: Path, first_line: int, limit: int) -> None:
    pos = 0
    while end - pos > limit:
        nl = buf.rfind(b"\n", pos, pos + limit)
        if nl < 0:
            raise RecordTooLarge(path, first_line + buf.count(b"\n", 0, pos))
        pos = nl + 1


def check_utf8(data: bytes, path: Path, first_line: int, what: str = "store snapshot") -> None:
    """Raise naming the line when ``data`` is not UTF-8 (``store snapshot is not UTF-8``).

    Args:
        data: whole lines.
        path: the journal, for the message.
        first_line: the number of the first line in ``data``.
        what: the message's subject.

    Raises:
        ReviewError: invalid UTF-8, named by path and line.
    """
    if data.isascii():
        return
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        raise ReviewError(f"{what} is not UTF-8: {path} line {line}") from None


def iter_chunks(fd: int, path: Path, size: int, *, chunk_bytes: int = CHUNK_BYTES,
                limit: int = MAX_RECORD_BYTES) -> Iterator[Chunk]:
    """Yield the snapshot ``[0, size)`` of ``fd`` as chunks of whole, bounded lines.

    Args:
        fd: the open journal.
        path: its path, for messages.
        size: the snapshot size.
        chunk_bytes: bytes per read.
        limit: the line bound, newline included.

    Returns:
        An iterator of chunks; a final unterminated line comes alone with ``tail`` set.

    Raises:
        RecordTooLarge: a line (newline included) over ``limit``, named by file and line.
        ReviewError: the file shrank below the snapshot while it was read.
    """
    pos, line, carry = 0, 1, b""
    while pos < size:
        data = os.pread(fd, min(chunk_bytes, size - pos), pos)
        if not data:
            raise ReviewError(f"{path} shrank while it was read")
        pos += len(data)
        buf = carry + data if carry else data
        cut = buf.rfind(b"\n") + 1
        _check_bounds(buf, cut, path, line, limit)
        if cut:
            whole = buf if cut == len(buf) else buf[:cut]
            yield Chunk(whole, line)
            line += int(np.count_nonzero(np.frombuffer(whole, dtype=np.uint8) == 0x0A))
        carry = buf[cut:]
        if len(carry) >= limit:
            raise RecordTooLarge(path, line)
    if carry:
        yield Chunk(carry, line, tail=True)
