"""``open_store``: a capture root as Arrow tables, loaded once and refreshed by appended bytes only.

Each journal is read through one ``journal.proof.Snapshot``: opened once, its size taken under a shared
``flock`` (a boundary no writer is inside of), the bytes before it read without holding the lock, and the
proof of the prefix consumed taken on that same descriptor.  ``refresh()`` opens each journal again and
proves, on the descriptor it then reads, that the journal only grew since (the same file, not shorter,
the same first 4 KiB and last 64 KiB; ``verify="full"``: the whole prefix re-hashed), then reads only the
appended bytes.  A journal that cannot be proven, or one that is gone, makes the loaded tables reload.
Each table loads on first use, so ``store.calls`` alone never parses annotations or trend points.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..errors import UsageError
from ..journal.audit import audited
from ..journal.listing import Journal, journals
from ..journal.proof import Prefix, Snapshot, Verify
from ..journal.snapshot import Cursor
from ..limits import CHUNK_BYTES
from ..root import Root, RootLike
from .incremental import export_incremental
from .load import Errors, LoadReport, SkippedLine, check_errors, digest_cursor, load_file
from .parquet import ParquetExport
from .progress import Progress, resolve_progress
from .schemas import ANNOTATIONS_SCHEMA, CALLS_SCHEMA, CATALOGS_SCHEMA, TRENDS_SCHEMA

__all__ = ["Store", "open_store"]

_SCHEMAS = {"calls": CALLS_SCHEMA, "annotations": ANNOTATIONS_SCHEMA, "trends": TRENDS_SCHEMA,
            "catalogs": CATALOGS_SCHEMA}


@dataclass
class _FileState:
    """What was consumed of one journal, and its proof."""

    scan: Cursor = field(default_factory=digest_cursor)
    proof: Prefix | None = None


class _Rewritten(Exception):
    """A journal read before can no longer be proven to have only grown: reload."""


def _check_table(table: str) -> None:
    if table not in _SCHEMAS:
        raise UsageError(f"unknown table {table!r}; expected calls, annotations, trends or catalogs")


def _estimate(path: Path) -> int:
    """The journal's size now, for progress only (the read takes its own under the lock)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


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
        if table not in (*_SCHEMAS, "report"):
            raise UsageError(f"unknown table {table!r}; expected calls, annotations, trends, catalogs or "
                             "report")
        return getattr(self, table).to_pandas(**kwargs)

    # -- loading ----------------------------------------------------------------------------------
    def _plan(self, kinds: tuple[str, ...]) -> list[Journal]:
        return journals(self.root, kinds)

    def _read(self, plan: list[Journal], sink: Callable[[str, pa.RecordBatch], None],
              verify: Verify = "window") -> int:
        """Read each journal of ``plan`` past what was consumed of it, each through one snapshot.

        Raises:
            _Rewritten: a journal read before is no longer the one read (refresh then reloads).
        """
        total = sum(max(0, _estimate(j.path) - self._states.get(j.path, _FileState()).scan.offset)
                    for j in plan)
        done, rows = 0, 0
        report = self._progress
        for journal in plan:
            state = self._states.setdefault(journal.path, _FileState())
            with Snapshot(journal.path) as snap:
                if state.proof is not None and not snap.grew_from(state.proof, verify=verify):
                    raise _Rewritten(journal.path)
                if state.proof is not None and snap.size == state.scan.offset:
                    continue  # proven, nothing appended
                before, start = done, state.scan.offset

                def on_bytes(n: int, before: int = before) -> None:
                    if report is not None:
                        report(min(total, before + n), total)

                for batch in load_file(journal.kind, snap, state.scan, errors=self.errors,
                                       report=self._reports[journal.kind], chunk_bytes=self._chunk_bytes,
                                       on_bytes=on_bytes):
                    sink(journal.kind, batch)
                    rows += batch.num_rows
                state.proof = snap.prefix(state.scan)
                done = before + max(0, snap.size - start)
        if report is not None:
            report(total, total)
        return rows

    def _load(self, kinds: tuple[str, ...]) -> None:
        """(Re)load the given tables from scratch."""
        for kind in kinds:
            self._tables.pop(kind, None)
            self._reports[kind] = LoadReport()
        self._states = {p: st for p, st in self._states.items() if self._kinds.get(p) not in kinds}
        plan = self._plan(kinds)
        self._kinds.update({j.path: j.kind for j in plan})
        batches: dict[str, list[pa.RecordBatch]] = {k: [] for k in kinds}
        self._read(plan, lambda kind, b: batches[kind].append(b))
        for kind, parts in batches.items():
            self._tables[kind] = [pa.Table.from_batches(parts, schema=_SCHEMAS[kind])] if parts else []

    def refresh(self, *, verify: Verify = "window") -> int:
        """Read what was appended since the last load; reload the loaded tables if a journal was rewritten.

        Args:
            verify: ``window`` proves each read prefix by its identity, first 4 KiB and last 64 KiB;
                ``full`` re-hashes it all.

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
        plan = self._plan(loaded)
        self._kinds.update({j.path: j.kind for j in plan})
        fresh: dict[str, list[pa.RecordBatch]] = {k: [] for k in loaded}
        try:
            if set(self._states) - {j.path for j in plan}:
                raise _Rewritten("a journal is gone")
            rows = self._read(plan, lambda kind, b: fresh[kind].append(b), verify)
        except _Rewritten:
            self._load(loaded)
            return sum(self._table(k).num_rows for k in loaded)
        except BaseException:
            self._tables = {}  # offsets may be ahead of the rows kept: the next use reloads everything
            raise
        for kind, batches in fresh.items():
            if batches:
                self._tables[kind].append(pa.Table.from_batches(batches, schema=_SCHEMAS[kind]))
        return rows

    def to_parquet(self, dest: Path | str, *, verify: Verify = "window") -> ParquetExport:
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
        with audited(self.root, "export-parquet") as entry:
            entry.paths.append(dest)
            trends = pa.Table.from_batches(list(self.iter_batches("trends")), schema=TRENDS_SCHEMA)
            export = export_incremental(self.root, journals(self.root, "calls"), dest, errors=self.errors,
                                        trends=trends, verify=verify, chunk_bytes=self._chunk_bytes,
                                        progress=self._progress)
            entry.counts.update(files=export.files, calls=export.rows, journals_read=export.rewrote,
                                skipped_lines=len(export.skipped))
        return export

    def iter_batches(self, table: str = "calls") -> Iterator[pa.RecordBatch]:
        """Stream one table's batches straight from the journals, holding one chunk at a time.

        Independent of the loaded tables and of ``refresh``: use it for stores larger than memory.

        Raises:
            UsageError: an unknown table name; RecordTooLarge, InvalidRecord: in raise mode.
        """
        _check_table(table)
        report = LoadReport()
        for journal in journals(self.root, table):
            with Snapshot(journal.path) as snap:
                yield from load_file(table, snap, Cursor(), errors=self.errors, report=report,
                                     chunk_bytes=self._chunk_bytes)

    def journal_bytes(self, table: str = "calls") -> int:
        """The bytes of one table's journals now (``calls``, ``annotations``, ``trends`` or ``catalogs``):
        what a full load would read.

        Raises:
            UsageError: an unknown table name.
        """
        _check_table(table)
        return sum(_estimate(j.path) for j in journals(self.root, table))


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
