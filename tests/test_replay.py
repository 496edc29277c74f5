"""replay against real builds of the ``behaviour`` fixture server, recorded through the real stdio shim: the
unchanged build reports no regression; builds with a planted error rate, a new error code and a latency
regression are each found, and nothing else; the manifest's authority, the mutation gate and fill values;
the journal's synthetic records; no canary anywhere.

Outcomes are deterministic: the recording, the draw and every build use fixed seeds (the fixture draws
each tool's outcomes from its own seeded stream), so only latencies vary between runs, and the latency
rule's margin (25 ms, or half the recorded p95's upper bound) is far from both the unchanged build
(``status`` p95 about 10 ms) and the planted one (about 60 ms).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import mcpeval_nb as me
from mcpeval_nb.testing.traffic import CANARY_ARGUMENT, behaviour_calls, behaviour_command, record_traffic
from tests import waiting

SERVER = "behaviour"
FILL = "CANARY-manifest-fill"
MANIFEST: dict[str, Any] = {"version": 1, "sandboxes": {"notes": {"description": "scratch"}}, "probes": [
    {"id": "search-works", "probe": "degradation-over-n", "access": "read_only", "tool": "search",
     "arguments": {"query": FILL, "limit": 3}, "max_attempts": 2},
    {"id": "item-lookup", "probe": "degradation-over-n", "access": "read_only", "tool": "get_item",
     "arguments": {"item_id": FILL}, "max_attempts": 2},
    {"id": "status-fast", "probe": "latency-budget", "access": "read_only", "tool": "status", "arguments": {},
     "attempts": 2, "max_latency_ms": 1000},
    {"id": "note", "probe": "degradation-over-n", "access": "mutating", "sandbox": "notes",
     "tool": "write_note", "arguments": {"text": FILL}, "max_attempts": 2}]}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("replay") / "root"
    record_traffic(root, server=SERVER, command=behaviour_command(seed=1), calls=behaviour_calls(300, seed=1),
                   sessions=3)
    notes = [("write_note", {"text": f"{CANARY_ARGUMENT} note {i}"}) for i in range(12)]
    record_traffic(root, server=SERVER, command=behaviour_command(seed=1), calls=notes)
    return root


def _replay(root: Path, plants: tuple[str, ...] = (), **options: Any) -> me.ReplayReport:
    options = {"sample": 300, "seed": 3, **options}
    return me.replay(behaviour_command(seed=2, plants=plants), server=SERVER, manifest=MANIFEST, root=root,
                     **options)


def test_the_unchanged_build_reports_no_regression(recorded: Path) -> None:
    report = _replay(recorded)
    assert report.exit_code == 0 and report.regressed == (), report.render("text")
    assert {t.tool for t in report.tools} >= {"search", "get_item", "status"}
    assert all(t.verdict in ("same", "insufficient-evidence", "improved") for t in report.tools)


@pytest.mark.parametrize(("plant", "tool", "reason"), [
    ("error-rate", "get_item", "failure-rate"),
    ("new-code", "search", "new-code"),
    ("slow", "status", "latency"),
])
def test_each_planted_regression_is_found_and_nothing_else(recorded: Path, plant: str, tool: str,
                                                           reason: str) -> None:
    report = _replay(recorded, (plant,))
    assert report.regressed == (tool,), report.render("text")
    verdict = next(t for t in report.tools if t.tool == tool)
    assert reason in verdict.reasons and report.exit_code == 1
    if plant == "new-code":
        assert verdict.new_codes == ("-32050",)


def test_the_manifest_decides_which_tools_are_called_and_fills_the_placeholders(recorded: Path) -> None:
    report = _replay(recorded)
    skipped = report.skipped
    assert skipped.get("mutation-gated", 0) > 0  # write_note's case is mutating; no --allow-mutation
    assert "unfillable" not in skipped and "not-in-manifest" not in skipped
    allowed = _replay(recorded, allow_mutation=True)
    assert "mutation-gated" not in allowed.skipped
    assert any(t.tool == "write_note" and t.replayed.calls > 0 for t in allowed.tools)
    partial = {**MANIFEST, "probes": [p for p in MANIFEST["probes"] if p["tool"] != "status"]}
    partial["probes"][1] = {**partial["probes"][1], "arguments": {}}
    narrowed = me.replay(behaviour_command(seed=2), server=SERVER, manifest=partial, root=recorded, sample=60,
                         seed=3)
    assert narrowed.skipped.get("not-in-manifest", 0) > 0 and narrowed.skipped.get("unfillable", 0) > 0
    assert all(t.replayed.calls == 0 for t in narrowed.tools if t.tool in ("status", "get_item"))


def test_replayed_calls_are_journaled_as_synthetic_records_without_a_canary(recorded: Path,
                                                                            tmp_path: Path) -> None:
    store = me.open_store(recorded)
    before = store.calls.num_rows
    report = _replay(recorded, sample=40)
    store.refresh()
    added = store.calls.slice(before)
    assert added.num_rows == report.made
    assert set(added["kind"].cast("string").to_pylist()) == {"synthetic"}
    text = "".join(p.read_text() for p in (recorded / "store").glob("*.jsonl"))
    outputs = [report.render(f) for f in ("text", "json", "junit")]
    profile = me.mock_profile(recorded, server=SERVER).to_text()
    for marker in (CANARY_ARGUMENT, FILL, "CANARY"):
        assert marker not in text and marker not in profile
        assert not [o for o in outputs if marker in o]


def test_the_cli_prints_each_format_and_exits_1_on_a_regression(recorded: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps(MANIFEST))
    argv = [sys.executable, "-m", "mcpeval_nb", "replay", "--server", SERVER, "--root", str(recorded),
            "--manifest", str(manifest), "--sample", "200", "--seed", "3"]
    build = ["--", *behaviour_command(seed=2, plants=("error-rate",))]
    done = waiting.run([*argv, "--format", "json", *build], capture_output=True, text=True, stall_s=600)
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout)
    assert document["schema"] == "mcpeval-nb.replay-report/v1" and document["regressed"] == ["get_item"]
    assert "replay [" in done.stderr  # progress on stderr
    junit = waiting.run([*argv, "--format", "junit", *build], capture_output=True, text=True, stall_s=600)
    assert junit.returncode == 1 and "<failure" in junit.stdout and 'name="get_item"' in junit.stdout
    refused = waiting.run([*argv, "--sample", "0", *build], capture_output=True, text=True, stall_s=600)
    assert refused.returncode == 2 and "--sample must be a positive number" in refused.stderr


def test_the_table_and_the_chart_show_recorded_against_replayed(recorded: Path, tmp_path: Path) -> None:
    from mcpeval_nb import charts

    report = _replay(recorded, ("slow",), sample=150)
    table = report.table
    assert table.column_names[:4] == ["server", "tool", "verdict", "reasons"]
    assert table.num_rows == len(report.tools)
    ax = charts.plot_replay_comparison(report)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert "status" in " ".join(labels)
    ax.figure.savefig(tmp_path / "replay.png")
