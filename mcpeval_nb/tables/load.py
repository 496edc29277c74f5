"""Loading journals into Arrow batches: the fast path, the reference path and the load report.

``errors="report"`` (every reader's default) skips a line it cannot use, a record whose field has the
wrong type included (a float ``seq``), and adds a ``(file, line, reason)`` row to the report: one bad
record never takes the store offline.  ``errors="raise"`` stops at the first bad line with
``RecordTooLarge`` or ``InvalidRecord`` (file and line, never content), like the journal reader.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa

from ..errors import InvalidRecord, UsageError
from ..journal.proof import Snapshot
from ..journal.read import RawLine, parse_line
from ..journal.snapshot import Chunk, Cursor, iter_chunks
from ..limits import CHUNK_BYTES, MAX_RECORD_BYTES
from ..privacy.catalog import CatalogRecord
from ..privacy.records import AnnotationRecord, CallRecord, TrendPoint
from .canon import newline_positions
from .fast_notes import fast_annotations
from .fastpath import FastResult, fast_calls
from .rows import annotation_batch, call_batch, catalog_batch, trend_batch
from .schemas import ANNOTATIONS_SCHEMA, CALLS_SCHEMA, CATALOGS_SCHEMA, LOAD_REPORT_SCHEMA, TRENDS_SCHEMA

__all__ = ["Errors", "LoadReport", "SkippedLine", "digest_cursor", "load_file", "read_chunks"]

Errors = Literal["raise", "report"]
TOO_LARGE = "journal record exceeds 4 MiB"
#: Chunks in flight: one being finished here, one being converted by a worker (2 cores is the norm).
_WORKERS = 2
#: The kinds with a fast path for canonical lines (the reference path takes every other line).
_FAST: dict[str, Callable[..., FastResult]] = {"calls": fast_calls, "annotations": fast_annotations}

_KINDS: dict[str, tuple[pa.Schema, Callable[[Any], Any], Callable[[list[Any]], pa.RecordBatch]]] = {
    "calls": (CALLS_SCHEMA, CallRecord.from_dict, call_batch),
    "annotations": (ANNOTATIONS_SCHEMA, AnnotationRecord.from_dict, annotation_batch),
    "trends": (TRENDS_SCHEMA, TrendPoint.from_dict, trend_batch),
    "catalogs": (CATALOGS_SCHEMA, CatalogRecord.from_dict, catalog_batch),
}


@dataclass(frozen=True)
class SkippedLine:
    """A journal line a reader could not use and went past: where, and a fixed reason (never content)."""

    file: str
    line: int
    reason: str

    def text(self) -> str:
        """``<file>:<line>: <reason>``."""
        return f"{self.file}:{self.line}: {self.reason}"


class LoadReport:
    """Lines skipped by ``errors="report"``: file, line number and a fixed reason, never content."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, path: Path, line: int, reason: str) -> None:
        """Record one skipped line."""
        self.rows.append({"file": str(path), "line": line, "reason": reason})

    def lines(self) -> tuple[SkippedLine, ...]:
        """The skipped lines in the order they were met."""
        return tuple(SkippedLine(r["file"], r["line"], r["reason"]) for r in self.rows)

    def table(self) -> pa.Table:
        """The report as a ``LOAD_REPORT_SCHEMA`` table."""
        return pa.Table.from_pylist(self.rows, schema=LOAD_REPORT_SCHEMA)


def check_errors(errors: str) -> Errors:
    """Validate an ``errors=`` argument.

    Raises:
        UsageError: not ``raise`` or ``report``.
    """
    if errors not in ("raise", "report"):
        raise UsageError('errors must be "raise" or "report"')
    return "raise" if errors == "raise" else "report"


def digest_cursor() -> Cursor:
    """A cursor at the start of a journal that keeps the SHA-256 of the prefix it consumes."""
    return Cursor(digest=hashlib.sha256())


def _pool_buffer(size: int) -> memoryview:
    """A fresh buffer from Arrow's pool (not zero-filled; returned to the pool, not stuck in the C heap,
    once the chunk is done)."""
    return memoryview(pa.allocate_buffer(size)).cast("B")


def read_chunks(fd: int, path: Path, cursor: Cursor, end: int, *, limit: int = MAX_RECORD_BYTES,
                chunk_bytes: int = CHUNK_BYTES, skip_oversized: bool = False,
                on_bytes: Callable[[int], None] | None = None) -> Generator[Chunk, None, None]:
    """The loader's reading of a snapshot: ``journal.snapshot.iter_chunks`` with its fast strategy.

    Newline positions come from the compiled ``memchr`` scan and ride on each chunk (the scanner cuts
    lines with them), reads go into buffers from Arrow's pool, and at least ``limit + 1`` bytes are read
    per chunk.  No tail is yielded: an unterminated final line is never loaded.

    Args:
        fd: the open journal.
        path: its path, for messages.
        cursor: resume point, advanced past each chunk once the next one is asked for.
        end: the snapshot size taken under a shared lock.
        limit: the line bound, newline included.
        chunk_bytes: bytes per read.
        skip_oversized: list over-long lines in ``Chunk.too_long`` instead of raising.
        on_bytes: progress callback with the bytes read so far.

    Returns:
        An iterator of chunks carrying their newline positions.

    Raises:
        RecordTooLarge: a line over the bound (file and line named), unless ``skip_oversized``.
    """
    return iter_chunks(fd, path, end, cursor=cursor, chunk_bytes=max(chunk_bytes, limit + 1), limit=limit,
                       skip_oversized=skip_oversized, newlines=newline_positions, allocate=_pool_buffer,
                       on_bytes=on_bytes)


