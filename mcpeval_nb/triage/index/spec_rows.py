"""SPEC 12.1's ``calls`` rows of a batch of calls, from Arrow: the text table the reference tool reads.

Filling ``calls`` with SQL from the compact rows (SQLite's ``strftime`` and four look-ups per row) took a
third of a full build, so ``calls`` is written from the loader's batch itself, its compact columns with it
(by the bulk writer in a full build, by ``executemany`` in a refresh): the label, session and argument texts
are the batch's dictionary columns as they are (the driver writes their text), the error code's JSON
text is spelled once per distinct code, and ``ts`` is formatted here with numpy, digit by digit, exactly
as SQLite's ``strftime('%Y-%m-%dT%H:%M:%fZ', ts_ms / 1000.0, 'unixepoch')`` spells it (``SPEC_TS``;
years 0001 to 9999: a time outside them, if the loader ever yields one, is spelled by SQLite itself).
``tests/test_triage_reference_db.py`` checks ``spec_ts`` against SQLite and every column against the store.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...privacy.errorinfo import code_json
from .database import NULL_TS, SPEC_TS
from .encode import Encoded

__all__ = ["CALLS_COLUMNS", "INSERT_CALLS", "SPEC_CALLS_COLUMNS", "spec_calls_batch", "spec_errors",
           "spec_ts"]

#: ``calls``' columns in SPEC 12.1's order (a batch's dictionary columns are written as their text).
SPEC_CALLS_COLUMNS = ("id", "capture_id", "event_id", "ts", "session", "seq", "server", "method", "tool",
                      "latency_ms", "outcome", "err_code", "err_template", "err_template_id", "err_retryable",
                      "args", "kind")
#: Every column of a ``calls`` row: SPEC's, then the compact ones (``database.py``).
CALLS_COLUMNS = (*SPEC_CALLS_COLUMNS, "ts_ms", "session_code", "labels_code", "args_code")
#: A refresh's ``executemany`` of the same rows (a thousand calls: no bulk writer).
INSERT_CALLS = (f"INSERT INTO calls ({', '.join(CALLS_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(CALLS_COLUMNS))})")
#: 0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: the times spelled here.
_FIRST_MS, _LAST_MS = -62_135_596_800_000, 253_402_300_799_999
#: "00" to "99" and "000" to "999" as bytes: a field's digits are one table look-up per row.
_TWO = np.frombuffer("".join(f"{i:02d}" for i in range(100)).encode(), dtype=np.uint8).reshape(100, 2)
_THREE = np.frombuffer("".join(f"{i:03d}" for i in range(1000)).encode(), dtype=np.uint8).reshape(1000, 3)
_WIDTH = len("0000-00-00T00:00:00.000Z")


def spec_ts(ms: np.ndarray) -> pa.Array:
    """``calls.ts`` of these times (milliseconds since the epoch, ``NULL_TS`` for none): RFC 3339 UTC
    with milliseconds, ``unknown`` for none, as ``SPEC_TS`` spells them."""
    clipped = np.clip(ms, _FIRST_MS, _LAST_MS)
    days, rest = np.divmod(clipped, 86_400_000)
    out = np.empty((len(ms), _WIDTH), dtype=np.uint8)
    out[:, :10] = _dates(days)
    hour, rest = np.divmod(rest, 3_600_000)
    minute, rest = np.divmod(rest, 60_000)
    second, milli = np.divmod(rest, 1000)
    for first, table, value in ((11, _TWO, hour), (14, _TWO, minute), (17, _TWO, second),
                                (20, _THREE, milli)):
        out[:, first:first + table.shape[1]] = table[value]
    for at, char in ((10, "T"), (13, ":"), (16, ":"), (19, "."), (23, "Z")):
        out[:, at] = ord(char)
    offsets = np.arange(0, out.size + 1, _WIDTH, dtype=np.int32)
    texts = pa.Array.from_buffers(pa.string(), len(ms), [None, pa.py_buffer(offsets), pa.py_buffer(out)])
    other = clipped != ms
    if not other.any():
        return texts
    rows = np.flatnonzero(other)
    return pc.replace_with_mask(texts, pa.array(other), pa.array(_sqlite_ts(ms[rows].tolist()), pa.string()))


def _dates(days: np.ndarray) -> np.ndarray:
    """``YYYY-MM-DD`` bytes of days since 1970-01-01, through a table of the days the rows span (a
    batch spans a few), or day by day when they are spread wider."""
    if len(days) == 0:
        return np.empty((0, 10), dtype=np.uint8)
    first = int(days.min())
    span = int(days.max()) - first + 1
    if span > len(days) + 1024:
        return _spelled_dates(days)
    table = _spelled_dates(np.arange(first, first + span, dtype=np.int64))
    dates: np.ndarray = table[days - first]
    return dates


def _spelled_dates(days: np.ndarray) -> np.ndarray:
    year, month, day = _civil(days)
    out = np.empty((len(days), 10), dtype=np.uint8)
    for first, value in ((0, year // 100), (2, year % 100), (5, month), (8, day)):
        out[:, first:first + 2] = _TWO[value]
    out[:, 4] = out[:, 7] = ord("-")
    return out


def _civil(days: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Proleptic Gregorian (year, month, day) of days since 1970-01-01 (H. Hinnant's civil_from_days)."""
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = np.where(mp < 10, mp + 3, mp - 9)
    return yoe + era * 400 + (month <= 2), month, day


