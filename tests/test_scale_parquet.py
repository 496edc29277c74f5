"""Incremental Parquet: a re-export reads only changed journals, follows erasure and retention, and a
killed export leaves the previous dataset readable and whole."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from mcpeval_nb import CallRecord, append_records, open_store
from mcpeval_nb.root.layout import DATASET_CHECKPOINT as CHECKPOINT
from mcpeval_nb.root.layout import DATASET_TRENDS as TRENDS_FILE

SESSION = "session:" + "ab" * 32


def record(seq: int, day: str, server: str = "demo") -> CallRecord:
    return CallRecord(ts=f"{day}T10:00:00.000Z", session=SESSION, seq=seq, server=server, method="tools/call",
                      tool="t", latency_ms=seq % 97, outcome="ok", shim_self_us=1, kind="real")


def three_days(root: Path) -> None:
    for n, day in enumerate(("2026-08-01", "2026-08-02", "2026-08-03")):
        append_records(root, [record(i, day, server=f"s{i % 2}") for i in range(n * 100, n * 100 + 100)])


def rows(dest: Path) -> list[tuple[str, int]]:
    table = ds.dataset(dest, format="parquet", partitioning="hive").to_table(columns=["day", "seq"])
    return sorted(zip(table.column("day").to_pylist(), table.column("seq").to_pylist(), strict=True))


def inodes(dest: Path) -> dict[str, int]:
    return {str(p.relative_to(dest)): p.stat().st_ino for p in dest.rglob("*.parquet")}


def test_a_reexport_after_appends_reads_only_the_changed_journal(root: Path, tmp_path: Path) -> None:
    three_days(root)
    dest = tmp_path / "calls.parquet"
    first = open_store(root).to_parquet(dest)
    assert (first.rows, first.rewrote, first.kept) == (300, 3, 0)
    before = inodes(dest)
    append_records(root, [record(1000 + i, "2026-08-03") for i in range(5)])
    second = open_store(root).to_parquet(dest)
    assert (second.rows, second.rewrote, second.kept) == (305, 1, 2)
    after = inodes(dest)
    unchanged = [k for k in before if not k.startswith("day=2026-08-03")]
    assert unchanged and all(after[k] == before[k] for k in unchanged)  # carried over, not rewritten
    assert all(after[k] != before.get(k) for k in after if k.startswith("day=2026-08-03"))
    assert len(rows(dest)) == 305
    third = open_store(root).to_parquet(dest)
    assert (third.rewrote, third.kept) == (0, 3) and inodes(dest) == after


def test_an_erasure_rewriting_earlier_lines_rewrites_that_journals_partitions(root: Path,
                                                                              tmp_path: Path) -> None:
    three_days(root)
    dest = tmp_path / "calls.parquet"
    open_store(root).to_parquet(dest)
    journal = root / "store" / "calls-2026-08-02.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    kept = [line for i, line in enumerate(lines) if i % 3]  # what an erasure leaves, rewritten in place
    tmp = journal.with_suffix(".tmp")
    tmp.write_bytes(b"".join(kept))
    os.replace(tmp, journal)
    export = open_store(root).to_parquet(dest)
    assert (export.rewrote, export.kept, export.rows) == (1, 2, 200 + len(kept))
    assert sum(1 for day, _ in rows(dest) if day == "2026-08-02") == len(kept)


def test_a_same_size_edit_outside_the_tail_window_is_seen_by_full_verification(root: Path,
                                                                               tmp_path: Path) -> None:
    append_records(root, [record(i, "2026-08-01") for i in range(2000)])
    dest = tmp_path / "calls.parquet"
    open_store(root).to_parquet(dest)
    journal = root / "store" / "calls-2026-08-01.jsonl"
    st = journal.stat()
    data = bytearray(journal.read_bytes())
    at = data.index(b'"seq":1000,') + len(b'"seq":')
    data[at:at + 1] = b"7"  # seq 1000 -> 7000, same length, past the first 4 KiB, before the last 64 KiB
    with open(journal, "r+b") as fh:
        fh.write(data)
    os.utime(journal, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert open_store(root).to_parquet(dest).rewrote == 0  # the window check cannot see it ...
    assert open_store(root).to_parquet(dest, verify="full").rewrote == 1  # ... the full digest does
    assert (("2026-08-01", 7000) in rows(dest)) and (("2026-08-01", 1000) not in rows(dest))


def test_a_journal_removed_by_retention_takes_its_partitions_with_it(root: Path, tmp_path: Path) -> None:
    three_days(root)
    dest = tmp_path / "calls.parquet"
    open_store(root).to_parquet(dest)
    (root / "store" / "calls-2026-08-01.jsonl").unlink()
    export = open_store(root).to_parquet(dest)
    assert (export.rewrote, export.kept, export.rows) == (0, 2, 200)
    assert not (dest / "day=2026-08-01").exists()
    assert {day for day, _ in rows(dest)} == {"2026-08-02", "2026-08-03"}
    doc = json.loads((dest / CHECKPOINT).read_text())
    assert [j["name"] for j in doc["journals"]] == ["calls-2026-08-02.jsonl", "calls-2026-08-03.jsonl"]


def test_a_checkpoint_from_another_root_or_a_missing_file_means_a_full_export(root: Path,
                                                                              tmp_path: Path) -> None:
    three_days(root)
    dest = tmp_path / "calls.parquet"
    open_store(root).to_parquet(dest)
    victim = next(dest.rglob("calls-2026-08-02-*.parquet"))
    victim.unlink()
    assert open_store(root).to_parquet(dest).rewrote == 1  # the journal whose file vanished is re-read
    other = tmp_path / "other"
    (other / "store").mkdir(parents=True)
    name = "calls-2026-08-01.jsonl"
    (other / "store" / name).write_bytes((root / "store" / name).read_bytes())
    export = open_store(other).to_parquet(dest)
    assert (export.rewrote, export.kept, export.rows) == (1, 0, 100)


def test_the_dataset_holds_the_trend_points_and_hides_its_own_files_from_readers(root: Path,
                                                                                 tmp_path: Path) -> None:
    from mcpeval_nb.testing.synthetic import synthetic_store

    synthetic_store(root, calls=200, days=2)
    dest = tmp_path / "calls.parquet"
    open_store(root).to_parquet(dest)
    assert (dest / CHECKPOINT).is_file() and (dest / TRENDS_FILE).is_file()
    dataset = ds.dataset(dest, format="parquet", partitioning="hive")
    assert all(f.endswith(".parquet") for f in dataset.files)
    assert dataset.count_rows() == open_store(root).calls.num_rows


_KILLED = """
import sys
from mcpeval_nb import open_store
import mcpeval_nb.tables.incremental as inc
real = inc._export_journal
def slow(path, *a, **k):
    mark = real(path, *a, **k)
    print("wrote", path.name, flush=True)
    import time; time.sleep(60)
    return mark
