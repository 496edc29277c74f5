"""index.db: incremental equals a full rebuild, rewrites force a rebuild, concurrent writers and shims,
a killed build, replays and conflicts, and foreign or newer files."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import mcpeval_nb as me
from mcpeval_nb.testing import server_command, synthetic_store
from mcpeval_nb.triage.index.database import INDEX_FILE, VERSION

from .triage_support import append_more, canonical


def _full_copy(root: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "full-copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root / "store", copy / "store")
    if (root / ".salt").exists():
        shutil.copy(root / ".salt", copy / ".salt")
    me.build_index(copy, full=True)
    return copy / INDEX_FILE


def _store(root: Path, calls: int = 3000) -> None:
    synthetic_store(root, calls=calls, servers=2, tools=4, days=3, sessions=12, seed=5)


def _same_content(root: Path, tmp_path: Path) -> None:
    incremental = canonical(root / INDEX_FILE)
    full = canonical(_full_copy(root, tmp_path))
    full["sources"] = [
        (p.replace(str(tmp_path / "full-copy"), str(root)), *rest) for p, *rest in full["sources"]
    ]
    assert incremental == full


def test_incremental_after_appends_equals_a_full_rebuild(root: Path, tmp_path: Path) -> None:
    _store(root)
    first = me.build_index(root)
    assert first.full and first.reason == "missing"
    added = append_more(root, per_session=4)
    again = me.build_index(root)
    assert not again.full and again.added == added and again.calls == first.calls + added
    _same_content(root, tmp_path)
    assert me.build_index(root).added == 0  # nothing new: nothing read
    db = sqlite3.connect(root / INDEX_FILE)  # the appended captured calls carry no latency: NULL, no number
    assert db.execute("SELECT COUNT(*), COUNT(latency_ms) FROM calls WHERE capture_id = ?",
                      ("0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b",)).fetchone() == (5, 0)
    nulls = me.open_store(root).calls["latency_ms"].null_count
    assert db.execute("SELECT COUNT(*) FROM calls WHERE latency_ms IS NULL").fetchone() == (nulls,)


def test_incremental_after_an_annotation_links_it_like_a_full_rebuild(root: Path, tmp_path: Path) -> None:
    _store(root)
    me.build_index(root)
    calls = me.open_store(root).calls.slice(0, 40).to_pylist()
    target = next(c for c in calls if c["capture_id"] is None)
    me.annotate(target["session"], target["seq"], "false-success", "it lied", root=root)
    me.append_record(root, me.AnnotationRecord(ts="2026-08-04T12:00:00.000Z", session="never-seen-session",
                                               seq=99, kind="workaround", note="later"))  # dangling
    result = me.build_index(root)
    assert not result.full and result.annotations == 2 + 30
    _same_content(root, tmp_path)
    db = sqlite3.connect(root / INDEX_FILE)
    assert db.execute(
        "SELECT call_id IS NOT NULL FROM annotations WHERE kind = 'false-success' AND seq = ? "
        "AND session = ?",
        (target["seq"], target["session"]),
    ).fetchall()[-1] == (1,)


def test_a_refresh_links_an_older_annotation_to_the_calls_appended_later(root: Path, tmp_path: Path) -> None:
    _store(root)
    notes = [("late-session-1", 7, "false-success"), ("late-session-2", 3, "workaround"),
             ("late-session-3", 1, "blocked-optimal-path")]
    for session, seq, kind in notes:  # annotated before any call is at their coordinates
        me.append_record(root, me.AnnotationRecord(ts="2026-08-04T12:00:00.000Z", session=session, seq=seq,
                                                   kind=kind, note="before the call"))
    me.build_index(root)

    def call(session: str, seq: int) -> me.CallRecord:
        return me.CallRecord(ts="2026-08-04T13:00:00.000Z", session=session, seq=seq, server="late",
                             method="tools/call", tool="t", outcome="ok")

    # one call at the first coordinate, two at the second (ambiguous), none at the third; others around
    me.append_records(root, [call("late-session-1", 6), call("late-session-1", 7), call("late-session-1", 8),
                             call("late-session-2", 3), call("late-session-3", 2)])
    me.append_records(root, [me.CallRecord(ts="2026-08-04T13:00:01.000Z", session="late-session-2", seq=3,
                                           server="other", method="tools/call", tool="t", outcome="ok")])
    result = me.build_index(root)
    assert not result.full and result.added == 6
    _same_content(root, tmp_path)
    db = sqlite3.connect(root / INDEX_FILE)
    ours = db.execute("SELECT a.kind, c.seq, c.server, a.matches FROM annotations a LEFT JOIN calls c "
                      "ON c.id = a.call_id ORDER BY a.rowid DESC LIMIT 3").fetchall()  # ours: the last three
    assert sorted(ours) == [("blocked-optimal-path", None, None, 0), ("false-success", 7, "late", 1),
                            ("workaround", None, None, 2)]


def test_a_hand_edited_earlier_line_forces_a_full_rebuild(root: Path, tmp_path: Path) -> None:
    _store(root)
    me.build_index(root)
    journal = sorted((root / "store").glob("calls-*.jsonl"))[0]
    lines = journal.read_bytes().splitlines(keepends=True)
    record = json.loads(lines[1])
    record["latency_ms"] = record.get("latency_ms", 0) + 1
    lines[1] = json.dumps(record, separators=(",", ":")).encode() + b"\n"
    with journal.open("r+b") as handle:  # same inode, same or longer length
        handle.write(b"".join(lines))
    result = me.build_index(root)
    assert result.full and result.reason == "a journal was rewritten"
    _same_content(root, tmp_path)


def test_a_removed_journal_forces_a_full_rebuild(root: Path, tmp_path: Path) -> None:
    _store(root)
    me.build_index(root)
    sorted((root / "store").glob("calls-*.jsonl"))[-1].unlink()
    result = me.build_index(root)
    assert result.full and result.reason == "a journal was removed"
    _same_content(root, tmp_path)


def test_shims_appending_while_indexing_end_equal_to_a_full_rebuild(root: Path, tmp_path: Path) -> None:
    from mcpeval_nb.transport import McpSession

    _store(root)
    me.build_index(root)
    stop = threading.Event()
    made = []

    def drive(label: str) -> None:
        argv = [
            sys.executable,
            "-m",
            "mcpeval_nb",
            "shim",
            "--server",
            label,
            "--root",
            str(root),
            "--",
            *server_command("probe_clean", "broken"),
        ]
        with McpSession.connect(me.StdioTarget(tuple(argv)), timeout=30.0) as session:
            session.initialize(capabilities={})
            session.list_tools()
            for _ in range(40):
                session.call_tool("read_counter", {})
                session.call_tool("flaky_read", {})
                made.append(1)
                if stop.is_set():
                    break

    shims = [threading.Thread(target=drive, args=(f"shim-{i}",)) for i in range(2)]
    for t in shims:
        t.start()
    rounds, reasons = 0, set()
    deadline = time.monotonic() + 120
    while any(t.is_alive() for t in shims) and time.monotonic() < deadline:
        reasons.add(me.build_index(root).reason)
        rounds += 1
        time.sleep(0.02)
    stop.set()
    for t in shims:
        t.join(60)
    me.build_index(root)
    assert rounds > 1 and len(made) > 10 and "" in reasons, reasons
    _same_content(root, tmp_path)


def test_two_index_runs_at_once_wait_for_each_other(root: Path) -> None:
    _store(root, calls=20000)
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "mcpeval_nb", "index", "--full", "--root", str(root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    outs = [r.communicate(timeout=120) for r in runs]
    assert [r.returncode for r in runs] == [0, 0]
    assert all(o[0].decode().startswith("indexed 20000 calls") for o in outs)
    assert me.build_index(root).added == 0


def test_a_build_killed_midway_leaves_a_usable_or_rebuildable_index(root: Path, tmp_path: Path) -> None:
    _store(root, calls=60000)
    me.build_index(root)
    before = canonical(root / INDEX_FILE)
    child = subprocess.Popen(
        [sys.executable, "-m", "mcpeval_nb", "index", "--full", "--root", str(root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    # Killed once its build is under way (its temporary index exists), however long the start takes.
    while not [p for p in root.iterdir() if p.name.startswith(".index.db.tmp-")]:
        assert child.poll() is None, "the build finished before it could be killed midway"
        time.sleep(0.01)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert canonical(root / INDEX_FILE) == before  # the old index, untouched, until a complete one is renamed
    result = me.build_index(root)
    assert result.added == 0 and not [p for p in root.iterdir() if p.name.startswith(".index.db.tmp-")]


def test_a_replayed_event_is_counted_once_and_a_conflicting_one_is_refused(root: Path) -> None:
    from mcpeval_nb.privacy.records import Identity

    ident = Identity("5f1f0c4e-2b9a-4d8e-9a51-3c2d1e0f4a5b", "5a2b3c4d-0000-4000-8000-000000000001")
    record = me.CallRecord(
        ts="2026-08-04T12:00:00.000Z",
        session="s",
        seq=1,
        server="x",
        method="tools/call",
        tool="t",
        outcome="ok",
        identity=ident,
    )
    me.append_records(root, [record, record])
    result = me.build_index(root)
    assert (result.calls, result.replayed_events) == (1, 1)
    me.append_record(root, record)
    assert me.build_index(root).replayed_events == 2
    me.append_record(root, me.CallRecord(**{**record.__dict__, "latency_ms": 7}))
    with pytest.raises(me.FindingsError, match="conflicting records for one event ID"):
        me.build_index(root)
    with pytest.raises(me.FindingsError, match=r"conflicting records for one event ID in .*calls-2026-08-04"):
        me.build_index(root, full=True)


@pytest.mark.parametrize(("change", "message"), [
    ({"server": "y"}, "one capture id spans two sessions or servers"),
    ({"session": "other"}, "one capture id spans two sessions or servers"),
    ({"tool": "u"}, "two records of one capture share a sequence number"),
])
@pytest.mark.parametrize("incremental", [False, True])
def test_a_capture_in_two_places_or_repeating_a_seq_is_refused(root: Path, change: dict[str, str],
                                                               message: str, incremental: bool) -> None:
    from mcpeval_nb.privacy.records import Identity

    capture = "6f1f0c4e-2b9a-4d8e-9a51-3c2d1e0f4a5b"
    first = me.CallRecord(ts="2026-08-04T12:00:00.000Z", session="s", seq=1, server="x", method="tools/call",
                          tool="t", outcome="ok",
                          identity=Identity(capture, "6a2b3c4d-0000-4000-8000-000000000001"))
    second = me.CallRecord(**{**first.__dict__, "seq": 1 if "tool" in change else 2, **change,
                              "identity": Identity(capture, "6a2b3c4d-0000-4000-8000-000000000002")})
    me.append_record(root, first)
    if incremental:
        assert me.build_index(root).calls == 1
    me.append_record(root, second)
    before = (root / INDEX_FILE).read_bytes() if incremental else None
    with pytest.raises(me.FindingsError, match=message):
        me.build_index(root)
    if before is not None:
        assert (root / INDEX_FILE).read_bytes() == before  # the refused refresh changed nothing
    else:
        assert not (root / INDEX_FILE).exists()
    assert not [p for p in os.listdir(root) if p.startswith(".index.db.tmp-")]


@pytest.mark.parametrize("content", [b"not a database at all", b"SQLite format 3\x00" + b"\x00" * 200])
def test_a_corrupt_index_is_refused_by_readers_and_rebuilt_by_index(root: Path, content: bytes) -> None:
    _store(root, calls=500)
    (root / INDEX_FILE).write_bytes(content)
    with pytest.raises(me.FindingsError, match="run `mcpeval-nb index`"):
        me.findings(root)
    result = me.build_index(root)
    assert result.full and result.calls == 500


def test_a_foreign_sqlite_index_is_rebuilt(root: Path) -> None:
    _store(root, calls=500)
    db = sqlite3.connect(root / INDEX_FILE)
    db.execute("CREATE TABLE calls (id INTEGER PRIMARY KEY, session TEXT)")
    db.commit()
    db.close()
    with pytest.raises(me.FindingsError, match="not an mcpeval-nb index"):
        me.findings(root)
    assert me.build_index(root).reason == "not an mcpeval-nb index"


def test_a_newer_checkpoint_version_is_named_and_rebuilt(root: Path) -> None:
    _store(root, calls=500)
    me.build_index(root)
    db = sqlite3.connect(root / INDEX_FILE)
    db.execute("UPDATE index_checkpoint SET version = ?", (VERSION + 1,))
    db.commit()
    db.close()
    with pytest.raises(me.FindingsError, match="newer version"):
        me.findings(root)
    assert me.build_index(root).reason.startswith("written by a newer version")


def test_cli_errors_on_bad_index_are_one_line_never_a_traceback(root: Path) -> None:
    _store(root, calls=200)
    (root / INDEX_FILE).write_bytes(b"garbage")
    run = subprocess.run(
        [sys.executable, "-m", "mcpeval_nb", "findings", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 3 and "Traceback" not in run.stderr
    assert run.stderr.startswith("mcpeval-nb: index database") and run.stderr.count("\n") == 1
    run = subprocess.run(
        [sys.executable, "-m", "mcpeval_nb", "index", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0 and "rebuilt" in run.stderr and run.stdout.startswith("indexed 200 calls")


def test_a_lifecycle_db_that_is_not_ours_is_never_overwritten(root: Path) -> None:
    _store(root, calls=500)
    for content in (b"my own notes, not a database", None):
        path = root / "lifecycle.db"
        if content is not None:
            path.write_bytes(content)
        else:
            path.unlink()
            db = sqlite3.connect(path)
            db.execute("CREATE TABLE finding_lifecycle (who TEXT)")
            db.commit()
            db.close()
        before = path.read_bytes()
        with pytest.raises(me.FindingsError, match="left untouched"):
            me.promote(root, threshold=0)
        assert path.read_bytes() == before
