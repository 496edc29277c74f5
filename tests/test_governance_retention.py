"""Retention by days, the audit log (what it records, that it never fails an action), and ``config``."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest

import mcpeval_nb
from mcpeval_nb import (
    MeasurementProfile,
    ShareOptions,
    TrendPoint,
    append_records,
    apply_retention,
    audit_log,
    build_index,
    erase,
    export_share,
    read_audit,
    resolve_config,
)
from mcpeval_nb.governance import RetentionTimer, configured_retention
from tests.waiting import until

from .governance_support import CANARY, calls, cli, note, seed, store_bytes

TODAY = dt.date(2026, 8, 31)
DAYS = ("2026-07-01", "2026-08-01", "2026-08-30")


def _points(root: Path) -> None:
    profile = MeasurementProfile(evaluator_version="0.4.0", platform="linux", architecture="x86_64")
    append_records(root, [TrendPoint(ts=f"{d}T00:00:00.000Z", server="demo", passed=True, cases_total=1,
                                     cases_passed=1, score=90, standard="mcpeval-standard/2",
                                     measurement_profile=profile) for d in DAYS])


def test_retention_removes_only_journals_older_than_the_days(tmp_path: Path) -> None:
    seed(tmp_path, {"alpha": "a"}, 10, days=DAYS)
    append_records(tmp_path, [note("alpha", 1, day="2026-07-02"), *calls("x", "a", 3, day="unknown")])
    _points(tmp_path)
    result = apply_retention(tmp_path, days=30, today=TODAY)
    assert result.cutoff == "2026-08-01"
    assert result.files == ("annotations-2026-07-02.jsonl", "calls-2026-07-01.jsonl")
    assert result.records == {"calls": 10, "annotations": 1, "trend_points": 0, "catalogs": 0}
    names = sorted(p.name for p in (tmp_path / "store").glob("*.jsonl"))
    assert names == ["annotations-2026-08-02.jsonl", "calls-2026-08-01.jsonl", "calls-2026-08-30.jsonl",
                     "calls-unknown.jsonl"]
    assert len((tmp_path / "store" / "probes" / "history.jsonl").read_text().splitlines()) == 3
    entry = read_audit(tmp_path)[-1]
    assert entry["action"] == "retention" and entry["counts"]["calls"] == 10
    assert entry["paths"] == ["store/annotations-2026-07-02.jsonl", "store/calls-2026-07-01.jsonl"]


def test_retention_with_probe_history_drops_older_trend_points(tmp_path: Path) -> None:
    _points(tmp_path)
    result = apply_retention(tmp_path, days=30, today=TODAY, include_probe_history=True)
    assert result.records["trend_points"] == 1
    kept = [json.loads(line)["ts"][:10] for line in
            (tmp_path / "store" / "probes" / "history.jsonl").read_text().splitlines()]
    assert kept == ["2026-08-01", "2026-08-30"]


def test_dry_run_and_no_configuration_delete_nothing(tmp_path: Path) -> None:
    seed(tmp_path, {"alpha": "a"}, 5, days=DAYS)
    before = store_bytes(tmp_path)
    assert apply_retention(tmp_path, days=1, dry_run=True, today=TODAY).records["calls"] == 10
    assert store_bytes(tmp_path) == before
    done = cli("retention", "--root", str(tmp_path))
    assert done.returncode == 0 and "nothing removed" in done.stdout
    assert store_bytes(tmp_path) == before


def test_retention_days_comes_from_config_json_with_its_rules(tmp_path: Path) -> None:
    seed(tmp_path, {"alpha": "a"}, 2, days=("2000-01-01",))
    (tmp_path / "config.json").write_text('{"retention_days": 7, "promotion_threshold": 0.5}')
    assert configured_retention(tmp_path) == (7, "config.json")
    done = cli("retention", "--root", str(tmp_path))
    assert done.returncode == 0 and "calls-2000-01-01.jsonl" in done.stdout
    assert not list((tmp_path / "store").glob("calls-*"))
    for bad in ('{"retention_days": 0}', '{"retention_days": 1.5}', '{"retention_days": true}', "[1]"):
        (tmp_path / "config.json").write_text(bad)
        with pytest.raises(mcpeval_nb.UsageError):
            configured_retention(tmp_path)


def test_index_notices_retention_and_rebuilds(tmp_path: Path) -> None:
    seed(tmp_path, {"alpha": "a"}, 10, days=DAYS)
    assert build_index(tmp_path).calls == 30
    apply_retention(tmp_path, days=30, today=TODAY)
    again = build_index(tmp_path)
    assert again.calls == 20 and again.reason == "a journal was removed"


def test_the_timer_applies_at_start_and_records_each_pass(tmp_path: Path) -> None:
    seed(tmp_path, {"alpha": "a"}, 2, days=("2000-01-01",))
    timer = RetentionTimer(tmp_path, 30, interval=3600)
    timer.start()
    try:
        until(lambda: timer.passes >= 1)  # while the timer's thread works (tests/waiting.py)
    finally:
        timer.stop()
    assert timer.passes == 1 and not list((tmp_path / "store").glob("calls-*"))
    assert [e["action"] for e in read_audit(tmp_path)] == ["retention"]
    idle = RetentionTimer(tmp_path, None)
    idle.start()
    idle.stop()
    assert idle.passes == 0


def test_shares_and_refusals_are_audited_without_content(tmp_path: Path) -> None:
    seed(tmp_path, {"alpha": "a"}, 3)
    result = export_share(tmp_path, dest=tmp_path.parent / f"{tmp_path.name}-env",
                          options=ShareOptions(include_annotation_notes=True))
    assert result.audit_written
    with pytest.raises(mcpeval_nb.ShareOutputError):
        export_share(tmp_path, dest=tmp_path.parent / f"{tmp_path.name}-env")  # not empty, no --force
    shared, refused = read_audit(tmp_path)
    assert shared["action"] == "share" and shared["outcome"] == "done"
    assert shared["labels"]["annotation_notes"] == "included"
    assert shared["counts"] == {"files": 2, "notes_included": 1, "records": 4}
    assert shared["paths"] == [f"../{tmp_path.name}-env"]
    assert refused["outcome"] == "refused" and refused["reason"] == "unusable-output"
    assert CANARY not in (tmp_path / "audit.jsonl").read_text()
    table = audit_log(tmp_path)
    assert table.num_rows == 2 and table.column("action").to_pylist() == ["share", "share"]
    assert dict(table.column("counts")[0].as_py())["records"] == 4


def test_a_failed_audit_write_warns_once_and_never_fails_the_action(tmp_path: Path) -> None:
    seed(tmp_path, {"alpha": "a", "beta": "b"}, 3)
    os.mkdir(tmp_path / "audit.jsonl")  # the log cannot be opened as a file
    done = cli("erase", "--session", "alpha", "--root", str(tmp_path))
    assert done.returncode == 0
    assert "audit: 1 record could not be written" in done.stdout
    warnings = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "audit.jsonl" in warnings[0]
    assert erase(tmp_path, session="beta").audit_written is False


def test_audit_records_only_labels_counts_and_relative_paths(tmp_path: Path) -> None:
    from mcpeval_nb.governance import record

    tmp_path.mkdir(exist_ok=True)
    assert record(tmp_path, action="share", labels={"finding": f"{CANARY} prose", "note": "x y"},
                  counts={"files": 2, "bad": -1, "also": "3"}, paths=[tmp_path / "store" / "a.jsonl"])
    entry = read_audit(tmp_path)[0]
    assert entry["labels"] == {"finding": "invalid", "note": "invalid"}
    assert entry["counts"] == {"also": 0, "bad": 0, "files": 2}
    assert entry["paths"] == ["store/a.jsonl"] and entry["uid"] == os.getuid()
    assert not record(tmp_path / "missing", action="share")  # no root is created for a refusal
    assert not (tmp_path / "missing").exists()
    done = cli("audit", "--last", "1", "--root", str(tmp_path))
    assert done.stdout.count("\n") == 1 and " share done " in done.stdout


def test_config_says_where_each_setting_came_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seed(tmp_path, {"alpha": "a"}, 3)
    (tmp_path / "config.json").write_text('{"retention_days": 30}')
    report = resolve_config(tmp_path)
    assert report.root_source == "flag" and report.retention_days == 30
    assert report.retention_source == "config.json" and report.threshold_source == "seed"
    assert report.journals["calls"]["files"] == 1 and report.journals["annotations"]["files"] == 1
    assert report.limits["MAX_RECORD_BYTES"] == 4 * 1024 * 1024
    monkeypatch.setenv("MCPEVAL_HOME", str(tmp_path))
    assert resolve_config().root_source == "MCPEVAL_HOME"
    done = cli("config", "--format", "json", env={"MCPEVAL_HOME": str(tmp_path)})
    doc = json.loads(done.stdout)
    assert doc["root_source"] == "MCPEVAL_HOME"
    assert doc["retention_days"] == {"value": 30, "source": "config.json"}
    text = cli("config", "--root", str(tmp_path)).stdout
    assert "do not share it" in text and str(tmp_path / ".salt") in text


def test_refused_erases_and_retention_passes_are_audited(tmp_path: Path) -> None:
    seed(tmp_path, {"alpha": "a"}, 2)
    with pytest.raises(mcpeval_nb.UsageError):
        apply_retention(tmp_path, days=0)
    with pytest.raises(mcpeval_nb.UsageError):
        erase(tmp_path, server="not a label")
    from mcpeval_nb.governance.intent import governance_lock

    with governance_lock(tmp_path), pytest.raises(mcpeval_nb.GovernanceError):
        erase(tmp_path, session="alpha", timeout=0.2)
    assert [(e["action"], e["outcome"], e["reason"]) for e in read_audit(tmp_path)] == [
        ("retention", "refused", "usage-error"), ("erase", "refused", "usage-error"),
        ("erase", "refused", "busy-or-interrupted")]


def test_retention_drops_the_engines_dataset_and_an_export_follows(tmp_path: Path) -> None:
    import pyarrow.dataset as pads

    root, dest = tmp_path / "root", tmp_path / "pq"
    seed(root, {"alpha": "a"}, 10, days=DAYS)
    mcpeval_nb.open_store(root).to_parquet(dest)
    mcpeval_nb.duckdb_engine(root).latency_summary()
    assert (root / "calls.parquet").is_dir()
    apply_retention(root, days=30, today=TODAY)
    assert not (root / "calls.parquet").exists()
    mcpeval_nb.open_store(root).to_parquet(dest)
    rows = pads.dataset(dest, format="parquet", partitioning="hive").count_rows()
    assert rows == 20


def test_retention_never_removes_a_journal_whose_name_holds_no_valid_day(tmp_path: Path) -> None:
    """``calls-1.jsonl`` and ``calls-20001130.jsonl`` were removed (their names compared below the
    cutoff as text); a journal retention cannot date stays, as ``calls-unknown.jsonl`` always did."""
    seed(tmp_path, {"alpha": "a"}, 2, days=("2026-07-01",))
    store = tmp_path / "store"
    undated = ["calls-1.jsonl", "calls-20001130.jsonl", "calls-2026-02-30.jsonl", "annotations-0000.jsonl",
               "calls-1999-1-01.jsonl"]
    for name in undated:
        (store / name).write_bytes((store / "calls-2026-07-01.jsonl").read_bytes())
    result = apply_retention(tmp_path, days=30, today=TODAY)
    assert result.files == ("calls-2026-07-01.jsonl",)
    assert sorted(p.name for p in store.glob("*.jsonl")) == sorted([*undated, "annotations-2026-08-02.jsonl"])


@pytest.mark.parametrize("days", [999_999_999, 36_501, 10**30])
def test_days_past_a_century_is_a_usage_error_and_is_audited(tmp_path: Path, days: int,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    seed(tmp_path, {"alpha": "a"}, 2)
    with pytest.raises(mcpeval_nb.UsageError, match="from 1 to 36500"):
        apply_retention(tmp_path, days=days)
    from mcpeval_nb.cli import main

    with pytest.raises(SystemExit) as info:
        main(["retention", "--days", str(days), "--root", str(tmp_path)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err == ("mcpeval-nb: retention days must be a whole number from 1 to 36500 (from days)\n")
    assert [(e["action"], e["outcome"], e["reason"]) for e in read_audit(tmp_path)] == [
        ("retention", "refused", "usage-error")] * 2
    assert apply_retention(tmp_path, days=36_500).files == ()
