"""The journals an index covers (``journal.listing``), and the proof kept of each one's indexed prefix.

``index_sources.digest`` holds the ``journal.proof.Prefix`` of the bytes indexed, taken on the descriptor
they were read through: the file's identity, the prefix's length and the SHA-256 of its first 4 KiB and
of its last 64 KiB, the same evidence ``Store.refresh`` and the Parquet export keep.  A refresh proves
each journal on the descriptor it then reads; appends leave the proof intact, and a rewritten file (a new
inode, a truncation, an edit near either end) breaks it and forces a full rebuild.  ``index --full``
rebuilds regardless (an in-place edit in the middle of a large journal is not seen by the proof).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ...journal.listing import journals

__all__ = ["Source", "plan_sources"]


@dataclass(frozen=True)
class Source:
    """One journal to index: its kind (``calls``/``annotations``), path and size when planned (for
    progress; the read takes the size of the descriptor it reads under a shared lock)."""

    kind: str
    path: Path
    end: int


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def plan_sources(root: Path) -> list[Source]:
    """Every calls and annotations journal of the store, sorted (calls first), with its size now.

    Raises:
        JournalError: the store cannot be read.
    """
    return [Source(j.kind, j.path, _size(j.path)) for j in journals(root, ("calls", "annotations"))]
