"""``mcpeval-nb summary`` and ``export-parquet`` through a real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from mcpeval_nb.cli import main
from mcpeval_nb.testing import canary_store, synthetic_store
from tests import waiting


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MCPEVAL_HOME": str(root)}
    return waiting.run([sys.executable, "-m", "mcpeval_nb", *args], env=env, capture_output=True,
                       text=True, stall_s=120, check=False)


def test_summary_prints_tool_percentiles_outcomes_and_templates(root: Path) -> None:
    synthetic_store(root, calls=800, servers=2, tools=3, days=2, error_rate=0.2, seed=2)
    done = _run(root, "summary", "--top", "3")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("calls: 800 across 2 server(s)")
    assert "slowest tools (ms; <1: under a millisecond):" in out and " p95=" in out and "tool_" in out
    assert "outcomes per server:" in out and "server-0 n=" in out
    assert "top error templates:" in out and " count=" in out


def test_sub_millisecond_latency_reads_as_under_one_not_zero(root: Path) -> None:
    from mcpeval_nb import CallRecord, append_records, format_ms

    records = [CallRecord(ts=f"2026-11-30T10:00:0{i}.000Z", session="s-1", seq=i, server="fast",
                          method="tools/call", tool="ping_tool", args={}, latency_ms=lat, outcome="ok",
                          shim_self_us=3, kind="real")
               for i, lat in enumerate((0, 0, 0, 0, 2))]
    append_records(root, records)
    done = _run(root, "summary")
    assert done.returncode == 0, done.stderr
    line = next(row for row in done.stdout.splitlines() if "ping_tool" in row)
    assert "p50=<1 " in line and "max=2" in line and "=0 " not in line
    shown = [format_ms(v) for v in (None, 0, 0.4, 0.999, 1, 1.49, 250.5)]
    assert shown == ["-", "<1", "<1", "<1", "1", "1", "250"]


def test_summary_on_a_canary_store_reports_the_lines_or_exits_3_naming_the_line_without_markers(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    canary = canary_store(root)
    with pytest.raises(SystemExit) as info:
        main(["summary", "--root", str(root), "--errors", "raise"])
    assert info.value.code == 3
    failed = capsys.readouterr()
    assert "invalid journal record on line 8 of" in failed.err
    reported = _run(root, "summary")  # report is the default
    assert reported.returncode == 0
    assert "skipped 5 bad line(s):" in reported.stdout
    text = failed.out + failed.err + reported.stdout + reported.stderr
    assert [m for m in canary.markers if m in text] == []


def test_export_parquet_writes_a_partitioned_dataset(root: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    synthetic_store(root, calls=300, servers=2, days=2, seed=6)
    dest = tmp_path / "dataset"
    assert main(["export-parquet", "--root", str(root), "--dest", str(dest)]) == 0
    assert capsys.readouterr().out.startswith("wrote 4 Parquet file(s) (300 calls) under ")
    assert ds.dataset(dest, partitioning="hive").count_rows() == 300


def test_export_parquet_without_dest_is_a_usage_error(root: Path) -> None:
    with pytest.raises(SystemExit) as info:
        main(["export-parquet", "--root", str(root)])
    assert info.value.code == 2
