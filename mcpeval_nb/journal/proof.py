"""The one proof that a journal grew only by appends since a reader consumed a prefix of it (SPEC 6.2).

A reader that comes back for appended bytes (``Store.refresh``, the incremental Parquet export, the
findings index) must know that the bytes it already read are still the journal's first bytes.  It keeps a
``Prefix`` of what it consumed, taken on the very descriptor it read through: the file's identity (device
and inode), the prefix's length, and the SHA-256 of its first 4 KiB and of its last 64 KiB (and, when the
reader hashed every byte as it read, of the whole prefix).  The next read proves the journal on the very
descriptor it is about to read: the same file, not shorter than the prefix, the same head and tail
digests (``verify="full"``: the same whole-prefix digest, re-hashed).  Appends leave the proof intact; a
rewritten file (a new inode, a truncation, an edit near either end, or anywhere with ``full``) breaks it,
and the reader reads the journal again from the start.

A ``Snapshot`` is that descriptor: the journal opened once, its size taken under a shared lock, the
proof checked and taken on it, and the bytes between read through it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Literal

from ..limits import LOCK_TIMEOUT_S
from .digest import range_sha256
from .snapshot import Cursor, locked_size, open_journal

__all__ = ["HEAD", "WINDOW", "Prefix", "Snapshot", "Verify"]

#: Bytes hashed at the start and before the end of a consumed prefix.
HEAD = 4 * 1024
WINDOW = 64 * 1024
#: ``window``: prove by identity, head and tail; ``full``: also re-hash the whole prefix.
Verify = Literal["window", "full"]


@dataclass(frozen=True)
class Prefix:
    """What a reader consumed of one journal, and the evidence that proves it unchanged later.

    Attributes:
        dev / ino: the file's identity.
        offset: the prefix's length (a line start).
        head: SHA-256 (hex) of the prefix's first 4 KiB.
        tail: SHA-256 (hex) of the prefix's last 64 KiB.
        sha256: SHA-256 (hex) of the whole prefix, when the reader hashed it as it read (else None).
    """

    dev: int
    ino: int
    offset: int
    head: str
    tail: str
    sha256: str | None = None

    def to_text(self) -> str:
        """One line of text (``index.db`` keeps it): ``dev:ino:offset:head:tail[:sha256]``."""
        parts = [str(self.dev), str(self.ino), str(self.offset), self.head, self.tail]
        return ":".join([*parts, self.sha256] if self.sha256 is not None else parts)

    @classmethod
    def from_text(cls, text: str) -> Prefix | None:
        """The prefix written by ``to_text``; None for anything else (it then proves nothing)."""
        parts = text.split(":")
        if len(parts) not in (5, 6) or not all(p.isdigit() for p in parts[:3]):
            return None
        return cls(int(parts[0]), int(parts[1]), int(parts[2]), parts[3], parts[4],
                   parts[5] if len(parts) == 6 else None)


class Snapshot:
    """A journal opened for one read: the descriptor its size, its proofs and its bytes all come from.

    Args:
        path: the journal (a symlink, FIFO or device is refused by name).
        timeout: seconds to wait for the shared lock the size is taken under.

    Attributes:
        path, fd: the journal and its open descriptor (read-only).
        size: its size under a shared lock: a line boundary no writer is inside of.
        dev, ino: the identity of what was opened.

    Raises:
        JournalError: the journal cannot be opened. LockTimeout: a writer held it past the deadline.
    """

    def __init__(self, path: Path, *, timeout: float = LOCK_TIMEOUT_S) -> None:
        self.path = path
        self.fd = open_journal(path)
        try:
            self.size = locked_size(self.fd, path, timeout=timeout)
            st = os.fstat(self.fd)
        except BaseException:
            os.close(self.fd)
            raise
        self.dev, self.ino = st.st_dev, st.st_ino

    def _ends(self, end: int) -> tuple[str, str]:
        """SHA-256 of the first 4 KiB and of the last 64 KiB of the ``end`` bytes, on this descriptor."""
        return range_sha256(self.fd, 0, min(HEAD, end)), range_sha256(self.fd, max(0, end - WINDOW), end)

    def prefix(self, cursor: Cursor) -> Prefix:
        """The proof of what ``cursor`` consumed through this descriptor (its digest too, if it kept one)."""
        full = cursor.digest.hexdigest() if cursor.digest is not None else None
        return Prefix(self.dev, self.ino, cursor.offset, *self._ends(cursor.offset), full)

    def grew_from(self, prefix: Prefix, *, verify: Verify = "window") -> bool:
        """Whether this journal is the one ``prefix`` was taken of, grown only by appends since.

        With ``verify="full"`` the whole prefix is hashed again (a prefix without a whole digest then
        proves nothing).
        """
        end = prefix.offset
        if (self.dev, self.ino) != (prefix.dev, prefix.ino) or self.size < end:
            return False
        if self._ends(end) != (prefix.head, prefix.tail):
            return False
        if verify != "full":
            return True
        return prefix.sha256 is not None and range_sha256(self.fd, 0, end) == prefix.sha256

    def close(self) -> None:
        """Close the descriptor (idempotent)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
