"""Reading journal suffixes into an index being written: calls, replays, annotations, links, checkpoint.

Used by the full build (a fresh database) and by the incremental refresh (an existing one, in one
transaction).  Journals are read with the Arrow loader (``tables.load.load_file``) from a ``Cursor``, so
every record is re-sanitised exactly as ``open_store`` does, under the same shared-lock snapshot rule.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import Cancelled, FindingsError
from ...journal.proof import Prefix, Snapshot
from ...journal.snapshot import Cursor
from ...tables.load import Errors, LoadReport, load_file
from .bulk import Bulk
from .database import NULL_TS
from .encode import INSERT_ERRORS, Encoded, Encoder
from .events import EventOrder, event_calls
from .sources import Source
from .spec_rows import INSERT_CALLS, spec_calls_batch, spec_errors

__all__ = ["Ingest", "Progress", "ReadOptions", "annotation_rows", "rows_of", "write_sources"]

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ReadOptions:
    """How an index run reads the journals.

    Attributes:
        errors: the loader's bad-line policy (``raise`` or ``report``).
        progress: ``(done_bytes, total_bytes)`` callback. cancel: stop at the next batch.
    """

    errors: Errors = "raise"
    progress: Progress | None = None
    cancel: threading.Event | None = None


@dataclass
class Ingest:
    """One run's reading state.

    Args:
        db: the index being written. encoder: its codes. next_id: the first free call id.
        bulk: a full build's bulk writer (SPEC's ``calls`` rows and their errors are written by it batch
            by batch, the call rows once every batch is read; annotations are kept in ``notes`` to be
            linked once replays are dropped).
        options: the bad-line policy, progress and cancel. report: the loader's report of bad lines.
    """

    db: sqlite3.Connection
    encoder: Encoder
    next_id: int
    options: ReadOptions = ReadOptions()
    report: LoadReport = field(default_factory=LoadReport)
    parts: list[Encoded] = field(default_factory=list)
    ids: list[np.ndarray] = field(default_factory=list)
    bulk: Bulk | None = None
    notes: list[pa.Table] = field(default_factory=list)
    paths: list[Path] = field(default_factory=list)
    seen_events: dict[str, tuple[object, ...]] = field(default_factory=dict)
    events: EventOrder | None = None
    replayed: int = 0
    annotations: int = 0
    done: int = 0
    total: int = 0

    def _step(self, done: int) -> None:
        cancel, progress = self.options.cancel, self.options.progress
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        if progress is not None:
            progress(done, self.total)

    def read(self, source: Source, cursor: Cursor, proof: Prefix | None = None) -> Prefix | None:
        """Read ``source`` from ``cursor`` to its snapshot size and write its rows, all through one
        descriptor.

        Args:
            source: the journal. cursor: where the index stopped reading it (advanced).
            proof: what the index consumed of it before (None: nothing).

        Returns:
            The proof of what is now consumed, taken on that descriptor (``proof`` itself when nothing
            was appended); None when ``proof`` does not hold there (the journal was rewritten): nothing
            was read.
        """
        with Snapshot(source.path) as snap:
            if proof is not None and not snap.grew_from(proof):
                return None
            if proof is not None and snap.size == proof.offset:
                return proof  # proven and nothing appended: nothing to read or to prove again
            before, start = self.done, cursor.offset

            def on_bytes(n: int) -> None:
                self._step(before + n)

            for batch in load_file(source.kind, snap, cursor, errors=self.options.errors, report=self.report,
                                   on_bytes=on_bytes):
                self._step(before + cursor.offset - start)
                if source.kind == "calls":
                    self._calls(batch, source.path)
                else:
                    self._annotations(batch)
            self.done = before + max(0, snap.size - start)
            return snap.prefix(cursor)

    # -- calls ----------------------------------------------------------------------------------------
    def _calls(self, batch: pa.RecordBatch, path: Path) -> None:
        enc = self.encoder.encode(batch)
        keep = None if self.encoder.fresh else self._unreplayed(enc, path)
        if keep is not None:
            enc, batch = enc.take(keep), batch.take(pa.array(keep))
        ids = np.arange(self.next_id, self.next_id + len(enc), dtype=np.int64)
        self.next_id += len(enc)
        if self.bulk is not None:
            self._bulk_calls(self.bulk, batch, enc, ids)
        else:
            spec = spec_calls_batch(batch, enc, ids)  # the rows a full build's bulk writer appends
            self.db.executemany(INSERT_CALLS, rows_of(spec))
            self.db.executemany(INSERT_ERRORS, rows_of(spec_errors(spec, batch.column("has_error"))))
            event = np.flatnonzero(enc.has_event)
            self.db.executemany("INSERT INTO call_events (key, call_id) VALUES (?, ?)",
                                zip(enc.event_key[event].tolist(), ids[event].tolist(), strict=True))
        self.parts.append(enc)
        self.ids.append(ids)
        self.paths.append(path)

    def _bulk_calls(self, bulk: Bulk, batch: pa.RecordBatch, enc: Encoded, ids: np.ndarray) -> None:
        """A full build's batch: its ``calls`` rows, the strings and labels they name and their error rows,
        written by the bulk thread while this one reads on (replays are deleted from both tables once
        every batch is read)."""
        spec = spec_calls_batch(batch, enc, ids)
        bulk.append("calls", spec)
        self.bulk_strings()
        bulk.ingest("call_errors", pa.Table.from_batches([spec_errors(spec, batch.column("has_error"))]))

    def bulk_strings(self) -> None:
        """Queue the strings and labels assigned since the last call (``strings``, ``call_labels``)."""
        assert self.bulk is not None
        for table, rows in zip(("strings", "call_labels"), self.encoder.new_tables(), strict=True):
            self.bulk.ingest(table, rows)

    def _unreplayed(self, enc: Encoded, path: Path) -> np.ndarray | None:
        """Rows to keep when refreshing: a record whose event id is indexed (or seen earlier in this run)
        with the same stored values is a replay (dropped and counted); with other values a conflict."""
        rows = np.flatnonzero(enc.has_event)
        if len(rows) == 0:
            return None
        texts: list[str] = enc.event.take(pa.array(rows)).to_pylist()
        stored = stored_values(self.db, sorted(set(texts)))
        errors = {i: tuple(rest) for i, *rest in enc.errors}
        drop = []
        for i, text in zip(rows.tolist(), texts, strict=True):
            values = _values(enc, i, errors.get(i))
            first = self.seen_events.get(text) or stored.get(text)
            if first is None:
                self.seen_events[text] = values
            elif first == values:
                drop.append(i)
            else:
                raise FindingsError(f"conflicting records for one event ID in {path}")
        if not drop:
            return None
        self.replayed += len(drop)
        return np.setdiff1d(np.arange(len(enc)), np.array(drop, dtype=np.int64))

    def drop_replays(self) -> list[int]:
        """After a full build's reads: drop later records repeating an earlier event id with the same
        values (counted as replays); differing values are a conflict.  Sorts the event keys once
        (``events``, kept for ``call_events`` and the annotation links); the other columns are joined only
        when two rows share a key, so the bulk writer can start on ``call_events`` while ``calls()`` joins
        them.

        Returns:
            The ids of the dropped call rows (already written: the caller deletes them).

        Raises:
            FindingsError: conflicting records for one event ID (the journal is named).
        """
        order = EventOrder.of(_joined([p.event_key for p in self.parts], np.int64),
                              _joined([p.has_event for p in self.parts], bool), _joined(self.ids, np.int64))
        self.events = order
        runs = order.repeated_keys()
        if not runs:
            return []
        sizes = np.cumsum([len(p) for p in self.parts])
        enc, ids = self.calls()
        paths, self.parts, self.ids = self.paths, [enc], [ids]  # concatenated once, reused by calls()
        errors: dict[int, tuple[object, ...]] | None = None
        drop = []
        for run in runs:  # rows sharing a key: equal texts are one event id
            first: dict[str, int] = {}
            for row, text in zip(run.tolist(), enc.event.take(pa.array(run)).to_pylist(), strict=True):
                if text not in first:
                    first[text] = row
                    continue
                errors = errors if errors is not None else {i: tuple(rest) for i, *rest in enc.errors}
                earlier = first[text]
                if _values(enc, earlier, errors.get(earlier)) != _values(enc, row, errors.get(row)):
                    path = paths[int(np.searchsorted(sizes, row, side="right"))]
                    raise FindingsError(f"conflicting records for one event ID in {path}")
                drop.append(row)
        if not drop:
            return []
        dropped = np.array(sorted(drop), dtype=np.int64)
        gone: list[int] = ids[dropped].tolist()
        keep = np.setdiff1d(np.arange(len(enc)), dropped)
        self.parts, self.ids = [enc.take(keep)], [ids[keep]]
        self.events = order.without(dropped, keep)
        self.paths = [paths[-1]]
        self.replayed += len(drop)
        return gone

    def calls(self) -> tuple[Encoded, np.ndarray]:
        """Every call row written in this run and its ids."""
        return Encoded.concat(self.parts), _joined(self.ids, np.int64)

    # -- annotations ----------------------------------------------------------------------------------
    def _annotations(self, batch: pa.RecordBatch) -> None:
        notes = annotation_rows(batch)
        if self.bulk is not None:
            self.notes.append(notes)
        else:
            self.db.executemany(
                "INSERT INTO annotations (event_id, session, seq, ts, kind) VALUES (?, ?, ?, ?, ?)",
                zip(*(column.to_pylist() for column in notes.columns), strict=True),
            )
        self.annotations += batch.num_rows


def rows_of(batch: pa.RecordBatch) -> Iterable[tuple[object, ...]]:
    """A batch's rows as Python tuples for ``executemany``."""
    return zip(*(_values_of(c) for c in batch.columns), strict=True)


