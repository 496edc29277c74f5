"""Journal files: flock on the file itself, bounded appends, bounded tolerant reads (SPEC 6)."""

from __future__ import annotations

from .append import append_record, append_records, encode_line, journal_path
from .locks import flocked
from .read import JournalEntry, RawLine, iter_lines, read_records, snapshot_size

__all__ = [
    "JournalEntry",
    "RawLine",
    "append_record",
    "append_records",
    "encode_line",
    "flocked",
    "iter_lines",
    "journal_path",
    "read_records",
    "snapshot_size",
]
