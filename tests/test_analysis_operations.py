"""The operation view over a store of 2026-07-28 traffic written by the real correlator and writer: eras,
operations, server time apart from the client's wait, in tables, summary, the chart and the gate; and no
canary of the traffic anywhere in them."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import pyarrow.compute as pc
import pytest
from click.testing import CliRunner

import mcpeval_nb as m
from mcpeval_nb import charts
from mcpeval_nb.cli import cli
from mcpeval_nb.testing.operations import CANARY, operations_store

matplotlib.use("Agg")


@pytest.fixture
def ops_root(tmp_path: Path) -> Path:
    root = tmp_path / "ops"
    operations_store(root, operations=36, seed=3)
    return root


def test_every_operation_is_one_row_with_its_rounds_wait_and_server_time(ops_root: Path) -> None:
    calls = m.open_store(ops_root).calls
    assert not [r for r in calls.column("method").to_pylist() if r.startswith("tasks/")]  # polls: no rows
    rows = calls.to_pylist()
    multi = [r for r in rows if (r["rounds"] or 1) > 1]
    assert multi and all(r["wait_ms"] is not None and r["server_ms"] == r["latency_ms"] - r["wait_ms"]
                         for r in multi)
    legacy = [r for r in rows if r["era"] == "legacy"]
    assert legacy and all(r["server_ms"] == r["latency_ms"] and r["protocol"] is None for r in legacy)
    tasks = [r for r in rows if r["task_status"] is not None]
    assert tasks and {r["result_type"] for r in tasks} == {"task"} and all(r["polls"] >= 3 for r in tasks)


def test_era_mix_and_operation_summary_agree_with_the_rows(ops_root: Path) -> None:
    calls = m.open_store(ops_root).calls
    mix = {r["era"]: r for r in m.era_mix(calls, by=()).to_pylist()}
    assert mix["modern"]["protocol"] == "2026-07-28" and mix["legacy"]["protocol"] is None
    assert mix["modern"]["calls"] + mix["legacy"]["calls"] == calls.num_rows
    assert abs(mix["modern"]["share"] + mix["legacy"]["share"] - 1) < 1e-9
    summary = {r["tool"]: r for r in m.operation_summary(calls).to_pylist()}
    rows = [r for r in calls.to_pylist()
            if r["tool"] == "ask" and ((r["rounds"] or 1) > 1 or r["result_type"] or r["flags"])]
    ask = summary["ask"]
    assert ask["operations"] == len(rows)
    assert ask["abandoned"] == sum(r["error_code"] == "capture-operation-abandoned" for r in rows) > 0
    assert ask["flagged"] == sum(r["flags"] == "state-changed" for r in rows) > 0
    assert ask["wait_share"] == pytest.approx(sum(r["wait_ms"] or 0 for r in rows)
                                              / sum(r["latency_ms"] for r in rows))
    job = summary["job"]
    assert job["tasks"] == job["operations"] and job["task_failed"] + job["task_cancelled"] <= job["tasks"]


def test_latency_can_be_judged_on_server_time_and_the_gate_does(ops_root: Path, tmp_path: Path) -> None:
    calls = m.open_store(ops_root).calls
    whole = {r["tool"]: r for r in m.latency_summary(calls, by=("tool",)).to_pylist()}
    server = {r["tool"]: r for r in m.latency_summary(calls, by=("tool",), value="server_ms").to_pylist()}
    assert server["ask"]["p95"] < 1000 < whole["ask"]["p95"]  # people took seconds to answer
    budgets = tmp_path / "budgets.json"
    budgets.write_text(json.dumps({"version": 1,
                                   "budgets": [{"server": "eras", "tool": "ask", "p95_ms": 1000}]}))
    report = m.gate(ops_root, budgets)
    (check,) = [c for c in report.checks if c.tool == "ask" and c.limit_name == "p95_ms"]
    assert check.status == "pass" and check.observed == pytest.approx(server["ask"]["p95"])


def test_summary_shows_eras_and_operations_and_no_canary(ops_root: Path) -> None:
    out = CliRunner().invoke(cli, ["summary", "--root", str(ops_root)])
    assert out.exit_code == 0, out.output
    assert "eras: legacy" in out.output and "modern 2026-07-28" in out.output
    assert "operations over several requests" in out.output
    (ask,) = [line for line in out.output.splitlines()
              if line.startswith("  eras ask n=") and "rounds" in line]
    assert "abandoned=" in ask and "flagged=" in ask and "wait=" in ask
    assert CANARY not in out.output and "CANARY" not in out.output


def test_a_legacy_store_gets_the_summary_it_always_had(tmp_path: Path) -> None:
    from mcpeval_nb.testing.synthetic import synthetic_store

    synthetic_store(tmp_path / "legacy", calls=50, days=1)
    out = CliRunner().invoke(cli, ["summary", "--root", str(tmp_path / "legacy")])
    assert out.exit_code == 0 and "eras:" not in out.output and "operations over" not in out.output


def test_the_operations_chart_draws_server_and_client_time_per_tool(ops_root: Path) -> None:
    calls = m.open_store(ops_root).calls
    ax = charts.plot_operations(calls)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert set(labels) == {"ask", "job"}
    texts = " ".join(t.get_text() for t in ax.texts) + ax.get_title() + ax.get_xlabel()
    assert "rounds (median)" in texts and "tasks" in texts and "CANARY" not in texts
    empty = charts.plot_operations(calls.filter(pc.equal(calls.column("era").cast("string"), "legacy")))
    assert "no operations to show" in " ".join(t.get_text() for t in empty.texts)


def test_no_canary_of_the_traffic_reaches_the_store(ops_root: Path) -> None:
    text = "".join(p.read_text() for p in (ops_root / "store").rglob("*.jsonl"))
    assert "CANARY" not in text and '"ext":{' in text