inc._export_journal = slow
open_store(sys.argv[1]).to_parquet(sys.argv[2])
"""


def test_a_killed_export_leaves_the_previous_dataset_readable_and_whole(root: Path, tmp_path: Path) -> None:
    three_days(root)
    dest = tmp_path / "calls.parquet"
    open_store(root).to_parquet(dest)
    before = rows(dest)
    append_records(root, [record(5000 + i, "2026-08-04") for i in range(50)])
    (root / "store" / "calls-2026-08-02.jsonl").unlink()
    proc = subprocess.Popen([sys.executable, "-c", _KILLED, str(root), str(dest)], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith(b"wrote")  # the new files exist, staged
    assert rows(dest) == before  # readers still see the whole previous dataset
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert rows(dest) == before
    stale = [p for p in tmp_path.iterdir() if p.name.startswith(".mcpeval-parquet-")]
    assert stale  # the dead export's staging directory ...
    export = open_store(root).to_parquet(dest)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".mcpeval-parquet-")]  # ... is cleaned
    assert export.rows == 250 and len(rows(dest)) == 250


def _spark_count(dest: Path) -> int:
    """Rows of the dataset through a local Spark session (loopback only, no UI)."""
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").appName("mcpeval-nb-test")
             .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1").getOrCreate())
    try:
        frame = spark.read.parquet(str(dest))
        assert {"day", "server", "seq", "session"} <= set(frame.columns)
        return int(frame.count())
    finally:
        spark.stop()


@pytest.mark.parametrize("engine", ["duckdb", "dask", "polars", "spark"])
def test_other_engines_read_the_incremental_dataset(root: Path, tmp_path: Path, engine: str) -> None:
    three_days(root)
    dest = tmp_path / "calls.parquet"
    open_store(root).to_parquet(dest)
    append_records(root, [record(900 + i, "2026-08-04") for i in range(7)])
    open_store(root).to_parquet(dest)
    if engine == "duckdb":
        import duckdb

        n = duckdb.connect().execute(
            f"SELECT count(*) FROM read_parquet('{dest}/**/*.parquet', hive_partitioning=true)").fetchone()
        assert n is not None and n[0] == 307
    elif engine == "dask":
        import dask.dataframe as dd

        assert len(dd.read_parquet(str(dest), columns=["seq"])) == 307
    elif engine == "polars":
        import polars as pl

        frame = pl.scan_parquet(f"{dest}/**/*.parquet", hive_partitioning=True).collect()
        assert frame.height == 307 and {"day", "server"} <= set(frame.columns)
    else:
        assert _spark_count(dest) == 307
