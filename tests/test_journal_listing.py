"""The one listing of a store's journals and the one proof that a journal grew only by appends."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcpeval_nb import AnnotationRecord, CallRecord, JournalError, TrendPoint, append_records, open_store
from mcpeval_nb.journal.listing import journals
from mcpeval_nb.journal.proof import Prefix, Snapshot
from mcpeval_nb.journal.snapshot import Cursor
from mcpeval_nb.root.layout import calls_path
from mcpeval_nb.tables.load import LoadReport, digest_cursor, load_file


def _call(seq: int, day: str = "2026-08-01") -> CallRecord:
    return CallRecord(ts=f"{day}T12:00:00.000Z", session="s", seq=seq, server="srv", method="tools/call",
                      tool="t", outcome="ok")


def _store(root: Path) -> None:
    append_records(root, [_call(i, day) for day in ("2026-08-02", "2026-08-01") for i in range(1, 4)])
    append_records(root, [AnnotationRecord(ts="2026-08-01T12:00:00.000Z", session="s", seq=1,
                                           kind="workaround", note="n"),
                          TrendPoint(ts="2026-08-01T12:00:00.000Z", server="srv", passed=True, cases_total=1,
                                     cases_passed=1, score=90)])


def test_the_listing_is_by_kind_in_the_order_asked_then_by_name(tmp_path: Path) -> None:
    _store(tmp_path)
    assert [(j.kind, j.rel, j.day) for j in journals(tmp_path)] == [
        ("calls", "calls-2026-08-01.jsonl", "2026-08-01"),
        ("calls", "calls-2026-08-02.jsonl", "2026-08-02"),
        ("annotations", "annotations-2026-08-01.jsonl", "2026-08-01"),
        ("trends", "probes/history.jsonl", None),
    ]
    assert [j.kind for j in journals(tmp_path, ("annotations", "calls"))] == ["annotations", "calls", "calls"]
    assert journals(tmp_path / "none", "calls") == []
    with pytest.raises(ValueError, match="unknown journal kind 'x'"):
        journals(tmp_path, "x")


def test_the_plain_listing_keeps_a_symlink_for_the_open_to_refuse(tmp_path: Path) -> None:
    _store(tmp_path)
    (tmp_path / "elsewhere.jsonl").write_text("")
    os.symlink(tmp_path / "elsewhere.jsonl", calls_path(tmp_path, "2026-08-03"))
    (tmp_path / "store" / "calls-2026-08-04.jsonl").mkdir()  # a directory is no journal
    assert [j.rel for j in journals(tmp_path, "calls")][-1] == "calls-2026-08-03.jsonl"
    with pytest.raises(JournalError, match=r"cannot open journal .*calls-2026-08-03"):
        Snapshot(calls_path(tmp_path, "2026-08-03"))
    with pytest.raises(JournalError, match="erase refuses symlinks in the store"):
        journals(tmp_path, "calls", strict="erase")


def _read(path: Path) -> tuple[Prefix, Cursor]:
    cursor = digest_cursor()
    with Snapshot(path) as snap:
        list(load_file("calls", snap, cursor, errors="raise", report=LoadReport()))
        return snap.prefix(cursor), cursor


def test_the_proof_holds_across_appends_only(tmp_path: Path) -> None:
    append_records(tmp_path, [_call(i) for i in range(1, 3001)])
    path = calls_path(tmp_path, "2026-08-01")
    prefix, _ = _read(path)
    assert Prefix.from_text(prefix.to_text()) == prefix
    append_records(tmp_path, [_call(5000)])
    with Snapshot(path) as snap:
        assert snap.size > prefix.offset and snap.grew_from(prefix) and snap.grew_from(prefix, verify="full")
    data = bytearray(path.read_bytes())
    at = data.index(b'"seq":1500,')
    data[at:at + 11] = b'"seq":7500,'  # in the middle: past the first 4 KiB, before the last 64 KiB
    with open(path, "r+b") as fh:  # same file, same size
        fh.write(data)
    with Snapshot(path) as snap:
        assert snap.grew_from(prefix) and not snap.grew_from(prefix, verify="full")
    data[10:11] = b"X"  # in the first 4 KiB
    path.write_bytes(bytes(data))
    with Snapshot(path) as snap:
        assert not snap.grew_from(prefix)
    copy = path.with_suffix(".tmp")
    copy.write_bytes(path.read_bytes())
    os.replace(copy, path)  # the same bytes in another file
    with Snapshot(path) as snap:
        assert not snap.grew_from(Prefix(**{**vars(prefix), "head": snap.prefix(Cursor(prefix.offset)).head}))
    with open(path, "r+b") as fh:
        fh.truncate(prefix.offset - 1)
    with Snapshot(path) as snap:
        assert not snap.grew_from(prefix)
    assert Prefix.from_text("1:2:3") is None and Prefix.from_text("a:b:c:d:e") is None


def test_a_store_measures_its_journals_through_the_listing(tmp_path: Path) -> None:
    _store(tmp_path)
    store = open_store(tmp_path)
    assert store.journal_bytes("calls") == sum(p.stat().st_size for p in (tmp_path / "store").glob("calls-*"))
    assert store.journal_bytes("trends") == (tmp_path / "store" / "probes" / "history.jsonl").stat().st_size
