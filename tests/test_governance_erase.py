"""Erase: what it removes and keeps, the annotations that go with it, dry runs, derived data, the CLI."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

import mcpeval_nb
from mcpeval_nb import AnnotationRecord, append_records, build_index, erase, read_audit

from .governance_support import CANARY, calls, census, cli, note, seed, store_bytes, token


def test_erase_by_raw_session_removes_its_calls_and_annotations_and_keeps_the_rest(tmp_path: Path) -> None:
    seed(tmp_path, {"alpha": "a", "beta": "b", "gamma": "c"}, 50, days=("2026-08-01", "2026-08-02"))
    result = erase(tmp_path, session="beta")
    assert result.removed == {"calls": 100, "annotations": 1, "catalogs": 0}
    assert result.files == ("annotations-2026-08-02.jsonl", "calls-2026-08-01.jsonl",
                            "calls-2026-08-02.jsonl")
    left = census(tmp_path)
    assert not any(session == token("beta") for _, session, _ in left)
    assert sum(n for (kind, _, _), n in left.items() if kind == "call") == 200
    assert all(n == 1 for (kind, _, _), n in left.items() if kind == "annotation")


def test_erase_by_stored_token_is_the_same_as_by_raw_value(tmp_path: Path) -> None:
    seed(tmp_path, {"alpha": "a", "beta": "b"}, 10)
    upper = token("beta").upper().replace("SESSION:", "session:")
    assert erase(tmp_path, session=upper).removed["calls"] == 10
    assert erase(tmp_path, session="beta").removed == {"calls": 0, "annotations": 0, "catalogs": 0}


def test_erase_of_an_unknown_session_changes_no_byte(tmp_path: Path) -> None:
    seed(tmp_path, {"alpha": "a", "beta": "b"}, 30, days=("2026-08-01", "2026-08-02"))
    (tmp_path / "store" / "calls-2026-08-01.jsonl").open("ab").write(b"\n   \n")  # blank lines stay too
    before = store_bytes(tmp_path)
    result = erase(tmp_path, session="nobody")
    assert result.removed == {"calls": 0, "annotations": 0, "catalogs": 0} and result.files == ()
    assert store_bytes(tmp_path) == before
    assert not (tmp_path / ".erase-intent.json").exists() and not (tmp_path / ".erase-work").exists()


def test_dry_run_counts_and_writes_nothing(tmp_path: Path) -> None:
    seed(tmp_path, {"alpha": "a", "beta": "b"}, 20)
    before = store_bytes(tmp_path)
    result = erase(tmp_path, server="b", dry_run=True)
    assert result.removed == {"calls": 20, "annotations": 1, "catalogs": 0} and result.dry_run
    assert store_bytes(tmp_path) == before
    assert read_audit(tmp_path) == []
    assert not (tmp_path / ".erase-work").exists()


def test_erase_by_server_takes_annotations_of_its_calls_and_counts_the_unmatched(tmp_path: Path) -> None:
    seed(tmp_path, {"alpha": "a", "beta": "b"}, 5)
    # one annotation names no call, one names a (session, seq) two calls share: neither can be matched
    append_records(tmp_path, [note("alpha", 99), *calls("shared", "a", 1), *calls("shared", "b", 1),
                              note("shared", 1)])
    result = erase(tmp_path, server="b")
    assert result.removed == {"calls": 6, "annotations": 1, "catalogs": 0}
    assert result.unmatched_annotations == 2
    left = census(tmp_path)
    assert ("annotation", token("alpha"), 1) in left and ("annotation", token("beta"), 1) not in left
    assert ("annotation", token("alpha"), 99) in left and ("annotation", token("shared"), 1) in left


def test_erase_by_event_id_matches_the_annotation_of_that_call(tmp_path: Path) -> None:
    from mcpeval_nb.privacy.records import Identity

    event = "0b8f3c9e-1d2a-4e5f-9a6b-7c8d9e0f1a2b"
    call = calls("s", "b", 1)[0]
    object.__setattr__(call, "identity", Identity(capture_id="1b8f3c9e-1d2a-4e5f-9a6b-7c8d9e0f1a2b",
                                                  event_id=event))
    append_records(tmp_path, [call, AnnotationRecord(ts="2026-08-02T00:00:00.000Z", session="other",
                                                     kind="workaround", note=CANARY, event_id=event)])
    result = erase(tmp_path, server="b")
    assert result.removed == {"calls": 1, "annotations": 1, "catalogs": 0}
    assert result.unmatched_annotations == 0


def test_before_limits_the_erase_to_earlier_days(tmp_path: Path) -> None:
    seed(tmp_path, {"alpha": "a"}, 10, days=("2026-08-01", "2026-08-02", "2026-08-03"))
    result = erase(tmp_path, session="alpha", before="2026-08-02")
    assert result.removed == {"calls": 10, "annotations": 0, "catalogs": 0}
    assert result.files == ("calls-2026-08-01.jsonl",)


def test_usage_errors_are_exit_2_and_name_no_value(tmp_path: Path) -> None:
    seed(tmp_path, {"alpha": "a"}, 1)
    for argv in (["erase"], ["erase", "--session", "x", "--server", "a"], ["erase", "--server", "bad label"],
                 ["erase", "--session", "x", "--before", "yesterday"], ["retention", "--days", "0"]):
        done = cli(*argv, "--root", str(tmp_path))
        assert done.returncode == 2, (argv, done.stderr)
        assert done.stderr.startswith("mcpeval-nb: ") and "Traceback" not in done.stderr


def test_index_notices_an_erase_and_rebuilds(tmp_path: Path) -> None:
    seed(tmp_path, {"alpha": "a", "beta": "b"}, 40)
    assert build_index(tmp_path).calls == 80
    erase(tmp_path, session="alpha")
    again = build_index(tmp_path)
    assert again.calls == 40 and again.full and again.reason == "a journal was rewritten"
    import sqlite3

    with sqlite3.connect(tmp_path / "index.db") as db:
        rows = db.execute("SELECT COUNT(*) FROM calls WHERE session = ?", (token("alpha"),)).fetchone()
    assert rows == (0,)


def test_an_erase_that_fails_part_way_names_the_journals_done(tmp_path: Path) -> None:
    seed(tmp_path, {"alpha": "a", "beta": "b"}, 10, days=("2026-08-01", "2026-08-02"))
    second = tmp_path / "store" / "calls-2026-08-02.jsonl"
    fd = os.open(second, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a writer that never lets go
    try:
        with pytest.raises(mcpeval_nb.EraseIncomplete) as caught:
            erase(tmp_path, session="alpha", timeout=0.3)
    finally:
        os.close(fd)
    assert caught.value.done == ("annotations-2026-08-02.jsonl", "calls-2026-08-01.jsonl")
    assert caught.value.failed == "calls-2026-08-02.jsonl"
    assert "calls-2026-08-02.jsonl" in str(caught.value) and CANARY not in str(caught.value)
    assert read_audit(tmp_path)[-1]["outcome"] == "failed"
    assert any(s == token("alpha") for _, s, _ in census(tmp_path))
    assert mcpeval_nb.recover(tmp_path)  # the next command finishes the erase it left in its intent
    assert not any(s == token("alpha") for _, s, _ in census(tmp_path))
    assert sum(census(tmp_path).values()) == 20 + 1
    assert read_audit(tmp_path)[-1]["labels"] == {"phase": "recovered"}


def test_cli_erase_output_and_audit_carry_no_content(tmp_path: Path) -> None:
    seed(tmp_path, {"alpha": "a", f"{CANARY}-session": "b"}, 5)
    done = cli("erase", "--session", f"{CANARY}-session", "--root", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "removed 5 call(s) and 1 annotation(s)" in done.stdout
    audit = (tmp_path / "audit.jsonl").read_text()
    for text in (done.stdout, done.stderr, audit, cli("audit", "--root", str(tmp_path)).stdout,
                 cli("audit", "--format", "json", "--root", str(tmp_path)).stdout):
        assert CANARY not in text
    assert token(f"{CANARY}-session") in audit


def _sessions(dataset: Path) -> set[str]:
    import pyarrow.dataset as pads

    table = pads.dataset(dataset, format="parquet", partitioning="hive").to_table(columns=["session"])
    return set(table.column("session").to_pylist())


def test_the_parquet_exports_follow_an_erase(tmp_path: Path) -> None:
    """An export elsewhere rewrites what the erase changed on its next run (its checkpoint sees the
    rewritten journal); the engines' own dataset inside the root is dropped at once."""
    root = tmp_path / "root"
    seed(root, {"alpha": "a", "beta": "b"}, 40, days=("2026-08-01", "2026-08-02"))
    dest = tmp_path / "pq"
    mcpeval_nb.open_store(root).to_parquet(dest)
    mcpeval_nb.duckdb_engine(root).latency_summary()  # writes <root>/calls.parquet
    assert (root / "calls.parquet").is_dir() and token("alpha") in _sessions(root / "calls.parquet")
    erase(root, session="alpha")
    assert not (root / "calls.parquet").exists()
    mcpeval_nb.open_store(root).to_parquet(dest)
    assert _sessions(dest) == {token("beta")}
    mcpeval_nb.duckdb_engine(root).latency_summary()
    assert _sessions(root / "calls.parquet") == {token("beta")}


