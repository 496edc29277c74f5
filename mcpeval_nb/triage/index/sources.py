"""The journals an index covers and the proof that an indexed prefix is unchanged.

A journal's indexed prefix is proven unchanged, without re-reading it, by the same evidence
``Store.refresh`` uses: the same file (device and inode), not shorter than the prefix, and the same
SHA-256 over the first 4 KiB and the last 64 KiB before the prefix's end.  ``index_sources.digest`` holds
``<dev>:<ino>:<sha256 hex>`` of exactly that.  Appends leave it intact; a rewritten file (a new inode, a
truncation, an edit near either end) changes it and forces a full rebuild.  ``index --full`` rebuilds
regardless (an in-place edit in the middle of a large journal is not detected by the proof).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from ...journal.snapshot import open_journal, snapshot_size
from ...tables.store import journal_files

__all__ = ["HEAD", "WINDOW", "Source", "plan_sources", "prefix_digest"]

HEAD = 4 * 1024
WINDOW = 64 * 1024


@dataclass(frozen=True)
class Source:
    """One journal to index: its kind (``calls``/``annotations``), path and snapshot size."""

    kind: str
    path: Path
    end: int


def plan_sources(root: Path) -> list[Source]:
    """Every calls and annotations journal of the store, sorted, with its size under a shared lock.

    Raises:
        JournalError: a journal cannot be opened. LockTimeout: a writer held one past the deadline.
    """
    return [
        Source(kind, path, snapshot_size(path))
        for kind, path in journal_files(root)
        if kind in ("calls", "annotations")
    ]


def prefix_digest(path: Path, offset: int) -> str:
    """``<dev>:<ino>:<hex>``: the file's identity and SHA-256 of its head and the tail before ``offset``.

    Raises:
        JournalError: the journal cannot be opened.
    """
    fd = open_journal(path)
    try:
        st = os.fstat(fd)
        digest = hashlib.sha256()
        digest.update(os.pread(fd, min(HEAD, offset), 0))
        start = max(0, offset - WINDOW)
        digest.update(os.pread(fd, offset - start, start))
        return f"{st.st_dev}:{st.st_ino}:{digest.hexdigest()}"
    finally:
        os.close(fd)
