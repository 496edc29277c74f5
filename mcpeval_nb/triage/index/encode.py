"""Arrow call batches -> the integer codes of ``index.db`` (``calls``' compact columns, ``call_labels``,
``strings``).

A session or argument shape is stored once and becomes a code into ``strings``, a (server, method, tool,
outcome, kind) combination a code into ``call_labels``.  Codes are computed per distinct value of a
batch's dictionary columns and spread to the rows with numpy, so a batch of 30,000 calls costs a few
hundred dictionary look-ups, not 30,000 × 10.  Capture and event ids are kept as texts once, in SPEC's
``calls`` (a capture id is numbered per run for grouping; an event id also gets a 64-bit key,
``events.py``).  The
values come from the loader's tables, which re-sanitised every record (SPEC 2.2).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import FindingsError
from ...privacy.errorinfo import code_json
from .database import NULL_TS
from .events import event_keys

__all__ = ["INSERT_ERRORS", "Encoded", "Encoder", "LabelRow", "check_captures", "label_counts"]

_I64_MAX = 2**63 - 1
LabelRow = tuple[str, str, str | None, str, str]
#: ``(row index, err_code, err_template, err_template_id, err_retryable)``
ErrorRow = tuple[int, str | None, str | None, str | None, int | None]


@dataclass
class Encoded:
    """One batch as integer columns (numpy int64), its identity texts, and its error rows.

    ``capture_id``/``event`` are the identity UUIDs (string arrays, null for legacy records); ``capture``
    numbers the capture ids of one run (0 for a legacy record: ``Encoder.capture_ids`` names them);
    ``has_event`` marks the rows with an event id and ``event_key`` its key (``events.event_keys``);
    ``failed`` marks ``outcome = 'error'``; ``server`` is the label's server code (for legacy groups);
    ``errors`` holds ``(row index, err_code, err_template, err_template_id, err_retryable)``.
    """

    capture_id: pa.Array | pa.ChunkedArray
    event: pa.Array | pa.ChunkedArray
    capture: np.ndarray
    ts: np.ndarray
    session: np.ndarray
    seq: np.ndarray
    labels: np.ndarray
    latency: np.ndarray
    args: np.ndarray
    failed: np.ndarray
    server: np.ndarray
    has_event: np.ndarray
    event_key: np.ndarray
    errors: list[ErrorRow]

    def __len__(self) -> int:
        return len(self.seq)

    def take(self, keep: np.ndarray) -> Encoded:
        """The rows at positions ``keep`` (sorted), error rows renumbered."""
        where = {int(old): new for new, old in enumerate(keep.tolist())}
        errors = [(where[i], *rest) for i, *rest in self.errors if i in where]
        index = pa.array(keep, pa.int64())
        cols: dict[str, object] = {name: getattr(self, name)[keep] for name in _COLUMNS}
        texts = {name: getattr(self, name).take(index) for name in ("capture_id", "event")}
        return Encoded(**texts, errors=errors, **cols)  # type: ignore[arg-type]

    @staticmethod
    def concat(parts: list[Encoded]) -> Encoded:
        """All parts as one (error rows renumbered)."""
        if len(parts) == 1:
            return parts[0]
        errors: list[ErrorRow] = []
        base = 0
        for part in parts:
            errors += [(i + base, c, t, tid, r) for i, c, t, tid, r in part.errors]
            base += len(part)
        cols = {
            name: np.concatenate([getattr(p, name) for p in parts])
            if parts
            else np.zeros(0, dtype=bool if name in _FLAGS else np.int64)
            for name in _COLUMNS
        }
        texts = {name: pa.chunked_array([getattr(p, name) for p in parts], pa.string())  # taken from by
                 for name in ("capture_id", "event")}                                   # rows: not copied
        return Encoded(**texts, **cols, errors=errors)


_COLUMNS = ("capture", "ts", "session", "seq", "labels", "latency", "args", "failed", "server", "has_event",
            "event_key")
_FLAGS = ("failed", "has_event")


class Encoder:
    """Assigns codes to strings and label combinations, for a fresh database or an existing one.

    Args:
        db: the index being written.
        fresh: True for a new database (nothing to look up); False reads existing codes on demand.
    """

    def __init__(self, db: sqlite3.Connection, *, fresh: bool) -> None:
        self.db, self.fresh = db, fresh
        self.strings: dict[str, int] = {}
        self.captures: dict[str, int] = {}  # this run's capture numbers (not stored: calls keeps the ids)
        self.capture_ids: list[str] = []
        self.known: set[int] = set()  # codes that existed before this run
        self.new_strings: list[tuple[int, str]] = []
        self.next_string = 1 if fresh else (db.execute("SELECT MAX(id) FROM strings").fetchone()[0] or 0) + 1
        self.labels: dict[LabelRow, int] = {}
        self.label_server: dict[int, int] = {}
        self.servers: dict[str, int] = {}
        self.new_labels: list[tuple[int, *LabelRow]] = []
        if not fresh:
            for code, *row in db.execute("SELECT id, server, method, tool, outcome, kind FROM call_labels"):
                self._remember_label(code, (row[0], row[1], row[2], row[3], row[4]))

    def code(self, value: str) -> int:
        """The code of a text value (assigned on first sight)."""
        found = self.strings.get(value)
        if found is not None:
            return found
        row = (
            None
            if self.fresh
            else self.db.execute("SELECT id FROM strings WHERE value = ?", (value,)).fetchone()
        )
        if row is not None:
            found = int(row[0])
            self.known.add(found)
        else:
            found = self.next_string
            self.next_string += 1
            self.new_strings.append((found, value))
        self.strings[value] = found
        return found

    def _remember_label(self, code: int, row: LabelRow) -> None:
        self.labels[row] = code
        self.label_server[code] = self.servers.setdefault(row[0], len(self.servers))

    def label(self, row: LabelRow) -> int:
        """The code of a label combination (assigned on first sight)."""
        found = self.labels.get(row)
        if found is None:
            found = len(self.labels) + 1
            self._remember_label(found, row)
            self.new_labels.append((found, *row))
        return found

    def new_tables(self) -> tuple[pa.Table, pa.Table]:
        """The strings and labels assigned since the last flush, as ``strings`` and ``call_labels`` rows
        (a full build's bulk ingest), and forget them like ``flush``."""
        strings = pa.table({"id": pa.array([i for i, _ in self.new_strings], pa.int64()),
                            "value": pa.array([v for _, v in self.new_strings], pa.string())})
        columns = list(zip(*self.new_labels, strict=True)) if self.new_labels else [()] * 6
        labels = pa.table({name: pa.array(values, pa.int64() if name == "id" else pa.string())
                           for name, values in zip(("id", "server", "method", "tool", "outcome", "kind"),
                                                   columns, strict=True)})
        self.new_strings, self.new_labels = [], []
        return strings, labels

    def flush(self) -> None:
        """Write the strings and labels assigned since the last flush."""
        self.db.executemany("INSERT INTO strings (id, value) VALUES (?, ?)", self.new_strings)
        self.db.executemany(
            "INSERT INTO call_labels (id, server, method, tool, outcome, kind) VALUES (?, ?, ?, ?, ?, ?)",
            self.new_labels,
        )
        self.new_strings, self.new_labels = [], []

    # -- batches ------------------------------------------------------------------------------------
    def capture(self, value: str) -> int:
        """This run's number of a capture id (from 1, assigned on first sight)."""
        found = self.captures.get(value)
        if found is None:
            found = self.captures[value] = len(self.captures) + 1
            self.capture_ids.append(value)
        return found

    def _codes(self, column: pa.Array, code: Callable[[str], int] | None = None) -> np.ndarray:
        """Per-row codes of a (dictionary or string) column (``code``, default ``self.code``, for each
        distinct value); 0 where null."""
        arr = column if pa.types.is_dictionary(column.type) else pc.dictionary_encode(column)
        code = code or self.code
        lut = np.zeros(len(arr.dictionary) + 1, dtype=np.int64)
        for i, value in enumerate(arr.dictionary.to_pylist(), start=1):
            lut[i] = code(value)
        codes: np.ndarray = lut[pc.fill_null(arr.indices, -1).to_numpy() + 1]
        return codes

    def _label_codes(self, batch: pa.RecordBatch) -> np.ndarray:
        parts, sizes, dicts = [], [], []
        for name in ("server", "method", "tool", "outcome", "kind"):
            arr = batch.column(name)
            parts.append(pc.fill_null(arr.indices, -1).to_numpy().astype(np.int64) + 1)
            dicts.append([None, *arr.dictionary.to_pylist()])
            sizes.append(len(arr.dictionary) + 1)
        key = np.zeros(batch.num_rows, dtype=np.int64)
        for part, size in zip(parts, sizes, strict=True):
            key = key * size + part
        uniq, inverse = _distinct(key, int(np.prod(np.array(sizes, dtype=object))))
        lut = np.zeros(len(uniq), dtype=np.int64)
        for i, value in enumerate(uniq.tolist()):
            digits = []
            for size in reversed(sizes):
                value, digit = divmod(value, size)
                digits.append(digit)
            texts = [d[x] for d, x in zip(dicts, reversed(digits), strict=True)]
            lut[i] = self.label((texts[0], texts[1], texts[2], texts[3], texts[4]))
        codes: np.ndarray = lut[inverse]
        return codes

    def encode(self, batch: pa.RecordBatch) -> Encoded:
        """Encode one ``CALLS_SCHEMA`` batch."""
        labels = self._label_codes(batch)
        failed_labels = {c for row, c in self.labels.items() if row[3] == "error"}
        failed = np.isin(labels, np.fromiter(failed_labels, dtype=np.int64, count=len(failed_labels)))
        server_lut = np.zeros(max(self.labels.values(), default=0) + 1, dtype=np.int64)
        for code, server in self.label_server.items():
            server_lut[code] = server
        event = batch.column("event_id")
        return Encoded(
            capture_id=batch.column("capture_id"),
            capture=self._codes(batch.column("capture_id"), self.capture),
            event=event,
            ts=_ints(batch.column("ts").cast(pa.int64())),
            session=self._codes(batch.column("session")),
            seq=_ints(batch.column("seq")),
            labels=labels,
            latency=_ints(batch.column("latency_ms")),
            args=self._codes(batch.column("args")),
            failed=failed,
            server=server_lut[labels],
            has_event=pc.is_valid(event).to_numpy(zero_copy_only=False),
            event_key=event_keys(event),
            errors=_errors(batch),
        )


def _distinct(key: np.ndarray, space: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` for keys in ``[0, space)``: a table look-up when the space
    is small (a batch's label combinations), a sort otherwise."""
    if space > 4 * len(key) + 65536:
        uniq, inverse = np.unique(key, return_inverse=True)
        return uniq, inverse.reshape(-1)
    present = np.zeros(space, dtype=bool)
    present[key] = True
    uniq = np.flatnonzero(present)
    where = np.zeros(space, dtype=np.int64)
    where[uniq] = np.arange(len(uniq))
    return uniq, where[key]


def _ints(column: pa.Array) -> np.ndarray:
    """int64 values; null -> ``NULL_TS``; unsigned values past the signed range clipped to its top."""
    values = column
    if pa.types.is_unsigned_integer(column.type):
        top = pa.scalar(_I64_MAX, column.type)
        values = pc.min_element_wise(column, top, skip_nulls=False).cast(pa.int64())
    ints: np.ndarray = pc.fill_null(values, NULL_TS).to_numpy().astype(np.int64, copy=False)
    return ints


def _texts(column: pa.Array, rows: np.ndarray,
           spell: Callable[[str], str] | None = None) -> list[str | None]:
    """The values of a dictionary column at ``rows`` (one Python string per distinct value), each
    spelled by ``spell`` when given (once per distinct value, not per row)."""
    values: list[str | None] = [*column.dictionary.to_pylist(), None]
    if spell is not None:
        values = [None if v is None else spell(v) for v in values]
    idx = pc.fill_null(column.indices, -1).to_numpy()[rows]
    return [values[i] for i in idx.tolist()]


def _errors(batch: pa.RecordBatch) -> list[ErrorRow]:
    rows = np.flatnonzero(batch.column("has_error").to_numpy(zero_copy_only=False))
    if len(rows) == 0:
        return []
    codes = _texts(batch.column("error_code"), rows, code_json)  # index.db keeps the JSON (SPEC 12)
    templates, tids = (_texts(batch.column(n), rows) for n in ("error_template", "error_template_id"))
    index = pa.array(rows)
    retry = [None if r is None else int(r) for r in batch.column("error_retryable").take(index).to_pylist()]
    return list(zip(rows.tolist(), codes, templates, tids, retry, strict=True))


def check_captures(enc: Encoded) -> None:
    """Refuse a capture id that spans two (session, server) pairs (SPEC 2.5): every row of a capture
    must have the pair of one of them (the last written to a per-capture slot).

    Raises:
        FindingsError: it does.
    """
    captured = np.flatnonzero(enc.capture != 0)
    width = int(enc.server.max(initial=0)) + 1
    pair = enc.session[captured] * width + enc.server[captured]
    codes = enc.capture[captured]
    pair_of = np.zeros(int(codes.max(initial=0)) + 1, dtype=np.int64)
    pair_of[codes] = pair
    if np.any(pair_of[codes] != pair):
        raise FindingsError("one capture id spans two sessions or servers (conflicting records)")


def label_counts(labels: np.ndarray) -> pa.RecordBatch:
    """``COUNT_LABELS``' parameters for calls with these label codes: each code's number of calls, the code
    (the codes no call has are left out)."""
    counts = np.bincount(labels)
    codes = np.flatnonzero(counts)
    return pa.record_batch({"calls": pa.array(counts[codes], pa.int64()), "id": pa.array(codes, pa.int64())})


INSERT_ERRORS = (
    "INSERT INTO call_errors (call_id, err_code, err_template, err_template_id, err_retryable) "
    "VALUES (?, ?, ?, ?, ?)"
)
