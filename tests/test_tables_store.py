"""Store behaviour: refresh by appended bytes, rewrite detection, streaming batches, Parquet, pandas."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from mcpeval_nb import CallRecord, RecordTooLarge, UsageError, append_records
from mcpeval_nb.tables import CALLS_SCHEMA, open_store, to_parquet
from mcpeval_nb.testing.synthetic import synthetic_store

SESSION = "session:" + "cd" * 32


def record(seq: int, day: str = "2026-08-04") -> CallRecord:
    return CallRecord(ts=f"{day}T12:00:00.250Z", session=SESSION, seq=seq, server="demo", method="tools/call",
                      tool="t", latency_ms=seq, outcome="ok", shim_self_us=1, kind="real")


def test_refresh_reads_only_appended_records(root: Path) -> None:
    append_records(root, [record(i) for i in range(1, 11)])
    store = open_store(root)
    assert store.calls.num_rows == 10
    path = root / "store" / "calls-2026-08-04.jsonl"
    before = path.stat().st_size
    append_records(root, [record(i) for i in range(11, 14)] + [record(14, day="2026-08-05")])
    assert store.refresh() == 4
    assert store.calls.column("seq").to_pylist() == list(range(1, 15))
    state = store._states[path]
    assert state.scan.offset == path.stat().st_size > before
    assert store.refresh() == 0


def test_rewritten_journal_triggers_a_full_reload(root: Path) -> None:
    append_records(root, [record(i) for i in range(1, 6)])
    store = open_store(root)
    assert store.calls.num_rows == 5
    path = root / "store" / "calls-2026-08-04.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[1] + lines[0] + b"".join(lines[2:]) + lines[4])  # same prefix length, new bytes
    assert store.refresh() == 6
    assert store.calls.column("seq").to_pylist() == [2, 1, 3, 4, 5, 5]


def test_full_verification_sees_an_edit_outside_the_checked_window(root: Path) -> None:
    append_records(root, [record(i) for i in range(1, 3000)])
    store = open_store(root)
    _ = store.calls
    path = root / "store" / "calls-2026-08-04.jsonl"
    data = bytearray(path.read_bytes())
    at = data.index(b'"seq":1500,')
    data[at:at + 11] = b'"seq":7500,'  # past the first 4 KiB, before the last 64 KiB
    path.write_bytes(bytes(data))
    assert store.refresh() == 0  # the first 4 KiB and the last 64 KiB did not change
    assert store.refresh(verify="full") == 2999
    assert store.calls.column("seq").to_pylist()[1499] == 7500


def test_iter_batches_streams_the_same_rows_as_the_table(root: Path) -> None:
    synthetic_store(root, calls=600, days=3, seed=3)
    store = open_store(root)
    streamed = pa.Table.from_batches(list(store.iter_batches()), schema=CALLS_SCHEMA)
    assert streamed.cast(store.calls.schema).to_pylist() == store.calls.to_pylist()
    with pytest.raises(UsageError):
        list(store.iter_batches("nope"))


def test_parquet_dataset_is_partitioned_by_day_and_server_and_holds_every_row(root: Path,
                                                                             tmp_path: Path) -> None:
    synthetic_store(root, calls=500, servers=2, days=2, seed=4)
    store = open_store(root)
    export = store.to_parquet(tmp_path / "pq")
    dest = export.dest
    assert (export.rows, export.files) == (store.calls.num_rows, 4)
    dirs = sorted(p.relative_to(dest).as_posix() for p in dest.glob("day=*/server=*"))
    assert dirs == ["day=2026-08-01/server=server-0", "day=2026-08-01/server=server-1",
                    "day=2026-08-02/server=server-0", "day=2026-08-02/server=server-1"]
    back = ds.dataset(dest, format="parquet", partitioning="hive").to_table()
    assert back.num_rows == store.calls.num_rows
    key = ["session", "seq"]
    want = store.calls.to_pandas().sort_values(key).reset_index(drop=True)
    got = back.to_pandas().sort_values(key).reset_index(drop=True)
    assert list(got["latency_ms"].fillna(-1)) == list(want["latency_ms"].fillna(-1))
    assert list(got["server"].astype(str)) == list(want["server"].astype(str))


def test_to_pandas_converts_each_table_and_refuses_unknown_names(root: Path) -> None:
    synthetic_store(root, calls=100, seed=5)
    store = open_store(root)
    frame = store.to_pandas()
    assert len(frame) == 100 and str(frame["ts"].dtype).startswith("datetime64")
    assert len(store.to_pandas("trends")) == store.trends.num_rows > 0
    with pytest.raises(UsageError):
        store.to_pandas("secrets")


def test_text_progress_is_the_one_tqdm_bar_with_rate_and_time_left_for_large_loads_only() -> None:
    import io

    from mcpeval_nb.tables import text_progress
    out = io.StringIO()
    report = text_progress(out, min_bytes=100)
    for done in range(0, 2049, 64):
        report(done, 2048)
    final = out.getvalue().split("\r")[-1].strip()
    assert final.startswith("loading store: 100%") and "2.00k/2.00kB" in final, final
    assert "<00:00" in final and "B/s" in final  # time left and rate
    quiet = io.StringIO()
    text_progress(quiet, min_bytes=100)(50, 99)
    assert quiet.getvalue() == ""



def test_a_planted_symlink_in_the_parquet_destination_is_refused_and_nothing_is_touched(
        root: Path, tmp_path: Path) -> None:
    synthetic_store(root, calls=200, servers=1, days=1, seed=6)
    store = open_store(root)
    dest = tmp_path / "pq"
    first = store.to_parquet(dest)
    victim = tmp_path / "victim"
    (victim / "server=server-0").mkdir(parents=True)
    (victim / "server=server-0" / "keep.txt").write_text("keep")
    planted = dest / "day=2026-08-02"
    planted.symlink_to(victim, target_is_directory=True)
    before = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if not p.is_symlink())
    with pytest.raises(UsageError, match=r"holds a symlink: .*day=2026-08-02"):
        store.to_parquet(dest)
    assert (victim / "server=server-0" / "keep.txt").read_text() == "keep"
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if not p.is_symlink()) == before
    planted.unlink()
    link = tmp_path / "link"
    link.symlink_to(victim, target_is_directory=True)
    with pytest.raises(UsageError, match="refuses a symlinked destination"):
        store.to_parquet(link)
    assert list(victim.rglob("*.parquet")) == [] and first.files == 1


def test_a_failed_export_keeps_the_previous_dataset_and_a_new_one_replaces_it_whole(
        root: Path, tmp_path: Path) -> None:
    synthetic_store(root, calls=100, servers=2, days=2, seed=7)
    dest = tmp_path / "pq"
    open_store(root).to_parquet(dest)
    (dest / "day=1999-01-01").mkdir()  # a partition the store no longer has
    names = sorted(p.name for p in dest.rglob("*.parquet"))

    def broken() -> Iterator[pa.RecordBatch]:
        yield from open_store(root).iter_batches("calls")
        raise RecordTooLarge(dest, 9)

    with pytest.raises(RecordTooLarge):
        to_parquet(broken(), dest)
    assert sorted(p.name for p in dest.rglob("*.parquet")) == names and (dest / "day=1999-01-01").is_dir()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".mcpeval-parquet-")]
    export = open_store(root).to_parquet(dest)
    assert not (dest / "day=1999-01-01").exists() and export.rows == 100
