"""Journal files (SPEC 6): flock on the file itself, bounded appends, the one snapshot reader, store walks.

``snapshot`` owns how any journal is read: open without following a symlink, size under a shared lock,
bounded chunks of whole lines, the tolerant tail.  ``read`` turns its lines into records, ``walk`` finds
the store's journals without following symlinks; ``tables`` reads through ``snapshot``, ``review``
through both.
"""

from __future__ import annotations

from .append import append_record, append_records, encode_line, journal_path
from .locks import flocked
from .read import JournalEntry, RawLine, iter_lines, read_records
from .snapshot import Chunk, Cursor, iter_chunks, locked_size, open_journal, snapshot_size, spans
from .walk import StoreFile, open_store_dir, walk_store

__all__ = [
    "Chunk",
    "Cursor",
    "JournalEntry",
    "RawLine",
    "StoreFile",
    "append_record",
    "append_records",
    "encode_line",
    "flocked",
    "iter_chunks",
    "iter_lines",
    "journal_path",
    "locked_size",
    "open_journal",
    "open_store_dir",
    "read_records",
    "snapshot_size",
    "spans",
    "walk_store",
]