def _ends(chunk: Chunk) -> np.ndarray:
    assert chunk.ends is not None  # read_chunks always carries them
    return chunk.ends


def _slow(chunk: Chunk, indices: np.ndarray, path: Path, parse: Callable[[Any], Any], errors: Errors,
          report: LoadReport) -> tuple[list[Any], list[int]]:
    records: list[Any] = []
    kept: list[int] = []
    data, ends = chunk.data, _ends(chunk)
    for i in indices.tolist():
        start = 0 if i == 0 else int(ends[i - 1]) + 1
        raw = RawLine(chunk.first_line + i, chunk.offset + start, bytes(data[start:int(ends[i])]))
        try:
            record = parse_line(raw, path, parse, True)
        except InvalidRecord as exc:
            if errors == "raise":
                raise
            report.add(path, raw.line, exc.reason)
            continue
        if record is not None:
            records.append(record)
            kept.append(i)
    return records, kept


def _skipped(chunk: Chunk) -> tuple[int, ...]:
    return tuple(line - chunk.first_line for line in chunk.too_long)


def _chunk_batch(kind: str, chunk: Chunk, path: Path, errors: Errors, report: LoadReport,
                 fast: FastResult | None = None) -> pa.RecordBatch:
    schema, parse, build = _KINDS[kind]
    skip = _skipped(chunk)
    for line in chunk.too_long:
        report.add(path, line, TOO_LARGE)
    if kind not in _FAST:
        indices = np.setdiff1d(np.arange(len(_ends(chunk))), np.array(skip, dtype=np.int64))
        records, _ = _slow(chunk, indices, path, parse, errors, report)
        return build(records)
    if fast is None:
        fast = _FAST[kind](chunk.data, _ends(chunk), exclude=skip)
    slow_idx = np.setdiff1d(fast.slow, np.array(skip, dtype=np.int64))
    if len(slow_idx) == 0:
        return fast.batch
    records, kept = _slow(chunk, slow_idx, path, parse, errors, report)
    if not records:
        return fast.batch
    table = pa.Table.from_batches([fast.batch, build(records)], schema=schema)
    order = np.argsort(np.concatenate([fast.rows, np.array(kept, dtype=np.int64)]), kind="stable")
    return table.take(pa.array(order)).combine_chunks().to_batches()[0]


def load_file(kind: str, snap: Snapshot, state: Cursor, *, errors: Errors, report: LoadReport,
              chunk_bytes: int = CHUNK_BYTES,
              on_bytes: Callable[[int], None] | None = None) -> Iterator[pa.RecordBatch]:
    """Yield the batches of one journal from ``state.offset`` to its snapshot size, advancing ``state``.

    Args:
        kind: ``calls``, ``annotations``, ``trends`` or ``catalogs``.
        snap: the open journal (its descriptor and its size under a shared lock): the caller proves
            and closes it.
        state: resume point (offset, next line number and, when kept, digest of the consumed prefix).
        errors: ``raise`` or ``report``.
        report: receives skipped lines in report mode.
        chunk_bytes: read size.
        on_bytes: progress callback with bytes read so far in this file.

    Returns:
        An iterator of record batches in line order.

    Raises:
        RecordTooLarge, InvalidRecord: in raise mode, at the first bad line.
    """
    chunks = read_chunks(snap.fd, snap.path, state, snap.size, chunk_bytes=chunk_bytes,
                         skip_oversized=errors == "report", on_bytes=on_bytes)
    try:
        yield from _batches(kind, chunks, snap.path, errors, report)
    finally:
        chunks.close()


def _batches(kind: str, chunks: Iterator[Chunk], path: Path, errors: Errors,
             report: LoadReport) -> Iterator[pa.RecordBatch]:
    if kind != "calls":
        for chunk in chunks:
            batch = _chunk_batch(kind, chunk, path, errors, report)
            if batch.num_rows:
                yield batch
        return
    # Chunks convert in workers (the compiled scanner, Arrow and numpy release the GIL) while this thread
    # reads the next one; results are consumed strictly in order.
    with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
        pending: deque[tuple[Chunk, Future[FastResult]]] = deque()
        for chunk in chunks:
            future = pool.submit(fast_calls, chunk.data, _ends(chunk), exclude=_skipped(chunk))
            pending.append((chunk, future))
            if len(pending) >= _WORKERS:
                yield from _finished(pending.popleft(), path, errors, report)
        while pending:
            yield from _finished(pending.popleft(), path, errors, report)


def _finished(item: tuple[Chunk, Future[FastResult]], path: Path, errors: Errors,
              report: LoadReport) -> Iterator[pa.RecordBatch]:
    chunk, future = item
    batch = _chunk_batch("calls", chunk, path, errors, report, future.result())
    del chunk, item
    # The chunk's buffers are free now: hand them back to the system instead of letting the allocator
    # keep them, so a load's peak memory stays near the table it builds (milliseconds per chunk).
    pa.default_memory_pool().release_unused()
    if batch.num_rows:
        yield batch
