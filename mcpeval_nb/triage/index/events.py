"""Event ids as 64-bit keys: how ``index.db`` finds a call by its event id (``call_events``).

An event id is a UUID (the loader accepts no other form); its key is the UUID's low 64 bits as a signed
integer, random in version 4 and version 7 ids alike.  ``call_events(key, call_id)`` is a WITHOUT ROWID
table ordered by (key, call_id): a full build sorts the keys with numpy and writes them in that order,
which SQLite appends page by page, instead of sorting a million 36-character texts itself for a unique
index (docs/performance.md).  A key is only a bucket: every look-up compares the stored event text, so
two ids that share a key (possible in a crafted journal) stay two events.  The same sort finds the
repeated event ids of a full build (replays, or conflicts) without hashing every id.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["EventOrder", "event_calls", "event_keys"]

_UUID_LEN = 36
#: the last 16 hex digits of ``xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx``
_LOW_DIGITS = np.array([19, 20, 21, 22, *range(24, 36)], dtype=np.int64)
_HEX = np.zeros(256, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789abcdef"):
    _HEX[_c] = _i
for _i, _c in enumerate(b"ABCDEF", start=10):
    _HEX[_c] = _i
_CHUNK = 500  # bound parameters per look-up statement


def event_keys(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The key of every value of a string column (int64; 0 for a null or a value that is not 36
    characters long: such a value still matches only its own text)."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if not pa.types.is_string(arr.type):
        arr = arr.cast(pa.string())
    keys = np.zeros(len(arr), dtype=np.int64)
    data_buffer = arr.buffers()[2]
    if len(arr) == 0 or arr.null_count == len(arr) or data_buffer is None:
        return keys
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=len(arr) + 1, offset=arr.offset * 4)
    data = np.frombuffer(data_buffer, dtype=np.uint8)
    valid = pc.is_valid(arr).to_numpy(zero_copy_only=False)
    rows = np.flatnonzero(valid & (np.diff(offsets) == _UUID_LEN))
    nibbles = _HEX[data[offsets[rows].astype(np.int64)[:, None] + _LOW_DIGITS]]  # (rows, 16)
    packed = (nibbles[:, 0::2] << 4) | nibbles[:, 1::2]  # (rows, 8) bytes, most significant first
    keys[rows] = np.ascontiguousarray(packed).view(">u8").reshape(-1).astype(np.uint64).view(np.int64)
    return keys


@dataclass(frozen=True)
class EventOrder:
    """A full build's calls that carry an event id, sorted by (key, call id).

    Attributes:
        keys: their keys, ascending. ids: their call ids. rows: their positions among the build's rows.
    """

    keys: np.ndarray
    ids: np.ndarray
    rows: np.ndarray

    @staticmethod
    def of(keys: np.ndarray, has_event: np.ndarray, ids: np.ndarray) -> EventOrder:
        """Sort the rows that have an event (a stable sort: equal keys stay in id order)."""
        rows = np.flatnonzero(has_event)
        rows = rows[np.argsort(keys[rows], kind="stable")]
        return EventOrder(keys[rows], ids[rows], rows)

    def repeated_keys(self) -> list[np.ndarray]:
        """The runs of rows (positions, in id order) that share one key: the only candidates for a
        repeated event id."""
        if len(self.keys) < 2:
            return []
        same = self.keys[1:] == self.keys[:-1]
        if not same.any():
            return []
        starts = np.flatnonzero(np.r_[True, ~same])
        ends = np.r_[starts[1:], len(self.keys)]
        return [self.rows[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True) if e - s > 1]

    def without(self, drop: np.ndarray, keep: np.ndarray) -> EventOrder:
        """The order once the rows at positions ``drop`` are removed and the rest renumbered to their
        index in ``keep`` (the sorted positions kept)."""
        if len(drop) == 0:
            return self
        kept = ~np.isin(self.rows, drop)
        return EventOrder(self.keys[kept], self.ids[kept], np.searchsorted(keep, self.rows[kept]))

    def table(self) -> pa.Table:
        """``call_events`` rows, in their key order."""
        return pa.table({"key": pa.array(self.keys, pa.int64()), "call_id": pa.array(self.ids, pa.int64())})

    def find(self, wanted: pa.Array, events: pa.Array) -> np.ndarray:
        """The call id of each ``wanted`` event id (-1 where none or null).

        Args:
            wanted: the event ids to find. events: the build's event column (``rows`` index it).
        """
        out = np.full(len(wanted), -1, dtype=np.int64)
        keys = event_keys(wanted)
        asked = np.flatnonzero(pc.is_valid(wanted).to_numpy(zero_copy_only=False))
        lo = np.searchsorted(self.keys, keys[asked], side="left")
        hi = np.searchsorted(self.keys, keys[asked], side="right")
        single = asked[hi - lo == 1]
        if len(single):
            at = lo[hi - lo == 1]
            equal = pc.equal(wanted.take(pa.array(single)), events.take(pa.array(self.rows[at])))
            hit = pc.fill_null(equal, False).to_numpy(zero_copy_only=False)
            out[single[hit]] = self.ids[at[hit]]
        for k in np.flatnonzero(hi - lo > 1).tolist():  # keys shared by two ids: compare each text
            text = wanted[int(asked[k])].as_py()
            for p in range(int(lo[k]), int(hi[k])):
                if events[int(self.rows[p])].as_py() == text:
                    out[asked[k]] = self.ids[p]
                    break
        return out


def event_calls(db: sqlite3.Connection, events: list[str]) -> dict[str, int]:
    """The indexed call of each of these event ids that has one (through ``call_events``)."""
    wanted = set(events)
    found: dict[str, int] = {}
    keys = sorted(set(event_keys(pa.array(list(wanted), pa.string())).tolist()))
    for start in range(0, len(keys), _CHUNK):
        part = keys[start:start + _CHUNK]
        marks = ", ".join("?" * len(part))
        for event, call in db.execute(
            "SELECT c.event_id, c.id FROM call_events ev JOIN calls c ON c.id = ev.call_id "
            f"WHERE ev.key IN ({marks})", part,
        ):
            if event in wanted:
                found[event] = call
    return found
