"""Failure windows (SPEC 12.1): the calls at offsets -5..-1 and +1..+3 around every failed call.

Calls are grouped by capture id, or for legacy records (no identity) by (session, server); within a
group they are ranked by ``seq`` then ``id``.  A legacy group in which any ``seq`` occurs twice is
skipped whole (its order is unknowable); in a capture a repeated ``seq`` is a conflict.  Everything is
one vectorised pass: sort by (group, seq, id), then for each offset compare the group at ``p`` and
``p + offset``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["AFTER", "BEFORE", "OFFSETS", "Tail", "Windows", "compute_windows", "group_keys", "rank_order"]

BEFORE, AFTER = 5, 3
OFFSETS = (*range(-BEFORE, 0), *range(1, AFTER + 1))
#: ``(id, seq, failed)`` rows of a group's last calls, oldest first.
Tail = list[tuple[int, int, int]]


@dataclass
class Windows:
    """Window rows (``failure``, ``neighbour``, ``offset``), sorted by (failure, neighbour), plus the
    legacy groups that were skipped and the capture groups whose ``seq`` repeats (conflicts)."""

    failure: np.ndarray
    neighbour: np.ndarray
    offset: np.ndarray
    skipped: np.ndarray
    conflicts: np.ndarray
    order: np.ndarray

    def tail_texts(self, key: np.ndarray, seq: np.ndarray, ids: np.ndarray,
                   failed: np.ndarray) -> tuple[np.ndarray, pa.Array]:
        """Every group's last five calls as stored (``id:seq:failed`` joined by commas, oldest first), for
        each capture and each legacy group that is not skipped: their group keys and texts, built for
        all groups at once (a store can hold a capture per call)."""
        g = key[self.order]
        ends = np.flatnonzero(np.r_[g[1:] != g[:-1], True]) + 1 if len(g) else np.zeros(0, np.int64)
        starts = np.r_[0, ends[:-1]].astype(np.int64)
        keys = g[ends - 1]
        kept = ~np.isin(keys, self.skipped)
        starts, ends, keys = starts[kept], ends[kept], keys[kept]
        first = np.maximum(starts, ends - BEFORE)
        counts = ends - first
        offsets = np.r_[0, np.cumsum(counts)].astype(np.int64)
        rows = self.order[np.repeat(first - offsets[:-1], counts) + np.arange(offsets[-1])]
        parts = [pa.array(values[rows].astype(np.int64)).cast(pa.string()) for values in (ids, seq, failed)]
        text = pc.binary_join_element_wise(*parts, ":")
        texts = pc.binary_join(pa.LargeListArray.from_arrays(pa.array(offsets, pa.int64()), text), ",")
        return keys, texts.cast(pa.string())

    def rows(self) -> list[tuple[int, int, int]]:
        """The rows as Python tuples for ``executemany``."""
        return list(zip(self.failure.tolist(), self.neighbour.tolist(), self.offset.tolist(), strict=True))

    def table(self) -> pa.Table:
        """The rows as the ``windows`` table's columns (a full build's bulk ingest)."""
        return pa.table({"failure_id": self.failure, "neighbour_id": self.neighbour, "offset": self.offset})

    def __len__(self) -> int:
        return len(self.failure)


def group_keys(capture: np.ndarray, session: np.ndarray, server: np.ndarray) -> np.ndarray:
    """One int64 key per row: the capture code (> 0), else ``-(session, server) pair`` (< 0)."""
    width = int(server.max(initial=0)) + 1
    legacy = -(session * width + server) - 1
    return np.where(capture != 0, capture, legacy)


def rank_order(key: np.ndarray, seq: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Row positions sorted by (group key, seq, id): one stable sort of a combined integer when ids
    ascend with position and the (key, seq) ranges fit in 63 bits, else ``np.lexsort``."""
    if len(key) > 1 and bool(np.all(ids[1:] > ids[:-1])):
        k0, s0 = int(key.min()), int(seq.min())
        width = int(seq.max()) - s0 + 1
        if (int(key.max()) - k0 + 1) * width < 2**63:
            order: np.ndarray = np.argsort((key - k0) * width + (seq - s0), kind="stable")
            return order
    return np.lexsort((ids, seq, key))


def compute_windows(key: np.ndarray, seq: np.ndarray, ids: np.ndarray, failed: np.ndarray) -> Windows:
    """The windows of every failed row among these rows.

    Args:
        key: group keys (``group_keys``; legacy groups are negative).
        seq: sequence numbers. ids: row ids (the tie-break after ``seq``). failed: ``outcome='error'``.

    Returns:
        The window rows, the skipped legacy group keys and the conflicting capture keys.
    """
    order = rank_order(key, seq, ids)
    g, s, i = key[order], seq[order], ids[order]
    repeated = (g[1:] == g[:-1]) & (s[1:] == s[:-1])
    bad = np.unique(g[1:][repeated])
    skipped, conflicts = bad[bad < 0], bad[bad > 0]
    usable = failed[order] & ~np.isin(g, skipped)
    positions = np.flatnonzero(usable)
    fail_parts, near_parts, off_parts = [], [], []
    for offset in OFFSETS:
        q = positions + offset
        inside = (q >= 0) & (q < len(g))
        p, q = positions[inside], q[inside]
        same = g[q] == g[p]
        fail_parts.append(i[p[same]])
        near_parts.append(i[q[same]])
        off_parts.append(np.full(int(same.sum()), offset, dtype=np.int64))
    failure = np.concatenate(fail_parts) if fail_parts else np.zeros(0, np.int64)
    neighbour = np.concatenate(near_parts) if near_parts else np.zeros(0, np.int64)
    offsets = np.concatenate(off_parts) if off_parts else np.zeros(0, np.int64)
    by = np.lexsort((neighbour, failure))
    return Windows(failure[by], neighbour[by], offsets[by], skipped, conflicts, order)
