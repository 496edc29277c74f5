"""``build_index``: ``<root>/index.db`` from the store, incrementally when it can be (SPEC 12.1).

One writer at a time: ``index``, ``promote`` and the panel hold ``index.db.lock`` (a sidecar filelock),
so a second run waits instead of interleaving.  An incremental refresh parses only the bytes appended
since the checkpoint, in one ``BEGIN IMMEDIATE`` transaction (a SIGKILL rolls it back); anything the
refresh cannot prove (a rewritten or removed journal, another layout, a non-monotonic append) makes a
full build, written to ``.index.db.tmp-<uuid>`` and renamed over ``index.db``, so the file is always
either the previous index or the complete new one.  Promotion tables (``issues``, ``findings``) are
carried over a full build when the old file is ours, and the lifecycle mirror (``finding_lifecycle``,
``probe_history``, SPEC 12.4) from any old file that has it, ours or the reference tool's, so that the
next ``promote`` can take the reference's lifecycle into ``lifecycle.db``.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from filelock import FileLock, Timeout

from ...errors import FindingsError
from ...governance.erasure import recover
from ...journal.snapshot import Cursor
from ...root import Root, RootLike
from ...root.layout import INDEX_TMP_PREFIX, index_lock_path
from ...root.outputs import exchange
from ...tables.load import check_errors
from ..rows import LIFECYCLE_COLUMNS
from .bulk import Bulk
from .database import (
    COUNT_LABELS,
    FILL_CAPTURES,
    INDEX_FILE,
    INDEXES,
    SCHEMA_DIGEST,
    TABLES,
    VERSION,
    connect,
    inspect_index,
    statements,
)
from .encode import Encoded, Encoder, check_captures, label_counts
from .ingest import Ingest, Progress, ReadOptions, write_sources
from .links import linked_notes
from .refresh import refresh_index
from .result import IndexResult
from .sources import Source, plan_sources
from .windows import Windows, compute_windows, group_keys

__all__ = ["INDEX_LOCK_TIMEOUT_S", "build_index", "build_locked", "index_lock"]

INDEX_LOCK_TIMEOUT_S = 600.0
_TMP_PREFIX = INDEX_TMP_PREFIX
#: A new index's settings.  16 KiB pages (SQLite's default is 4 KiB): a quarter of the pages to split,
#: write and link while a million rows are appended; a full build took 10 % less (docs/performance.md).
_BUILD_PRAGMAS = (
    "PRAGMA page_size=16384",
    "PRAGMA journal_mode=OFF",
    "PRAGMA synchronous=OFF",
    "PRAGMA cache_size=-262144",
    "PRAGMA temp_store=MEMORY",
)


@contextlib.contextmanager
def index_lock(root: Path, *, timeout: float = INDEX_LOCK_TIMEOUT_S) -> Iterator[FileLock]:
    """Hold ``<root>/index.db.lock`` (one index writer at a time).

    Raises:
        FindingsError: another run held it past ``timeout``.
    """
    path = index_lock_path(root)
    try:
        root.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(path))
        acquired = lock.acquire(timeout=timeout)
    except Timeout:
        raise FindingsError(f"timed out waiting for another index run on {root / INDEX_FILE}") from None
    except OSError as exc:
        raise FindingsError(f"cannot lock {path}: {exc.strerror}") from None
    with acquired:
        yield lock


def build_index(
    root: RootLike = None,
    *,
    full: bool = False,
    errors: str = "report",
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> IndexResult:
    """Bring ``<root>/index.db`` up to date with the store.

    Args:
        root: the capture root (default ``$MCPEVAL_HOME``, then ``~/.mcp-eval``).
        full: rebuild from scratch even when an incremental refresh would do.
        errors: ``report`` (the default: skip a line that is not a usable record, count and name it in
            the result) or ``raise`` (stop at it).
        progress: ``(done_bytes, total_bytes)`` callback. cancel: stop at the next batch (nothing changes).

    Returns:
        An ``IndexResult`` (``result.line()`` is what ``mcpeval-nb index`` prints).

    Raises:
        FindingsError: conflicting records, or the lock was not acquired in time.
        GovernanceError: an interrupted erase could not be finished first.
        InvalidRecord, RecordTooLarge: a bad journal line (``errors="raise"``).
        Cancelled: ``cancel`` was set.
    """
    base = Root.of(root).path
    options = ReadOptions(check_errors(errors), progress, cancel)
    recover(base)  # an interrupted erase is finished first (docs/governance.md)
    with index_lock(base):
        return build_locked(base, full=full, options=options)


def build_locked(base: Path, *, full: bool, options: ReadOptions) -> IndexResult:
    """``build_index`` for a caller that already holds ``index_lock(base)`` (``promote`` refreshes the
    index and promotes under one hold of the lock).

    Raises:
        As ``build_index``.
    """
    _remove_stale(base)
    path = base / INDEX_FILE
    sources = plan_sources(base)
    state = inspect_index(path)
    reason = "requested" if full else state.reason
    if not full and state.ok:
        outcome = refresh_index(path, sources, options)
        if isinstance(outcome, IndexResult):
            return outcome
        reason = outcome.reason
    return _full_build(base, sources, reason=reason, carry=state.ok, options=options)


def _replace(tmp: Path, path: Path) -> None:
    """Put the new index in the old one's place, and let a thread of its own free the old file's blocks.

    A rename over an existing file costs twice on ext4: the kernel frees the old file's blocks and cached
    pages there and then, and it first starts writing the new file's delayed blocks (``auto_da_alloc``,
    its guard for programs that replace a file without syncing it): 0.15-0.4 s for the bench store's
    320 MB index (docs/performance.md).  So the two names are swapped in one step (``renameat2``'s
    exchange: readers see the old index or the new one, never none), the old file's new name is removed
    while it is still open, and the last close, on a daemon thread, frees it while the caller goes on
    (``promote`` promotes meanwhile; a process that exits first frees it on exit).  Where the exchange is
    not available, the rename does the same with the first cost only.
    """
    try:
        old = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:  # no previous index (or not one we can open: the rename frees it)
        old = -1
    try:
        if old >= 0 and exchange(tmp, path):
            with contextlib.suppress(OSError):  # else a temporary name left for the next build to remove
                os.unlink(tmp)
        else:
            os.replace(tmp, path)
    finally:
        if old >= 0:
            threading.Thread(target=os.close, args=(old,), name="mcpeval-nb-index-free", daemon=True).start()


def _remove_stale(base: Path) -> None:
    """Delete temporary builds left by a killed run (we hold the lock: none is live)."""
    for name in os.listdir(base):
        if name.startswith(_TMP_PREFIX):
            with contextlib.suppress(OSError):
                os.unlink(base / name)


def _full_build(base: Path, sources: list[Source], *, reason: str, carry: bool,
                options: ReadOptions) -> IndexResult:
    path = base / INDEX_FILE
    tmp = base / f"{_TMP_PREFIX}{uuid.uuid4()}"
    db = connect(tmp, read_only=False, threads=True)
    bulk: Bulk | None = None
    try:
        for pragma in _BUILD_PRAGMAS:
            db.execute(pragma)
        db.execute("BEGIN")
        for statement in statements(TABLES):
            db.execute(statement)
        db.execute("COMMIT")  # from here the bulk writer's connection writes, until bulk.close()
        bulk = Bulk(tmp, name=path)
        ingest = Ingest(db, Encoder(db, fresh=True), next_id=1, options=options, bulk=bulk)
        ingest.total = sum(s.end for s in sources)
        done = []
        for source in sources:
            cursor = Cursor()
            proof = ingest.read(source, cursor)
            assert proof is not None  # nothing to prove from: read whole
            done.append((source, cursor, proof))
        dropped = pa.record_batch({"id": pa.array(ingest.drop_replays(), pa.int64())})
        for table, column in (("call_errors", "call_id"), ("calls", "id")):
            bulk.execute(f"DELETE FROM {table} WHERE {column} = ?", dropped)
        assert ingest.events is not None  # sorted by drop_replays
        bulk.ingest("call_events", ingest.events.table())  # in key order: appended, not sorted by SQLite
        enc, ids = ingest.calls()
        for statement in statements(INDEXES):
            bulk.execute(statement)
        if ingest.notes:  # linked here, written once
            bulk.ingest("annotations", linked_notes(pa.concat_tables(ingest.notes), enc, ids, ingest.encoder,
                                                    ingest.events))
        windows = _windows(enc, ids)
        bulk.ingest("windows", windows.windows.table())
        for table, rows in zip(("index_skipped", "index_groups", "index_capture_groups"),
                               _groups(windows, enc, ids, ingest.encoder), strict=True):
            bulk.ingest(table, rows)
        ingest.bulk_strings()  # any assigned since (none is expected)
        bulk.execute(COUNT_LABELS, label_counts(enc.labels))
        bulk.execute(FILL_CAPTURES)
        bulk.close()
        db.execute("BEGIN")
        write_sources(db, done)
        failures = int(enc.failed.sum())
        db.execute(
            "INSERT INTO index_checkpoint (singleton, version, schema_digest, replayed_events, calls, "
            "failures, annotations) VALUES (1, ?, ?, ?, ?, ?, ?)",
            (VERSION, SCHEMA_DIGEST, ingest.replayed, len(ids), failures, ingest.annotations),
        )
        if carry:
            _carry_promotion(db, path)
        _carry_lifecycle(db, path)
        db.execute("COMMIT")
        db.close()
        _replace(tmp, path)
    except BaseException as exc:
        if bulk is not None:
            bulk.abort()
        db.close()
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, sqlite3.Error | OSError):  # disk full, a size limit, a vanished directory
            raise FindingsError(f"cannot write the index {path}: {exc}") from None
        raise
    return IndexResult(
        path=path,
        calls=len(ids),
        failures=failures,
        annotations=ingest.annotations,
        replayed_events=ingest.replayed,
        full=True,
        reason=reason,
        added=len(ids),
        skipped=len(ingest.report.rows),
        skipped_lines=ingest.report.lines(),
    )


@dataclass(frozen=True)
class _Computed:
    """A full build's windows and the rows' group keys."""

    windows: Windows
    key: np.ndarray


def _windows(enc: Encoded, ids: np.ndarray) -> _Computed:
    """Every window of a full build and the rows' group keys.

    Raises:
        FindingsError: a capture repeats a ``seq``, or one capture spans two (session, server) pairs.
    """
    key = group_keys(enc.capture, enc.session, enc.server)
    win = compute_windows(key, enc.seq, ids, enc.failed)
    if len(win.conflicts):
        raise FindingsError("two records of one capture share a sequence number (conflicting records)")
    check_captures(enc)
    return _Computed(win, key)


def _groups(computed: _Computed, enc: Encoded, ids: np.ndarray,
            encoder: Encoder) -> tuple[pa.Table, pa.Table, pa.Table]:
    """``index_skipped`` (the skipped legacy groups), ``index_groups`` (each legacy group's tail) and
    ``index_capture_groups`` (each capture's session, server and tail, in capture id order)."""
    win, key = computed.windows, computed.key
    width = int(enc.server.max(initial=0)) + 1
    names = [""] * len(encoder.servers)
    for name, code in encoder.servers.items():
        names[code] = name
    servers = pa.array(names, pa.string())

    def pairs(keys: np.ndarray) -> dict[str, pa.Array]:  # a legacy group key -> (session, server)
        pair = -(keys + 1)
        return {"session": pa.array(pair // width, pa.int64()),
                "server": servers.take(pa.array(pair % width))}

    keys, texts = win.tail_texts(key, enc.seq, ids, enc.failed)
    legacy, captured = keys < 0, keys > 0
    first = np.zeros(int(enc.capture.max(initial=0)) + 1, dtype=np.int64)  # a row of each capture (they
    first[enc.capture] = np.arange(len(enc))                              # agree: check_captures)
    rows = first[keys[captured]]
    capture_ids = pa.array(encoder.capture_ids, pa.string())
    capture = pa.table({"capture": capture_ids.take(pa.array(keys[captured] - 1)),
                        "session": pa.array(enc.session[rows], pa.int64()),
                        "server": servers.take(pa.array(enc.server[rows])),
                        "tail": texts.filter(pa.array(captured))})
    return (pa.table(pairs(win.skipped)),
            pa.table({**pairs(keys[legacy]), "tail": texts.filter(pa.array(legacy))}),
            capture.take(pc.sort_indices(capture.column("capture"))))  # appended in key order


def _carry_promotion(db: sqlite3.Connection, old: Path) -> None:
    """Copy the last promotion (``issues``, ``findings``) from the index being replaced."""
    source = connect(old, read_only=True)
    try:
        for table in ("issues", "findings"):
            rows = source.execute(f"SELECT * FROM {table}").fetchall()
            if rows:
                marks = ", ".join("?" * len(rows[0]))
                db.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
    finally:
        source.close()


def _carry_lifecycle(db: sqlite3.Connection, old: Path) -> None:
    """Copy SPEC 12.4's lifecycle tables from the index being replaced, whichever tool wrote it (the
    reference keeps its lifecycle there); an old file without them, or unreadable, gives nothing, and a
    row SPEC's constraints refuse (an unknown state) is left behind."""
    for table, columns in LIFECYCLE_COLUMNS.items():
        names = ", ".join(columns)
        db.executemany(f"INSERT OR IGNORE INTO {table} ({names}) VALUES ({', '.join('?' * len(columns))})",
                       _old_rows(old, f"SELECT {names} FROM {table}"))


def _old_rows(old: Path, query: str) -> list[tuple[object, ...]]:
    """The query's rows from ``old``; none when it is missing, not SQLite or lacks the table."""
    if not old.exists():
        return []
    try:
        source = connect(old, read_only=True)
    except FindingsError:
        return []
    try:
        return source.execute(query).fetchall()
    except sqlite3.DatabaseError:
        return []
    finally:
        source.close()