def _values_of(column: pa.Array) -> list[object]:
    """A column's Python values (a dictionary column decoded first: its ``to_pylist`` is ~20x slower)."""
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    return column.to_pylist()  # type: ignore[no-any-return]


def _joined(arrays: list[np.ndarray], dtype: type) -> np.ndarray:
    """These arrays as one (the array itself when there is one)."""
    if len(arrays) == 1:
        return arrays[0]
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=dtype)


def annotation_rows(batch: pa.RecordBatch) -> pa.Table:
    """An annotations batch as ``annotations`` columns: ``call_id`` and ``matches`` are linked later; the
    note is the user's prose: it stays in the journal and is never copied into index.db."""
    seq = batch.column("seq")
    if pa.types.is_unsigned_integer(seq.type):
        seq = pc.min_element_wise(seq, pa.scalar(2**63 - 1, seq.type), skip_nulls=False)
    return pa.table({
        "event_id": batch.column("event_id"),
        "session": batch.column("session"),
        "seq": seq.cast(pa.int64()),
        "ts": pc.fill_null(pc.strftime(batch.column("ts"), format="%Y-%m-%dT%H:%M:%SZ"), "unknown"),
        "kind": batch.column("kind"),
    })


def _values(enc: Encoded, i: int, error: tuple[object, ...] | None) -> tuple[object, ...]:
    """A row's stored values in comparison order (replay detection)."""
    return (
        enc.capture_id[i].as_py(),
        int(enc.ts[i]),
        int(enc.session[i]),
        int(enc.seq[i]),
        int(enc.labels[i]),
        int(enc.latency[i]),
        int(enc.args[i]),
        error,
    )


