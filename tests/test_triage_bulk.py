"""The full build's bulk writer (SQLite's ADBC driver on a thread): a failing job is one clear error and
never a hang, a cancelled or failed build leaves the previous index byte for byte and no temporary file,
and a full build equals a refresh that reads the same journals row by row."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow as pa
import pytest

import mcpeval_nb as me
from mcpeval_nb.testing import canary_store, synthetic_store
from mcpeval_nb.triage.index.bulk import Bulk
from mcpeval_nb.triage.index.database import INDEX_FILE

from .triage_support import canonical


def _tmp_files(root: Path) -> list[str]:
    return [name for name in os.listdir(root) if name.startswith(".index.db.tmp-")]


def _bulk_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "mcpeval-nb-index-bulk"]


#: The scratch table these tests write: seven integer columns, as a call's compact ones.
_ITEMS = pa.schema([(name, pa.int64()) for name in ("id", "ts_ms", "session", "seq", "labels", "latency_ms",
                                                      "args")])


def _rows(n: int, start: int = 1) -> pa.RecordBatch:
    ids = pa.array(range(start, start + n), pa.int64())
    return pa.record_batch([ids] * len(_ITEMS), schema=_ITEMS)


def test_a_job_that_fails_is_one_findings_error_and_later_jobs_do_not_run(tmp_path: Path) -> None:
    path = tmp_path / "bulk.db"
    sqlite3.connect(path).executescript("CREATE TABLE items (id INTEGER PRIMARY KEY, ts_ms, session, "
                                        "seq, labels, latency_ms, args); CREATE TABLE other (x INTEGER);")
    bulk = Bulk(path)
    bulk.ingest("no_such_table", pa.table({"x": [1, 2]}))
    bulk.execute("INSERT INTO other (x) VALUES (1)")
    with pytest.raises(me.FindingsError, match=r"cannot write the index .*bulk\.db: .*no_such_table"):
        bulk.close()
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM other").fetchone() == (0,)  # nothing committed
    assert not _bulk_threads()


def test_an_append_that_fails_stops_the_producer_instead_of_hanging_it(tmp_path: Path) -> None:
    path = tmp_path / "bulk.db"
    sqlite3.connect(path).execute("CREATE TABLE items (id INTEGER PRIMARY KEY)")  # 6 columns short
    bulk = Bulk(path, depth=1)
    with pytest.raises(me.FindingsError, match="cannot write the index"):
        for i in range(10_000):  # the writer refuses the first batch; the next append must not block for ever
            bulk.append("items", _rows(10, start=1 + 10 * i))
    assert not _bulk_threads()


def test_appended_batches_are_committed_in_order(tmp_path: Path) -> None:
    path = tmp_path / "bulk.db"
    sqlite3.connect(path).execute("CREATE TABLE items (id INTEGER PRIMARY KEY, ts_ms, session, seq, "
                                  "labels, latency_ms, args)")
    bulk = Bulk(path, depth=2)
    for i in range(50):
        bulk.append("items", _rows(1000, start=1 + 1000 * i))
    bulk.execute("DELETE FROM items WHERE id = ?", pa.record_batch({"id": pa.array([7, 9], pa.int64())}))
    bulk.close()
    db = sqlite3.connect(path)
    assert db.execute("SELECT COUNT(*), MIN(id), MAX(id), SUM(id = seq) FROM items").fetchone() == (
        49_998, 1, 50_000, 49_998)


def test_a_build_cancelled_while_streaming_keeps_the_previous_index(root: Path) -> None:
    synthetic_store(root, calls=20_000, servers=2, tools=4, days=3, sessions=12, seed=3)
    me.build_index(root)
    before = (root / INDEX_FILE).read_bytes()
    cancel = threading.Event()
    seen: list[int] = []

    def progress(done: int, total: int) -> None:
        seen.append(done)
        if len(seen) == 3:  # the bulk writer has batches by now
            cancel.set()

    with pytest.raises(me.Cancelled):
        me.build_index(root, full=True, progress=progress, cancel=cancel, )
    assert (root / INDEX_FILE).read_bytes() == before
    assert not _tmp_files(root) and not _bulk_threads()


_LIMITED = r"""
import resource, signal, sys
sys.dont_write_bytecode = True  # under the limit a module compiled now would leave a truncated .pyc behind
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), int(sys.argv[1])))
from mcpeval_nb.cli import main
sys.argv = ["mcpeval-nb", "index", "--full", "--root", sys.argv[2]]
main()
"""


@pytest.mark.parametrize("limit", [4096, 200_000, 1_000_000])
def test_a_build_that_runs_out_of_room_is_one_line_and_keeps_the_previous_index(root: Path,
                                                                                 limit: int) -> None:
    synthetic_store(root, calls=20_000, servers=2, tools=4, days=3, sessions=12, seed=3)
    canary = canary_store(root, invalid_lines=False)  # hand-edited records hiding markers
    me.build_index(root)
    before = (root / INDEX_FILE).read_bytes()
    assert len(before) > limit  # the new build cannot fit: it fails in the tables, the stream or the indexes
    out = subprocess.run([sys.executable, "-c", _LIMITED, str(limit), str(root)], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 3, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr
    assert lines[0].startswith(f"mcpeval-nb: cannot write the index {root / INDEX_FILE}: "), lines[0]
    assert not [m for m in canary.markers if m in out.stdout + out.stderr]
    assert (root / INDEX_FILE).read_bytes() == before
    assert not _tmp_files(root)


def test_a_full_build_equals_a_refresh_of_the_same_journals(root: Path, tmp_path: Path) -> None:
    """The bulk path (Arrow rows, nulls as nulls) and the row-by-row path (sentinels and NULLIF) store the
    same values: index an empty store, copy the journals in, refresh, and compare with a full build."""
    source = tmp_path / "source"
    synthetic_store(source, calls=5_000, servers=3, tools=4, days=2, sessions=9, seed=8)
    me.append_record(source, me.AnnotationRecord(ts="2026-08-04T12:00:00.000Z", session="never-seen-session",
                                                 seq=3, kind="workaround", note="a note"))  # dangling
    (root / "store").mkdir(parents=True, exist_ok=True)
    if (source / ".salt").exists():
        (root / ".salt").write_bytes((source / ".salt").read_bytes())
    assert me.build_index(root).calls == 0
    for journal in sorted(p for p in (source / "store").iterdir() if p.is_file()):
        (root / "store" / journal.name).write_bytes(journal.read_bytes())
    refreshed = me.build_index(root)
    assert not refreshed.full, refreshed.reason
    full = me.build_index(source, full=True)
    assert (refreshed.calls, refreshed.failures, refreshed.annotations) == (full.calls, full.failures,
                                                                          full.annotations)
    ours, theirs = canonical(root / INDEX_FILE), canonical(source / INDEX_FILE)
    ours.pop("sources"), theirs.pop("sources")
    assert ours == theirs


def test_links_by_session_and_seq_past_the_packed_key_range(root: Path, tmp_path: Path) -> None:
    """Sequence numbers near 2**64 cannot be packed with the session into one int64 key: the per-note
    search links them exactly as a refresh does (one match links, two do not, none is none)."""
    top = 2**64 - 3
    records = [me.CallRecord(ts="2026-08-04T12:00:00.000Z", session=s, seq=q, server=v,
                             method="tools/call", tool="t", outcome="ok")  # b: one seq, two servers
               for s, q, v in (("a", top, "x"), ("a", 5, "x"), ("b", top, "x"), ("b", top, "y"),
                               ("c", 7, "x"))]
    me.append_records(root, records)
    for session, seq in (("a", top), ("b", top), ("a", 6)):  # (a, 6): no such call, written by hand
        me.append_record(root, me.AnnotationRecord(ts="2026-08-04T12:00:00.000Z", session=session, seq=seq,
                                                   kind="workaround", note="n"))
    full = me.build_index(root, full=True)
    assert (full.calls, full.annotations) == (5, 3)
    db = sqlite3.connect(root / INDEX_FILE)
    links = db.execute("SELECT n.matches, c.seq FROM annotations n LEFT JOIN calls c ON c.id = n.call_id "
                       "ORDER BY n.rowid").fetchall()
    assert links == [(1, 2**63 - 1), (2, None), (0, None)]  # seq is stored clipped to SQLite's range
    # The same journals read by a refresh (row by row) link the same way.
    (tmp_path / "other" / "store").mkdir(parents=True)
    assert me.build_index(tmp_path / "other").calls == 0
    for journal in sorted(p for p in (root / "store").iterdir() if p.is_file()):
        (tmp_path / "other" / "store" / journal.name).write_bytes(journal.read_bytes())
    if (root / ".salt").exists():
        (tmp_path / "other" / ".salt").write_bytes((root / ".salt").read_bytes())
    assert not me.build_index(tmp_path / "other").full
    ours, theirs = canonical(tmp_path / "other" / INDEX_FILE), canonical(root / INDEX_FILE)
    ours.pop("sources"), theirs.pop("sources")
    assert ours == theirs


def _deleted_indexes() -> list[str]:
    """This process's descriptors on an index file that no longer has a name."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if INDEX_FILE in target and target.endswith("(deleted)"):
                found.append(target)
    return found


