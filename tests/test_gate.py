"""``mcpeval-nb gate`` on generated stores with known percentiles and error counts.

Latencies 1..20 ms give p95 = 19.05 and p99 = 19.81 (linear interpolation, as ``latency_summary``);
100 calls with 10 errors give the Wilson interval (0.0552, 0.1744).  So a budget of 19.05 is just met
and 19.04 just missed, an error budget of 0.05 fails, 0.06 warns, 0.18 passes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import mcpeval_nb
from mcpeval_nb import CallRecord, append_records, error_info, gate, parse_budgets
from tests.ci_support import cli, golden, junit, outcomes

SALT = bytes(range(32))


def write_calls(
    root: Path,
    server: str,
    tool: str,
    latencies: list[int],
    *,
    errors: int = 0,
    message: str = "upstream refused after 12 ms",
    day: str = "2026-08-04",
    kind: str = "real",
) -> None:
    """One ``tools/call`` record per latency; the first ``errors`` of them failed with ``message``."""
    records = []
    for i, latency in enumerate(latencies):
        failed = i < errors
        records.append(
            CallRecord(
                ts=f"{day}T10:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
                session=f"s-{server}-{tool}",
                seq=i + 1,
                server=server,
                method="tools/call",
                tool=tool,
                latency_ms=latency,
                outcome="error" if failed else "ok",
                kind=kind,
                error=error_info({"code": -32000, "message": message}, SALT) if failed else None,
            )
        )
    append_records(root, records)


def budgets(*entries: dict[str, Any], no_new_templates: bool = False) -> mcpeval_nb.Budgets:
    return parse_budgets({"version": 1, "budgets": list(entries), "no_new_templates": no_new_templates})


def statuses(report: mcpeval_nb.GateReport) -> dict[tuple[str, str, str], str]:
    return {(c.server, c.tool, c.limit_name): c.status for c in report.checks}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    write_calls(root, "docs", "search", list(range(1, 21)))
    write_calls(root, "docs", "fetch", [5] * 100, errors=10)
    write_calls(root, "docs", "tiny", [5, 5, 5])
    write_calls(root, "docs", "search", [10_000] * 50, kind="synthetic")  # probe runs are not traffic
    return root


def test_a_latency_budget_just_met_passes_and_just_missed_fails(store: Path) -> None:
    met = gate(store, budgets({"server": "docs", "tool": "search", "p95_ms": 19.05, "p99_ms": 19.81}))
    assert statuses(met) == {("docs", "search", "p95_ms"): "pass", ("docs", "search", "p99_ms"): "pass"}
    assert [round(c.observed or 0, 6) for c in met.checks] == [19.05, 19.81]
    assert met.exit_code == 0
    missed = gate(store, budgets({"server": "docs", "tool": "search", "p95_ms": 19.04}))
    assert statuses(missed) == {("docs", "search", "p95_ms"): "fail"} and missed.exit_code == 1
    assert missed.checks[0].calls == 20  # the 50 synthetic probe calls are not judged


def test_the_error_rate_is_judged_on_its_wilson_interval(store: Path) -> None:
    low, high = mcpeval_nb.wilson_interval(10, 100)
    assert (round(low, 4), round(high, 4)) == (0.0552, 0.1744)
    for limit, expected in ((0.05, "fail"), (0.06, "warn"), (0.18, "pass")):
        report = gate(store, budgets({"server": "docs", "tool": "fetch", "max_error_rate": limit}))
        check = report.checks[0]
        assert (check.status, check.observed, check.low, check.high) == (expected, 0.1, low, high)
        assert report.exit_code == (1 if expected == "fail" else 0)


def test_a_small_sample_warns_instead_of_failing_and_min_calls_leaves_it_unjudged(store: Path) -> None:
    report = gate(store, budgets({"server": "docs", "tool": "tiny", "max_error_rate": 0.05}))
    assert statuses(report) == {("docs", "tiny", "max_error_rate"): "warn"} and report.exit_code == 0
    report = gate(
        store,
        budgets({"server": "docs", "tool": "tiny", "max_error_rate": 0.05, "p95_ms": 1, "min_calls": 4}),
    )
    assert set(statuses(report).values()) == {"not-judged"}
    assert [c.reason for c in report.checks] == ["gate-too-few-calls"] * 2 and report.exit_code == 0


def test_the_most_specific_entry_wins_and_an_unseen_named_tool_is_not_judged(store: Path) -> None:
    report = gate(
        store,
        budgets(
            {"server": "*", "tool": "*", "p95_ms": 1},
            {"server": "docs", "p95_ms": 100},
            {"server": "*", "tool": "search", "p95_ms": 2},
            {"server": "docs", "tool": "search", "p95_ms": 50},
            {"server": "docs", "tool": "absent", "p95_ms": 50},
        ),
    )
    limits = {(c.tool, c.limit_name): (c.limit, c.budget, c.status) for c in report.checks}
    assert limits == {
        ("absent", "p95_ms"): (50, 4, "not-judged"),
        ("fetch", "p95_ms"): (100, 1, "pass"),
        ("search", "p95_ms"): (50, 3, "pass"),
        ("tiny", "p95_ms"): (100, 1, "pass"),
    }


def test_since_leaves_out_earlier_days(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write_calls(root, "docs", "search", [900] * 30, day="2026-08-01")
    write_calls(root, "docs", "search", [10] * 30, day="2026-08-05")
    spec = budgets({"p95_ms": 100})
    assert gate(root, spec).exit_code == 1
    report = gate(root, spec, since="2026-08-02")
    assert report.exit_code == 0 and report.checks[0].calls == 30 and report.since == "2026-08-02"
    with pytest.raises(mcpeval_nb.UsageError, match="--since must be a day"):
        gate(root, spec, since="yesterday")


@pytest.mark.parametrize("kind", ["envelope", "parquet"])
def test_a_baseline_without_a_template_fails_no_new_templates_and_names_only_the_new_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    before, now = tmp_path / "before", tmp_path / "now"
    write_calls(before, "docs", "fetch", [5] * 20, errors=4, message="upstream refused after 12 ms")
    write_calls(now, "docs", "fetch", [5] * 20, errors=4, message="upstream refused after 99 ms")
    write_calls(now, "docs", "search", [5] * 20, errors=3, message="index shard 7 is missing")
    baseline = tmp_path / "baseline"
    args = (
        ["share", "--root", str(before), "--dir", str(baseline)]
        if kind == "envelope"
        else ["export-parquet", "--root", str(before), "--dest", str(baseline)]
    )
    assert cli(capsys, *args)[0] == 0
    spec = budgets(no_new_templates=True)
    report = gate(now, spec, baseline=baseline)
    [check] = report.checks
    assert (check.limit_name, check.status, check.reason) == (
        "no_new_templates",
        "fail",
        "gate-new-error-template",
    )
    assert [(t.count, t.tools) for t in check.new_templates] == [(3, ("search",))]
    assert gate(before, spec, baseline=baseline).checks[0].status == "pass"


def test_no_new_templates_needs_a_usable_baseline(store: Path, tmp_path: Path) -> None:
    spec = budgets(no_new_templates=True)
    with pytest.raises(mcpeval_nb.UsageError, match="pass --baseline"):
        gate(store, spec)
    (tmp_path / "empty").mkdir()
    with pytest.raises(mcpeval_nb.DocumentError, match="neither a share envelope"):
        gate(store, spec, baseline=tmp_path / "empty")
    with pytest.raises(mcpeval_nb.DocumentError, match="is not a directory"):
        gate(store, spec, baseline=tmp_path / "missing")


def _cli_store(tmp_path: Path) -> tuple[Path, Path, Path]:
    root = tmp_path / "root"
    write_calls(root, "docs", "search", list(range(1, 21)))
    write_calls(root, "docs", "fetch", [5] * 100, errors=10)
    write_calls(root, "docs", "tiny", [5, 5, 5], errors=1, message="tiny broke")
    baseline = tmp_path / "base"
    write_calls(baseline, "docs", "fetch", [5] * 10, errors=1)
    path = tmp_path / "budgets.json"
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "budgets": [
                    {"server": "docs", "tool": "search", "p95_ms": 500, "p99_ms": 19.5},
                    {"server": "docs", "tool": "*", "max_error_rate": 0.12, "min_calls": 20},
                ],
                "no_new_templates": True,
            }
        )
    )
    return root, baseline, path


def test_the_command_prints_every_format_and_exits_one_on_a_failed_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, baseline, path = _cli_store(tmp_path)
    common = ["gate", "--budgets", str(path), "--root", str(root), "--baseline", str(baseline)]
    for fmt, name in (
        ("text", "gate.txt"),
        ("markdown", "gate.md"),
        ("json", "gate.json"),
        ("junit", "gate.xml"),
    ):
        code, out, err = cli(capsys, *common, "--format", fmt)
        assert (code, err) == (1, "")
        golden(name, out)
    doc = json.loads(cli(capsys, *common, "--format", "json")[1])
    assert doc["schema"] == "mcpeval-nb.gate-report/v1" and doc["passed"] is False
    assert doc["summary"] == {"fail": 2, "not_judged": 1, "pass": 1, "warn": 1}
    cases = outcomes(junit(cli(capsys, *common, "--format", "junit")[1]))
    assert cases == {  # the most specific entry wins whole: docs/search has no error-rate budget
        "docs fetch max_error_rate": ("passed", None),  # a warning passes (its note is system-out)
        "docs search p95_ms": ("passed", None),
        "docs search p99_ms": ("failure", "gate-p99-exceeded"),
        "docs tiny max_error_rate": ("skipped", "not judged: calls=3 observed=- limit=0.1200"),
        "* * no_new_templates": ("failure", "gate-new-error-template"),
    }


def test_the_command_exits_two_on_bad_input_and_zero_when_every_check_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, _, path = _cli_store(tmp_path)
    code, _, err = cli(capsys, "gate", "--budgets", str(path), "--root", str(root))
    assert code == 2 and "pass --baseline" in err
    code, _, err = cli(capsys, "gate", "--budgets", str(tmp_path / "nope.json"), "--root", str(root))
    assert code == 2 and "cannot read budgets file" in err
    code, _, err = cli(capsys, "gate", "--budgets", str(path), "--root", str(root), "--since", "08/01")
    assert code == 2 and "--since must be a day" in err
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps({"version": 1, "budgets": [{"p95_ms": 1000}]}))
    code, out, _ = cli(capsys, "gate", "--budgets", str(ok), "--root", str(root))
    assert (
        code == 0
        and out.splitlines()[-1] == "gate passed passed=3 failed=0 warned=0 not_judged=0 (123 calls)"
    )


def test_schema_budgets_prints_the_published_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "schema", "budgets")
    assert code == 0 and json.loads(out) == mcpeval_nb.budgets_schema()
    assert out == mcpeval_nb.budgets_schema_text()
