"""Event keys, the (key, call id) order, capture tails and the rank order: their values checked against
plain Python, and event ids that share a key kept apart through full builds, refreshes and links."""

from __future__ import annotations

import random
import shutil
import sqlite3
import uuid
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import mcpeval_nb as me
from mcpeval_nb.privacy.records import Identity
from mcpeval_nb.triage.index.database import INDEX_FILE
from mcpeval_nb.triage.index.events import EventOrder, event_keys
from mcpeval_nb.triage.index.windows import BEFORE, compute_windows, rank_order

from .triage_support import canonical


def _low64(text: str) -> int:
    value = int(text.replace("-", "")[16:], 16)
    return value - 2**64 if value >= 2**63 else value


def test_an_event_key_is_the_uuids_low_64_bits_as_a_signed_integer() -> None:
    rng = random.Random(3)
    ids = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(2000)]
    column = pa.array([*ids, None, "not-a-uuid", "00000000-0000-0000-0000-000000000000"])
    keys = event_keys(column)
    assert keys.tolist() == [*map(_low64, ids), 0, 0, 0]
    assert event_keys(column.slice(7, 100)).tolist() == keys[7:107].tolist()  # an offset array
    assert event_keys(pa.chunked_array([column[:5], column[5:]])).tolist() == keys.tolist()
    assert event_keys(pa.array([], pa.string())).tolist() == []
    assert event_keys(pa.array([None, None], pa.string())).tolist() == [0, 0]


def test_the_event_order_sorts_by_key_then_id_and_finds_each_text() -> None:
    shared = ["aaaaaaaa-0000-4000-8000-00000000beef", "bbbbbbbb-0000-4000-8000-00000000beef"]  # one key
    events = pa.array(["ffffffff-0000-4000-8000-000000000001", shared[0], None, shared[1],
                       "00000000-0000-4000-8000-000000000002"])
    ids = np.array([10, 11, 12, 13, 14], dtype=np.int64)
    keys = event_keys(events)
    order = EventOrder.of(keys, np.array([True, True, False, True, True]), ids)
    assert order.keys.tolist() == sorted(keys[[0, 1, 3, 4]].tolist())
    pairs = list(zip(order.keys.tolist(), order.ids.tolist(), strict=True))
    assert pairs == sorted(pairs)
    assert [run.tolist() for run in order.repeated_keys()] == [[1, 3]]
    wanted = pa.array([shared[1], shared[0], "cccccccc-0000-4000-8000-00000000beef", None,
                       "ffffffff-0000-4000-8000-000000000001"])
    assert order.find(wanted, events).tolist() == [13, 11, -1, -1, 10]
    kept = order.without(np.array([1]), np.array([0, 2, 3, 4]))  # row 1 dropped, the rest renumbered
    assert kept.ids.tolist() == [i for i in order.ids.tolist() if i != 11]
    assert events.take(pa.array(np.array([0, 2, 3, 4])[kept.rows])).to_pylist() == \
        events.take(pa.array(order.rows[order.ids != 11])).to_pylist()


@pytest.mark.parametrize("case", ["small", "wide", "unordered ids"])
def test_rank_order_is_lexsort_order(case: str) -> None:
    rng = np.random.default_rng(7)
    n = 5000
    key = rng.integers(-50, 50, n)
    seq = rng.integers(0, 40, n)
    ids = np.arange(1, n + 1)
    if case == "wide":  # (key, seq) past 63 bits: the lexsort path
        seq = rng.integers(0, 2**62, n)
        key = rng.integers(-2**40, 2**40, n)
    if case == "unordered ids":
        ids = rng.permutation(n) + 1
    assert rank_order(key, seq, ids).tolist() == np.lexsort((ids, seq, key)).tolist()