@pytest.mark.parametrize("swap", ["exchange", "rename"])
def test_a_full_build_frees_the_replaced_index_on_a_thread_of_its_own_and_leaks_nothing(
        root: Path, swap: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import mcpeval_nb.triage.index.build as build

    swaps: list[bool] = []

    def exchange(a: Path, b: Path) -> bool:  # the real one, or a filesystem without it
        swaps.append(swap == "exchange" and real_exchange(a, b))
        return swaps[-1]

    real_exchange = build.exchange
    monkeypatch.setattr(build, "exchange", exchange)
    synthetic_store(root, calls=5_000, servers=2, tools=4, days=2, sessions=6, seed=5)
    me.build_index(root)
    assert swaps == []  # nothing to swap with: renamed
    path = root / INDEX_FILE
    old_inode = path.stat().st_ino
    reader = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)  # a reader of the old file
    try:
        calls = reader.execute("SELECT count(*) FROM calls").fetchone()
        result = me.build_index(root, full=True)
        assert swaps == [swap == "exchange"]
        assert result.full and path.stat().st_ino != old_inode
        assert reader.execute("SELECT count(*) FROM calls").fetchone() == calls  # the old file reads on
    finally:
        reader.close()
    assert sqlite3.connect(path).execute("SELECT count(*) FROM calls").fetchone() == (result.calls,)
    for thread in [t for t in threading.enumerate() if t.name == "mcpeval-nb-index-free"]:
        thread.join()  # it closes its descriptor and ends, whatever the timing
    assert not _deleted_indexes()  # nothing holds the old file's blocks any more
    assert not _tmp_files(root)
