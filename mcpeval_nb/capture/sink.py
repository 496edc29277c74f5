"""The recording half of a shim: correlate frames, append their records in batches, count what is lost.

Records are appended in arrival order, many lines per locked write (``journal.append_records``): the
sink batches while frames keep coming and writes when its input is momentarily empty, or when a batch
reaches ``BATCH_RECORDS`` records.  Each write holds records of one journal day only, so a refused write
(lock timeout, a store that is not writable) loses exactly the records it held.  Those are counted by
kind (calls, notifications, unparsed frames) and reported in one line at the end; each failure is
reported by sequence number and error, never content (the first few only).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import dataclasses
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import MCPEvalError, RecordTooLarge
from ..journal import append_record, append_records
from ..privacy.catalog import CatalogRecord
from ..privacy.records import CallRecord
from .correlate import Correlator, classify_frame
from .handoff import counted, stderr_warning
from .oversized import Glimpse
from .wire import HttpFacts

__all__ = ["BATCH_RECORDS", "RecordSink", "counted", "loss_summary", "record_kind"]

#: The most records one locked write holds.
BATCH_RECORDS = 512
#: Frame bytes recorded after which the batch is written and freed memory handed back to the system.
TRIM_BYTES = 4 * 1024 * 1024
_LIBC: Any = None


def release_memory() -> None:
    """Hand freed heap memory back to the system (glibc ``malloc_trim``; a no-op elsewhere).

    Parsing and shaping a large frame allocates tens of MiB that are freed at once; glibc keeps such
    memory in its arenas (one per thread), so without this a long-lived shim-http grows to a plateau
    far above what it holds.
    """
    global _LIBC
    if _LIBC is None:
        try:
            _LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _LIBC.malloc_trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError):
            _LIBC = False
    if _LIBC:
        _LIBC.malloc_trim(0)
_MAX_WARNINGS = 5
_KINDS = ("calls", "notifications", "unparsed")


Captured = CallRecord | CatalogRecord


def record_kind(record: Captured) -> str:
    """``calls``, ``notifications``, ``unparsed`` or ``catalogs``: the kinds losses are counted by."""
    if isinstance(record, CatalogRecord):
        return "catalogs"
    if record.method.startswith("unparsed/"):
        return "unparsed"
    return "notifications" if record.outcome == "notification" else "calls"


def loss_summary(lost: Counter[str]) -> str:
    """``7 records were not journaled (5 calls, 2 notifications, 0 unparsed)``."""
    parts = ", ".join(f"{lost.get(kind, 0)} {kind}" for kind in _KINDS)
    extra = "".join(f", {n} {kind}" for kind, n in sorted(lost.items()) if kind not in _KINDS)
    return f"{counted(sum(lost.values()), 'record')} not journaled ({parts}{extra})"


class RecordSink:
    """Correlate frames and append the records they complete, in call order, in batches.

    Args:
        root: the capture root.
        correlator: the process's correlator (used only by whoever calls ``record``).
        warn: where content-free warnings go (default: one line on stderr).
        batch_records: the most records per locked write.
    """

    def __init__(self, *, root: Path, correlator: Correlator, warn: Callable[[str], None] | None = None,
                 batch_records: int = BATCH_RECORDS) -> None:
        self.root = root
        self.correlator = correlator
        self.written = 0
        self.lost: Counter[str] = Counter()
        self.warn = warn or stderr_warning
        self._warnings = 0
        self._batch: list[Captured] = []
        self._writing: list[Captured] = []
        self._big_bytes = 0  # frame bytes recorded since memory was last handed back
        self._batch_records = batch_records

    @property
    def failed(self) -> int:
        """Records (or frames that could not be correlated) that were not journaled."""
        return sum(self.lost.values())

    @property
    def queued(self) -> int:
        """Records correlated and waiting for the next write (0: everything recorded so far is journaled
        or counted as lost)."""
        return len(self._batch)

    def record(self, direction: str, data: bytes | None, *, scope: str, read_ms: int, hot_ns: int,
               glimpse: Glimpse | None = None, http: HttpFacts | None = None) -> None:
        """Correlate one frame and queue the records it completes for the next write.

        Args:
            direction: ``outbound``, ``inbound``, or ``end`` (an HTTP exchange ended).
            data: the frame bytes, or None for a refused or oversized frame.
            scope: the correlation scope.
            read_ms: wall-clock ms when the frame was read.
            hot_ns: nanoseconds the forwarder spent on it (counted in ``shim_self_us``).
            glimpse: the ends of a frame forwarded past the bound.
            http: shim-http's facts of a request's headers (memory only).
        """
        try:
            self._batch += self._correlate(direction, data, scope, read_ms, hot_ns, glimpse, http)
        except Exception as exc:  # a correlator bug must not stop capture
            self._fail(f"a {direction} frame could not be correlated ({type(exc).__name__})", "frames", 1)
        self._big_bytes += len(data or b"")
        if len(self._batch) >= self._batch_records or self._big_bytes >= TRIM_BYTES:
            self.flush()

    def unwritten(self) -> Counter[str]:
        """Records correlated but not yet journaled (queued, or in a write that has not returned), by kind."""
        return Counter(record_kind(r) for r in [*self._writing, *self._batch])

    def flush(self) -> None:
        """Append the queued records: one locked write per run of records of one journal day."""
        batch, self._batch = self._batch, []
        self._writing = batch
        try:
            self._flush(batch)
        finally:
            self._writing = []
        if self._big_bytes >= TRIM_BYTES:  # large frames leave freed memory behind in the allocator
            self._big_bytes = 0
            release_memory()

    def _flush(self, batch: list[Captured]) -> None:
        start = 0
        while start < len(batch):
            day = batch[start].ts[:10]
            end = start + 1
            while end < len(batch) and batch[end].ts[:10] == day:
                end += 1
            self._write(batch[start:end])
            start = end

    def finish(self) -> None:
        """Journal the operations capture leaves unfinished (abandoned) and the listings still open
        (incomplete), flush, then report in one line how many records were lost, by kind (nothing when
        none were)."""
        try:
            self._batch += self.correlator.close()
        except Exception as exc:  # a correlator bug must not lose the batch
            self._fail(f"unfinished operations could not be recorded ({type(exc).__name__})", "calls", 1)
        catalog = self.correlator.catalog
        if catalog is not None:
            self._batch += catalog.close()
            if catalog.failed:
                self._fail(f"{catalog.failed} tool listing(s) could not be recorded", "catalogs",
                           catalog.failed)
        self.flush()
        if self.lost:
            self.warn(loss_summary(self.lost))

    def _write(self, run: list[Captured]) -> None:
        try:
            self.written += append_records(self.root, run)
            return
        except RecordTooLarge:  # refused before any byte was written: isolate the oversized record
            pass
        except MCPEvalError as exc:
            for record in run:
                self.lost[record_kind(record)] += 1
            first, last = run[0].seq, run[-1].seq
            seqs = f"record seq {first} was" if first == last else f"records seq {first}-{last} were"
            self._warn(f"{seqs} not journaled: {exc}")
            return
        for record in run:
            try:
                append_record(self.root, record)
                self.written += 1
            except MCPEvalError as exc:
                self._fail(f"record seq {record.seq} was not journaled: {exc}", record_kind(record), 1)

    def _correlate(self, direction: str, data: bytes | None, scope: str, read_ms: int, hot_ns: int,
                   glimpse: Glimpse | None, http: HttpFacts | None) -> list[Captured]:
        corr = self.correlator
        if direction == "end":
            return list(corr.end_scope(scope, now_ms=read_ms))
        t0 = time.perf_counter_ns()
        if glimpse is not None:
            overhead = (hot_ns + time.perf_counter_ns() - t0) // 1000
            return [corr.oversized(direction, glimpse, scope=scope, overhead_us=overhead, now_ms=read_ms)]
        msg = None if data is None else classify_frame(data)
        t1 = time.perf_counter_ns()
        records: list[Captured] = list(corr.observe(direction, msg, scope=scope,
                                                    overhead_us=(hot_ns + t1 - t0) // 1000, now_ms=read_ms,
                                                    http=http))
        last = records[-1] if records else None
        if isinstance(last, CallRecord) and last.latency_ms is not None:  # a matched response: add build time
            build_us = (time.perf_counter_ns() - t1) // 1000
            records[-1] = dataclasses.replace(last, shim_self_us=last.shim_self_us + build_us)
        if corr.catalog is not None:  # a listing this frame completed (after its call record)
            records += corr.catalog.drain()
        return records

    def _fail(self, message: str, kind: str, count: int) -> None:
        self.lost[kind] += count
        self._warn(message)

    def _warn(self, message: str) -> None:
        self._warnings += 1
        if self._warnings <= _MAX_WARNINGS:
            self.warn(message)