def test_erase_removes_records_stored_with_a_raw_session_value(tmp_path: Path) -> None:
    """Older or foreign journals store the raw session value; every reader hashes it, so the tables
    attribute those records to the session, and erase must remove them too (it printed "removed 0" and
    left the raw value on disk: the token was the only needle it looked for)."""
    seed(tmp_path, {"keep-me": "a"}, 2)
    store = tmp_path / "store"
    raw = [b'{"ts":"2026-08-01T12:00:00.000Z","session":"raw-sess-7f3","seq":%d,"server":"a",'
           b'"method":"tools/call","tool":"t","outcome":"ok","shim_self_us":0,"kind":"real"}\n' % i
           for i in (1, 2, 3)]
    with (store / "calls-2026-08-01.jsonl").open("ab") as fh:
        fh.writelines(raw)
    (store / "annotations-2026-08-03.jsonl").write_bytes(
        b'{"ts":"2026-08-03T12:00:00.000Z","session":"raw-sess-7f3","seq":2,"kind":"workaround","note":"n"}\n')
    assert sum(r == token("raw-sess-7f3") for r in
               mcpeval_nb.open_store(tmp_path).calls.column("session").to_pylist()) == 3
    done = cli("erase", "--session", "raw-sess-7f3", "--root", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "3 call(s)" in done.stdout and "1 annotation(s)" in done.stdout, done.stdout
    on_disk = b"".join(p.read_bytes() for p in store.glob("*.jsonl"))
    assert b"raw-sess-7f3" not in on_disk
    sessions = mcpeval_nb.open_store(tmp_path).calls.column("session").to_pylist()
    assert token("raw-sess-7f3") not in sessions and sessions.count(token("keep-me")) == 2
