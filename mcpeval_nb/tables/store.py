"""``open_store``: a capture root as Arrow tables, loaded once and refreshed by appended bytes only.

Each journal's size is taken under a shared ``flock`` (a boundary no writer is inside of); the bytes
before it are read without holding the lock.  ``refresh()`` remembers, per file, the offset and line
after the last complete line read and the SHA-256 of that prefix; on refresh it checks that the file is
the same one (device, inode, not shorter) and that the last 64 KiB of the prefix still hash the same,
then reads only the appended bytes.  A rewritten file makes the loaded tables reload.  Each table
loads on first use, so ``store.calls`` alone never parses annotations or trend points.
``refresh(verify="full")`` re-hashes every prefix instead of the last 64 KiB.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa

from ..journal.audit import audited
from ..journal.snapshot import Cursor, open_journal, snapshot_size
from ..limits import CHUNK_BYTES
from ..root import Root, RootLike, entry_exists, list_dir
from ..root.layout import store_dir
from .load import Errors, LoadReport, SkippedLine, check_errors, digest_cursor, load_file
from .progress import Progress, resolve_progress
from .schemas import ANNOTATIONS_SCHEMA, CALLS_SCHEMA, CATALOGS_SCHEMA, TRENDS_SCHEMA

if TYPE_CHECKING:
    from .parquet import ParquetExport

__all__ = ["Store", "full_digest", "journal_files", "open_store", "window_digest"]

_SCHEMAS = {"calls": CALLS_SCHEMA, "annotations": ANNOTATIONS_SCHEMA, "trends": TRENDS_SCHEMA,
            "catalogs": CATALOGS_SCHEMA}
_WINDOW = 64 * 1024


def journal_files(root: Path) -> list[tuple[str, Path]]:
    """The store's journals as ``(kind, path)``: calls, annotations, catalogs (by day), then the trend
    history."""
    store = store_dir(root)
    names = list_dir(store)  # an unreadable store is an error, never an empty one
    out: list[tuple[str, Path]] = [("calls", store / n) for n in names if fnmatchcase(n, "calls-*.jsonl")]
    out += [("annotations", store / n) for n in names if fnmatchcase(n, "annotations-*.jsonl")]
    out += [("catalogs", store / n) for n in names if fnmatchcase(n, "catalogs-*.jsonl")]
    history = store / "probes" / "history.jsonl"
    if "probes" in names and entry_exists(history):
        out.append(("trends", history))
    # Anything but a directory is kept: opening it (journal.snapshot.open_journal) refuses a symlink, a
    # FIFO or a device by name instead of silently skipping or blocking on it.
    return [(k, p) for k, p in out if not p.is_dir() or p.is_symlink()]


@dataclass
class _FileState:
    scan: Cursor = field(default_factory=digest_cursor)
    dev: int = 0
    ino: int = 0
    window: bytes = b""

    def prefix_digest(self) -> bytes:
        """SHA-256 of the prefix read so far."""
        assert self.scan.digest is not None  # digest_cursor keeps one
        return self.scan.digest.digest()


def window_digest(path: Path, offset: int) -> bytes:
    """SHA-256 of the 64 KiB of ``path`` before ``offset`` (the cheap proof a prefix is unchanged)."""
    fd = open_journal(path)
    try:
        start = max(0, offset - _WINDOW)
        return hashlib.sha256(os.pread(fd, offset - start, start)).digest()
    finally:
        os.close(fd)


def full_digest(path: Path, offset: int) -> bytes:
    """SHA-256 of the first ``offset`` bytes of ``path``."""
    digest = hashlib.sha256()
    fd = open_journal(path)
    try:
        pos = 0
        while pos < offset:
            block = os.pread(fd, min(1 << 24, offset - pos), pos)
            if not block:
                break
            digest.update(block)
            pos += len(block)
    finally:
        os.close(fd)
    return digest.digest()


class Store:
    """A capture root as Arrow tables (see ``open_store``).

    Attributes:
        root: the capture root.
        errors: ``raise`` or ``report``.
    """

    def __init__(self, root: Path, *, errors: Errors, progress: Progress | None,
                 chunk_bytes: int = CHUNK_BYTES) -> None:
        self.root = root
        self.errors: Errors = errors
        self._progress = progress
        self._chunk_bytes = chunk_bytes
        self._states: dict[Path, _FileState] = {}
        self._kinds: dict[Path, str] = {}
        self._tables: dict[str, list[pa.Table]] = {}
        self._reports: dict[str, LoadReport] = {}

    def _repr_html_(self) -> str:
        """In a notebook cell: the root, the row counts and the first calls (``tables.html``)."""
        from .html import lines_html, table_html

        calls = self.calls
        servers = len(set(calls.column("server").to_pylist()))
        counts = (f"{calls.num_rows} calls across {servers} server(s), {self.annotations.num_rows} "
                  f"annotations, {self.trends.num_rows} readiness points, "
                  f"{self.report.num_rows} skipped lines")
        head = calls.select([c for c in ("ts", "server", "method", "tool", "args", "latency_ms", "outcome",
                                         "error_code") if c in calls.column_names])
        return lines_html(f"store at {self.root}", [counts]) + table_html(head, max_rows=10)

    # -- tables -----------------------------------------------------------------------------------
    @property
    def calls(self) -> pa.Table:
        """Every call record, sanitised, in file then line order (``CALLS_SCHEMA``)."""
        return self._table("calls")

    @property
    def annotations(self) -> pa.Table:
        """Every annotation, sanitised (``ANNOTATIONS_SCHEMA``)."""
        return self._table("annotations")

    @property
    def catalogs(self) -> pa.Table:
        """Every catalog record, sanitised, one row per listed tool (``CATALOGS_SCHEMA``)."""
        return self._table("catalogs")

    @property
    def trends(self) -> pa.Table:
        """Every readiness trend point, sanitised (``TRENDS_SCHEMA``)."""
        return self._table("trends")

    @property
    def report(self) -> pa.Table:
        """Lines skipped under ``errors="report"`` (``LOAD_REPORT_SCHEMA``): file, line, reason (all
        tables)."""
        missing = tuple(k for k in _SCHEMAS if k not in self._tables)
        if missing:
            self._load(missing)
        combined = LoadReport()
        for kind in _SCHEMAS:
            combined.rows += self._reports[kind].rows
        return combined.table()

    def skipped_lines(self) -> tuple[SkippedLine, ...]:
        """``report`` as ``SkippedLine``s, for a command to name them."""
        return tuple(SkippedLine(r["file"], r["line"], r["reason"]) for r in self.report.to_pylist())

    def _table(self, kind: str) -> pa.Table:
        if kind not in self._tables:
            self._load((kind,))
        parts = self._tables[kind]
        if len(parts) > 1:
            parts[:] = [pa.concat_tables(parts)]
        return parts[0] if parts else _SCHEMAS[kind].empty_table()

    def to_pandas(self, table: str = "calls", **kwargs: Any) -> Any:
        """One table as a pandas DataFrame (``calls``, ``annotations``, ``trends``, ``catalogs`` or
        ``report``).

        Raises:
            UsageError: an unknown table name.
        """
        from ..errors import UsageError
        if table not in (*_SCHEMAS, "report"):
            raise UsageError(f"unknown table {table!r}; expected calls, annotations, trends, catalogs or "
                             "report")
        return getattr(self, table).to_pandas(**kwargs)

    # -- loading ----------------------------------------------------------------------------------
    def _snapshot(self, kinds: tuple[str, ...]) -> list[tuple[str, Path, int]]:
        return [(kind, path, snapshot_size(path)) for kind, path in journal_files(self.root) if kind in kinds]

    def _read(self, plan: list[tuple[str, Path, int]], sink: Callable[[str, pa.RecordBatch], None]) -> int:
        total = sum(max(0, end - self._states.get(path, _FileState()).scan.offset) for _, path, end in plan)
        done, rows = 0, 0
        report = self._progress
        for kind, path, end in plan:
            state = self._states.setdefault(path, _FileState())
            if not state.ino:
                st = os.stat(path)
                state.dev, state.ino = st.st_dev, st.st_ino
            before, planned = done, max(0, end - state.scan.offset)

            def on_bytes(n: int, before: int = before) -> None:
                if report is not None:
                    report(before + n, total)

            for batch in load_file(kind, path, state.scan, end, errors=self.errors,
                                   report=self._reports[kind], chunk_bytes=self._chunk_bytes,
                                   on_bytes=on_bytes):
                sink(kind, batch)
                rows += batch.num_rows
            done = before + planned
            state.window = window_digest(path, state.scan.offset)
        if report is not None:
            report(total, total)
        return rows

    def _load(self, kinds: tuple[str, ...]) -> None:
        """(Re)load the given tables from scratch."""
        for kind in kinds:
            self._tables.pop(kind, None)
            self._reports[kind] = LoadReport()
        self._states = {p: st for p, st in self._states.items() if self._kinds.get(p) not in kinds}
        plan = self._snapshot(kinds)
        self._kinds.update({path: kind for kind, path, _ in plan})
        batches: dict[str, list[pa.RecordBatch]] = {k: [] for k in kinds}
        self._read(plan, lambda kind, b: batches[kind].append(b))
        for kind, parts in batches.items():
            self._tables[kind] = [pa.Table.from_batches(parts, schema=_SCHEMAS[kind])] if parts else []

    def _unchanged(self, path: Path, state: _FileState, end: int, verify: str) -> bool:
        try:
            st = os.stat(path)
        except OSError:
            return False
        if (st.st_dev, st.st_ino) != (state.dev, state.ino) or end < state.scan.offset:
            return False
        if verify == "full":
            return full_digest(path, state.scan.offset) == state.prefix_digest()
        return window_digest(path, state.scan.offset) == state.window

    def refresh(self, *, verify: Literal["window", "full"] = "window") -> int:
        """Read what was appended since the last load; reload the loaded tables if a journal was rewritten.

        Args:
            verify: ``window`` checks the last 64 KiB of each read prefix, ``full`` re-hashes it all.

        Returns:
            The number of rows added (after a full reload: all rows).

        Raises:
            RecordTooLarge, InvalidRecord: in raise mode, a bad appended line.
            LockTimeout: a journal stayed locked past the deadline.
        """
        loaded = tuple(k for k in _SCHEMAS if k in self._tables)
        if not loaded:
            self._load(tuple(_SCHEMAS))
            return sum(self._table(k).num_rows for k in _SCHEMAS)
        plan = self._snapshot(loaded)
        self._kinds.update({path: kind for kind, path, _ in plan})
        known = set(self._states)
        gone = known - {path for _, path, _ in plan}
        if gone or any(path in known and not self._unchanged(path, self._states[path], end, verify)
                       for _, path, end in plan):
            self._load(loaded)
            return sum(self._table(k).num_rows for k in loaded)
        fresh: dict[str, list[pa.RecordBatch]] = {k: [] for k in loaded}
        try:
            rows = self._read(plan, lambda kind, b: fresh[kind].append(b))
        except BaseException:
            self._tables = {}  # offsets may be ahead of the rows kept: the next use reloads everything
            raise
        for kind, batches in fresh.items():
            if batches:
                self._tables[kind].append(pa.Table.from_batches(batches, schema=_SCHEMAS[kind]))
        return rows

    def to_parquet(self, dest: Path | str, *, verify: Literal["window", "full"] = "window") -> ParquetExport:
        """Write the calls as a hive-partitioned (day, server) Parquet dataset, incrementally.

        Only the journals changed since the previous export into ``dest`` are read again (its checkpoint
        says which; see ``tables.incremental``); the new dataset replaces ``dest`` atomically.  The
        trend points are stored beside the calls (``_mcpeval_trends.arrow``).

        Args:
            dest: the dataset directory.
            verify: ``window`` proves a journal unchanged by its stat and last 64 KiB, ``full`` by
                hashing its whole exported prefix.

        Returns:
            The export (path-like): ``dest``, the Parquet files and rows it holds, the journals it
            ``rewrote`` and ``kept``.

        Raises:
            RecordTooLarge, InvalidRecord: a bad line in raise mode.
            UsageError: a symlinked destination, or one holding a symlink.
            JournalError: the destination cannot be written.
        """
        from .incremental import export_incremental
        with audited(self.root, "export-parquet") as entry:
            entry.paths.append(dest)
            trends = pa.Table.from_batches(list(self.iter_batches("trends")), schema=TRENDS_SCHEMA)
            journals = [path for kind, path in journal_files(self.root) if kind == "calls"]
            export = export_incremental(self.root, journals, dest, errors=self.errors, trends=trends,
                                        verify=verify, chunk_bytes=self._chunk_bytes, progress=self._progress)
            entry.counts.update(files=export.files, calls=export.rows, journals_read=export.rewrote,
                                skipped_lines=len(export.skipped))
        return export

    def iter_batches(self, table: str = "calls") -> Iterator[pa.RecordBatch]:
        """Stream one table's batches straight from the journals, holding one chunk at a time.

        Independent of the loaded tables and of ``refresh``: use it for stores larger than memory.

        Raises:
            UsageError: an unknown table name; RecordTooLarge, InvalidRecord: in raise mode.
        """
        from ..errors import UsageError
        if table not in _SCHEMAS:
            raise UsageError(f"unknown table {table!r}; expected calls, annotations, trends or catalogs")
        report = LoadReport()
        for kind, path in journal_files(self.root):
            if kind == table:
                yield from load_file(kind, path, Cursor(), snapshot_size(path), errors=self.errors,
                                     report=report, chunk_bytes=self._chunk_bytes)


def open_store(root: RootLike = None, *, errors: str = "report",
               progress: Progress | bool | None = None, chunk_bytes: int = CHUNK_BYTES) -> Store:
    """Open a capture root for analysis; tables load on first use.

    Args:
        root: the capture root (default: ``$MCPEVAL_HOME``, then ``~/.mcp-eval``).
        errors: ``report`` (the default: skip a line that is not a usable record and list it in
            ``Store.report``, so one bad record never takes the store offline) or ``raise`` (stop at
            the first bad line, naming file and line).
        progress: a ``(done_bytes, total_bytes)`` callback, True for the default display (a bar in a
            notebook, stderr lines in a terminal) or None/False for none.
        chunk_bytes: bytes read per chunk (bounds memory while loading).

    Returns:
        A ``Store``.

    Raises:
        UsageError: ``errors`` is not ``raise`` or ``report``.
    """
    return Store(Root.of(root).path, errors=check_errors(errors), progress=resolve_progress(progress),
                 chunk_bytes=chunk_bytes)