def _sqlite_ts(values: list[int]) -> list[str | None]:
    """SQLite's own spelling of times outside years 0001-9999 (``unknown`` for none): ``SPEC_TS`` itself."""
    db = sqlite3.connect(":memory:")
    try:
        query = f"SELECT CASE WHEN ?1 = {NULL_TS} THEN 'unknown' ELSE {SPEC_TS.format('?1')} END"
        return [db.execute(query, (v,)).fetchone()[0] for v in values]
    finally:
        db.close()


def spec_calls_batch(batch: pa.RecordBatch, enc: Encoded, ids: np.ndarray) -> pa.RecordBatch:
    """The ``calls`` rows of one loader batch (``CALLS_SCHEMA``) encoded as ``enc`` with call ids ``ids``:
    ``CALLS_COLUMNS``, SPEC's then the compact ones."""
    failed = batch.column("has_error")
    no_error = pc.invert(failed)

    def error(name: str, spell: bool = False) -> pa.Array:  # NULL where the call has no error row
        column = batch.column(name)
        indices = pc.if_else(no_error, pa.scalar(None, column.indices.type), column.indices)
        values = column.dictionary
        if spell:
            values = pa.array([code_json(v) for v in values.to_pylist()], pa.string())
        return pa.DictionaryArray.from_arrays(indices, values)

    retryable = pc.if_else(no_error, pa.scalar(None, pa.int64()),
                           batch.column("error_retryable").cast(pa.int64()))
    columns = [pa.array(ids, pa.int64()), enc.capture_id, enc.event, spec_ts(enc.ts), batch.column("session"),
               pa.array(enc.seq, pa.int64()), batch.column("server"), batch.column("method"),
               batch.column("tool"), pa.array(enc.latency, pa.int64(), mask=enc.latency == NULL_TS),
               batch.column("outcome"), error("error_code", spell=True), error("error_template"),
               error("error_template_id"), retryable, batch.column("args"), batch.column("kind"),
               pa.array(enc.ts, pa.int64(), mask=enc.ts == NULL_TS), pa.array(enc.session, pa.int64()),
               pa.array(enc.labels, pa.int64()), pa.array(enc.args, pa.int64())]
    return pa.RecordBatch.from_arrays(columns, names=list(CALLS_COLUMNS))


def spec_errors(spec: pa.RecordBatch, failed: pa.Array) -> pa.RecordBatch:
    """``call_errors`` rows of a ``spec_calls_batch``: its error columns where the call has an error (the
    values ``calls`` shows, by construction)."""
    rows = spec.filter(failed)
    names = ("err_code", "err_template", "err_template_id", "err_retryable")
    return pa.RecordBatch.from_arrays([rows.column("id"), *(rows.column(n) for n in names)],
                                      names=["call_id", *names])
