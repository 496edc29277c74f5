"""Symlink-proof walks of the store (SPEC 10, 11): every ``*.jsonl`` file, opened safely.

The walk opens every directory and file relative to its parent's descriptor with ``O_NOFOLLOW``, so a
symlink swapped in after it was listed still cannot be followed; any symlink, special file or unreadable
entry stops the walk with an error that names the path (the caller chooses the error class and the
command named in its message).  The descriptors it hands out go to ``journal.snapshot``: a size under a
shared lock, then bounded chunks of whole lines.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import JournalError
from ..root.layout import ANNOTATIONS, kind_of_name

__all__ = ["StoreFile", "open_store_dir", "walk_store"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
#: Builds the walk's error from its message (``ReviewError`` for doctor and share).
ErrorFactory = Callable[[str], Exception]


@dataclass(frozen=True)
class StoreFile:
    """A journal found in the store: its path relative to the store (POSIX form) and its display path."""

    relpath: str
    path: Path

    @property
    def is_annotations(self) -> bool:
        """True for ``annotations-*`` files, whose ``note`` field is exempt and counted."""
        return kind_of_name(self.relpath.rsplit("/", 1)[-1]) is ANNOTATIONS


@dataclass(frozen=True)
class _Walk:
    what: str
    error: ErrorFactory

    def refuse(self, path: Path, reason: str) -> Exception:
        return self.error(f"{self.what} refuses {reason} in the store: {path}")

    def unreadable(self, path: Path, exc: OSError) -> Exception:
        return self.error(f"{self.what} cannot read {path}: {exc.strerror}")

    def open_dir(self, name: str | Path, dir_fd: int | None, path: Path) -> int:
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(path):
                raise self.refuse(path, "symlinks") from None
            raise self.unreadable(path, exc) from None

    def open_file(self, name: str, dir_fd: int, path: Path) -> int:
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # the entry became a symlink after it was listed
                raise self.refuse(path, "symlinks") from None
            raise self.unreadable(path, exc) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise self.refuse(path, "special files")
        return fd

    def entries(self, dir_fd: int, path: Path) -> list[tuple[str, os.stat_result]]:
        try:
            names = sorted(os.listdir(dir_fd))
            return [(name, os.stat(name, dir_fd=dir_fd, follow_symlinks=False)) for name in names]
        except OSError as exc:
            raise self.unreadable(path, exc) from None

    def files(self, dir_fd: int, path: Path, rel: str, skip_probes: bool) -> Iterator[tuple[StoreFile, int]]:
        for name, st in self.entries(dir_fd, path):
            child, child_rel = path / name, f"{rel}{name}"
            if stat.S_ISLNK(st.st_mode):
                raise self.refuse(child, "symlinks")
            if stat.S_ISDIR(st.st_mode):
                if skip_probes and child_rel == "probes":
                    continue
                sub = self.open_dir(name, dir_fd, child)
                try:
                    yield from self.files(sub, child, child_rel + "/", skip_probes)
                finally:
                    os.close(sub)
            elif name.endswith(".jsonl") and name != ".jsonl":
                yield StoreFile(child_rel, child), self.open_file(name, dir_fd, child)


def open_store_dir(store: Path, what: str, *, error: ErrorFactory = JournalError) -> int:
    """Open the store directory itself, refusing a symlink (``<what> refuses a symlinked store``).

    Args:
        store: ``<root>/store``.
        what: the command name for messages.
        error: builds the error raised, from its message.

    Returns:
        A read-only directory descriptor (the caller closes it).

    Raises:
        Exception: from ``error``: the store is missing, a symlink, not a directory or unreadable.
    """
    walk = _Walk(what, error)
    try:
        st = os.lstat(store)
    except FileNotFoundError:
        raise error(f"nothing to {what}: store does not exist ({store})") from None
    except OSError as exc:
        raise walk.unreadable(store, exc) from None
    if stat.S_ISLNK(st.st_mode):
        raise error(f"{what} refuses a symlinked store: {store}")
    if not stat.S_ISDIR(st.st_mode):
        raise error(f"{what} needs a directory at {store}")
    return walk.open_dir(store, None, store)


def walk_store(store: Path, *, what: str, skip_probes: bool = False,
               error: ErrorFactory = JournalError) -> Iterator[tuple[StoreFile, int]]:
    """Yield every ``*.jsonl`` regular file under ``store`` (sorted by name at each level) with an open
    read-only descriptor, which the caller must close.

    Args:
        store: the store directory.
        what: the command name for messages (``doctor``, ``share``).
        skip_probes: skip the top-level ``probes`` directory (share without probe history).
        error: builds the error raised, from its message (``ReviewError`` for doctor and share).

    Raises:
        Exception: from ``error``: the store or any entry is a symlink, a ``.jsonl`` entry is not a
            regular file, or an entry cannot be read (named by path).
    """
    top = open_store_dir(store, what, error=error)
    try:
        yield from _Walk(what, error).files(top, store, "", skip_probes)
    finally:
        os.close(top)