def test_tail_texts_are_each_groups_last_five_calls() -> None:
    rng = np.random.default_rng(11)
    n = 3000
    key = rng.choice(np.r_[np.arange(1, 300), -np.arange(1, 50)], n)
    seq = np.where(key > 0, np.arange(n), np.arange(n) // 3)
    ids = np.arange(1, n + 1)
    failed = rng.random(n) < 0.2
    win = compute_windows(key, seq, ids, failed)
    keys, texts = win.tail_texts(key, seq, ids, failed)
    expected = {}
    assert len(win.skipped) and not len(win.conflicts)  # legacy groups repeating a seq have no tail
    for k in sorted(set(key.tolist()) - set(win.skipped.tolist())):
        rows = sorted((int(s), int(i), int(f)) for kk, s, i, f in zip(key, seq, ids, failed, strict=True)
                      if kk == k)[-BEFORE:]
        expected[k] = ",".join(f"{i}:{s}:{f}" for s, i, f in rows)
    assert dict(zip(keys.tolist(), texts.to_pylist(), strict=True)) == expected


def _call(seq: int, event: str, capture: str = "7f1f0c4e-2b9a-4d8e-9a51-3c2d1e0f4a5b",
          **change: object) -> me.CallRecord:
    fields: dict[str, object] = {"ts": "2026-08-04T12:00:00.000Z", "session": "s", "seq": seq, "server": "x",
                                 "method": "tools/call", "tool": "t", "outcome": "ok", "latency_ms": 3,
                                 "identity": Identity(capture, event)}
    return me.CallRecord(**{**fields, **change})  # type: ignore[arg-type]


@pytest.mark.parametrize("incremental", [False, True])
def test_event_ids_that_share_a_key_stay_two_events(root: Path, tmp_path: Path, incremental: bool) -> None:
    first, second = "1aaaaaaa-0000-4000-8000-00000000beef", "2bbbbbbb-0000-4000-8000-00000000beef"
    assert event_keys(pa.array([first]))[0] == event_keys(pa.array([second]))[0]
    me.append_record(root, _call(1, first))
    if incremental:
        assert me.build_index(root).calls == 1
    me.append_records(root, [_call(2, second), _call(2, second)])  # a replay of the second
    me.annotate("s", None, "false-success", "a note", root=root, event_id=second)
    result = me.build_index(root)
    assert (result.calls, result.replayed_events, result.full) == (2, 1, not incremental)
    db = sqlite3.connect(root / INDEX_FILE)
    linked = "SELECT c.event_id, c.seq FROM annotations a JOIN calls c ON c.id = a.call_id"
    assert db.execute(linked).fetchall() == [(second, 2)]
    assert db.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM call_events").fetchone() == (2, 1)
    db.close()
    me.append_record(root, _call(3, first, latency_ms=9))  # the first's id with other values: a conflict
    with pytest.raises(me.FindingsError, match="conflicting records for one event ID"):
        me.build_index(root)
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    (copy / INDEX_FILE).unlink()
    with pytest.raises(me.FindingsError, match="conflicting records for one event ID"):
        me.build_index(copy)


def test_a_refresh_keeps_each_captures_tail_as_a_full_build_does(root: Path, tmp_path: Path) -> None:
    captures = [f"8f1f0c4e-2b9a-4d8e-9a51-3c2d1e0f4a{i:02x}" for i in range(3)]
    calls = [_call(seq, f"8a2b3c4d-0000-4000-8000-0000000{c:02x}{seq:03x}", captures[c],
                   outcome="error" if seq % 4 == 0 else "ok")
             for c in range(3) for seq in range(1, 9)]
    me.append_records(root, calls[:12])
    me.build_index(root)
    me.append_records(root, calls[12:])
    assert not me.build_index(root).full
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    (copy / INDEX_FILE).unlink()
    me.build_index(copy)
    incremental, full = canonical(root / INDEX_FILE), canonical(copy / INDEX_FILE)
    assert incremental["captures"] == full["captures"] and len(full["captures"]) == 3
    assert incremental["windows"] == full["windows"] and incremental["events"] == full["events"]
    db = sqlite3.connect(root / INDEX_FILE)
    (session,) = db.execute("SELECT DISTINCT session FROM calls").fetchall()  # the stored (hashed) value
    assert db.execute("SELECT capture, session, server FROM index_captures ORDER BY capture").fetchall() == \
        [(c, session[0], "x") for c in captures]
    db.close()
    me.append_record(root, _call(0, "8a2b3c4d-0000-4000-8000-00000000ffff", captures[0]))  # back in sequence
    assert me.build_index(root).reason == "an appended call goes back in sequence"
