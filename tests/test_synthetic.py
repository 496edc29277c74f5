"""Synthetic and canary stores: deterministic, valid through the real reader, markers never leak."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpeval_nb import UsageError, open_store, outcome_rates
from mcpeval_nb.journal.read import _read_raw_records
from mcpeval_nb.testing import canary_store, synthetic_store


def _bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / "store").rglob("*.jsonl"))}


def test_synthetic_store_is_deterministic_and_valid(tmp_path: Path) -> None:
    a = synthetic_store(tmp_path / "a", calls=400, servers=3, tools=4, days=2, error_rate=0.2, seed=7)
    b = synthetic_store(tmp_path / "b", calls=400, servers=3, tools=4, days=2, error_rate=0.2, seed=7)
    assert _bytes(a.root) == _bytes(b.root)
    assert _bytes(a.root) != _bytes(synthetic_store(tmp_path / "c", calls=400, seed=8).root)
    for path in (a.root / "store").rglob("*.jsonl"):
        entries = list(_read_raw_records(path))
        assert all(e.record == e.record.sanitized() for e in entries)  # the writer stored sanitised records
    store = open_store(a.root)
    assert store.calls.num_rows == 400 and store.annotations.num_rows == a.annotations > 0
    assert store.trends.num_rows == a.trends == 3 * 2
    assert set(store.calls.column("server").to_pylist()) == {"server-0", "server-1", "server-2"}


def test_synthetic_error_rate_is_roughly_the_requested_one(tmp_path: Path) -> None:
    synthetic_store(tmp_path, calls=3000, days=1, error_rate=0.25, seed=1)
    rates = outcome_rates(open_store(tmp_path).calls, by=("method",)).to_pylist()
    call_row = next(r for r in rates if r["method"] == "tools/call")
    assert call_row["error_low"] <= 0.25 <= call_row["error_high"]


def test_synthetic_store_refuses_nonsense_sizes(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        synthetic_store(tmp_path, calls=10, servers=0)


def test_canary_markers_never_reach_tables_or_the_load_report(tmp_path: Path) -> None:
    canary = canary_store(tmp_path)
    store = open_store(tmp_path, errors="report")
    text = "".join(repr(t.to_pylist()) for t in (store.calls, store.annotations, store.trends, store.report))
    assert store.calls.num_rows == 7 and store.report.num_rows == 5
    assert len(canary.markers) > 20
    assert [m for m in canary.markers if m in text] == []
    assert {r["reason"] for r in store.report.to_pylist()} <= {"invalid journal record",
                                                                 "unsupported measurement profile"}


def test_canary_store_without_invalid_lines_loads_in_raise_mode(tmp_path: Path) -> None:
    canary = canary_store(tmp_path, invalid_lines=False)
    store = open_store(tmp_path, errors="raise")
    text = "".join(repr(t.to_pylist()) for t in (store.calls, store.trends, store.annotations))
    assert store.calls.num_rows == 7 and not [m for m in canary.markers if m in text]


def test_an_all_identity_store_gives_every_call_an_event_and_each_session_one_capture(tmp_path: Path) -> None:
    import mcpeval_nb as me

    before = _bytes(synthetic_store(tmp_path / "some", calls=600, servers=2, seed=4).root)
    assert before == _bytes(synthetic_store(tmp_path / "some-again", calls=600, servers=2, seed=4,
                                            identities="some").root)  # the default is unchanged
    synthetic_store(tmp_path / "all", calls=600, servers=2, seed=4, identities="all")
    calls = open_store(tmp_path / "all").calls.to_pylist()
    answered = [c for c in calls if c["method"] != "notifications/message"]
    assert answered and all(c["event_id"] and c["capture_id"] for c in answered)
    assert len({c["event_id"] for c in answered}) == len(answered)
    captures: dict[str, set[tuple[str, str]]] = {}
    for c in answered:
        captures.setdefault(c["capture_id"], set()).add((c["session"], c["server"]))
    assert all(len(pairs) == 1 for pairs in captures.values())  # SPEC 2.5: one capture, one (session, server)
    assert me.build_index(tmp_path / "all").calls == 600  # no conflicts, no replays
    with pytest.raises(UsageError, match="identities"):
        synthetic_store(tmp_path / "bad", calls=10, identities="most")