def stored_values(db: sqlite3.Connection, events: list[str]) -> dict[str, tuple[object, ...]]:
    """The stored values of the indexed calls with these event ids, in ``_values`` order."""
    calls = event_calls(db, events)
    event_of = {call: event for event, call in calls.items()}
    ids = sorted(event_of)
    found: dict[str, tuple[object, ...]] = {}
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ", ".join("?" * len(part))
        for row in db.execute(
            "SELECT c.id, c.capture_id, c.ts_ms, c.session_code, c.seq, c.labels_code, c.latency_ms, "
            "c.args_code, e.call_id, e.err_code, e.err_template, e.err_template_id, e.err_retryable "
            f"FROM calls c LEFT JOIN call_errors e ON e.call_id = c.id WHERE c.id IN ({marks})",
            part,
        ):
            call, capture, ts, session, seq, labels, latency, args, has_error, *err = row
            found[event_of[call]] = (
                capture,
                NULL_TS if ts is None else ts,
                session,
                seq,
                labels,
                NULL_TS if latency is None else latency,
                args,
                None if has_error is None else tuple(err),
            )
    return found


def write_sources(db: sqlite3.Connection, done: list[tuple[Source, Cursor, Prefix]]) -> None:
    """Record each read journal's consumed prefix: offset, proof (``Prefix.to_text``) and next line."""
    db.executemany(
        "INSERT INTO index_sources (path, offset, digest, next_line, kind) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(path) DO UPDATE SET offset = excluded.offset, digest = excluded.digest, "
        "next_line = excluded.next_line",
        [(str(s.path), c.offset, p.to_text(), c.next_line, s.kind) for s, c, p in done],
    )
