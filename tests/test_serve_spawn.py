"""serve's process-launching tools with ``--allow-spawn``, against the package's fixture servers: each
happy path, the mutation refusal (even with a sandbox), one run at a time, and a stop that cancels a run
and reaps its server processes."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mcpeval_nb as me
from mcpeval_nb.demo.fixture_findings import REPRO_MANIFEST, capture_broken_sessions
from mcpeval_nb.testing import server_command
from tests.serve_support import call, children, sdk, serving

FIXTURE_MANIFEST = json.loads((Path(__file__).parents[1] / "data" / "manifests" /
                               "probe-fixture.manifest.json").read_text())
SLOW = {"version": 1, "sandboxes": {}, "probes": [
    {"id": "slow-read", "probe": "degradation-over-n", "access": "read_only", "tool": "slow",
     "arguments": {"ms": 20000}, "max_attempts": 2}]}


@pytest.fixture
def server(root: Path) -> Iterator[me.FindingsServer]:
    with serving(root, allow_spawn=True) as running:
        yield running


@pytest.fixture(autouse=True)
def no_child_left() -> Iterator[set[int]]:
    """Children this process had before the test (other tests' may still run); none may be added."""
    before = children()
    yield before
    assert children() - before == set()


def _result(reply: dict[str, Any]) -> dict[str, Any]:
    assert "result" in reply, reply
    result: dict[str, Any] = reply["result"]
    return result


def test_run_probe_returns_the_report_and_records_the_trend(server: me.FindingsServer, root: Path) -> None:
    result = _result(call(server.address, "run_probe", {"manifest": FIXTURE_MANIFEST, "server_label": "fx",
                                                       "command": server_command("probe_clean")}))
    report = me.parse_report(json.dumps(result["structuredContent"]))
    assert report.server == "fx" and report.passed and report.readiness is not None
    assert [c.id for c in report.cases] == [p["id"] for p in FIXTURE_MANIFEST["probes"]]
    assert result["content"][0]["text"] == f"all cases passed; readiness {report.readiness.score}/100"
    (point,) = me.load_trends(root=root) or []
    assert (point.server, point.score, point.manifest_sha256) == ("fx", report.readiness.score,
                                                                  report.manifest_sha256)


def test_run_probe_lists_failing_cases_with_reason_and_hint(server: me.FindingsServer) -> None:
    result = _result(call(server.address, "run_probe", {"manifest": FIXTURE_MANIFEST,
                                                       "command": server_command("probe_clean", "broken")}))
    report = result["structuredContent"]
    failed = [c for c in report["cases"] if not c["passed"]]
    assert failed and report["server"] == "probed"
    assert result["content"][0]["text"].splitlines()[:len(failed)] == [
        f"{c['id']}: {c['reason']} — {c['hint']}" for c in failed]


def test_run_probe_refuses_a_mutating_case_even_with_a_sandbox(server: me.FindingsServer,
                                                               tmp_path: Path) -> None:
    marker = tmp_path / "started"
    mutating = {"version": 1, "sandboxes": {"box": {"description": "scratch"}}, "probes": [
        {"id": "writes", "probe": "degradation-over-n", "access": "mutating", "sandbox": "box",
         "tool": "recover_session", "arguments": {}, "max_attempts": 2}]}
    command = ["python3", "-c", f"open({str(marker)!r}, 'w').close()"]
    reply = call(server.address, "run_probe", {"manifest": mutating, "command": command})
    assert reply["error"]["code"] == -32000 and "--allow-mutation" in reply["error"]["message"]
    assert not marker.exists()


@pytest.mark.parametrize(("arguments", "message"), [
    ({"manifest": FIXTURE_MANIFEST}, "give exactly one of command (a non-empty list of strings) or url"),
    ({"manifest": FIXTURE_MANIFEST, "command": ["x"], "url": "http://127.0.0.1:9/mcp"},
     "give exactly one of command (a non-empty list of strings) or url"),
    ({"manifest": FIXTURE_MANIFEST, "url": "https://example.com/mcp"},
     "url must be a credential-free loopback http(s) endpoint without query or fragment (serve never "
     "contacts a remote endpoint)"),
    ({"manifest": FIXTURE_MANIFEST, "command": []}, "run_probe: argument command is invalid (minItems)"),
    ({"manifest": {"version": 2, "probes": []}, "command": ["x"]}, None),
])
def test_run_probe_usage_errors_start_nothing(server: me.FindingsServer, arguments: dict[str, Any],
                                              message: str | None) -> None:
    reply = call(server.address, "run_probe", arguments)
    assert reply["error"]["code"] == -32000
    if message is not None:
        assert reply["error"]["message"] == message


def test_a_url_target_runs_over_loopback_http(server: me.FindingsServer) -> None:
    reply = call(server.address, "score", {"url": "http://127.0.0.1:9/mcp", "server_label": "closed-port"})
    report = _result(reply)["structuredContent"]
    assert report["readiness"] is None
    assert report["readiness_error"] in ("transport-error", "transport-closed")


def test_score_and_scaffold_write_only_the_trend_point(server: me.FindingsServer, root: Path) -> None:
    scored = _result(call(server.address, "score", {"command": server_command("probe_clean"),
                                                   "server_label": "sc"}))["structuredContent"]
    assert scored["readiness"]["score"] >= 0 and scored["manifest_sha256"] is None
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    built = _result(call(server.address, "scaffold", {"command": server_command("probe_clean")}))
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before
    manifest = built["structuredContent"]["manifest"]
    assert me.parse_manifest(manifest).cases and json.loads(built["content"][0]["text"]) == manifest
    decisions = {d["tool"]: d["decision"] for d in built["structuredContent"]["decisions"]}
    assert decisions["read_counter"].startswith("candidate")
    assert decisions["break_session"].startswith("skipped")
    assert [p.server for p in me.load_trends(root=root) or []] == ["sc"]


def test_verify_finding_moves_the_lifecycle(server: me.FindingsServer, root: Path) -> None:
    capture_broken_sessions(root, sessions=3)
    me.promote(root)
    (finding,) = [r["finding_id"] for r in me.findings(root).to_pylist() if r["tool"] == "read_counter"]
    arguments = {"finding_id": finding, "case": "repeat-read", "manifest": REPRO_MANIFEST,
                 "command": server_command("probe_clean", "clean")}
    result = _result(call(server.address, "verify_finding", arguments))
    assert result["structuredContent"] == {
        "finding_id": finding, "case": "repeat-read", "state": "verifying", "consecutive_passes": 1,
        "passed": True, "errored": False, "reason": None}
    assert result["content"][0]["text"] == f"{finding} state=verifying probe=repeat-read consecutive_passes=1"
    missing = call(server.address, "verify_finding", {**arguments, "case": "absent"})
    assert missing["error"]["message"] == "probe case absent is not in the manifest"


def _slow_run(server: me.FindingsServer, replies: list[dict[str, Any]], before: set[int]) -> threading.Thread:
    def run() -> None:
        replies.append(call(server.address, "run_probe", {"manifest": SLOW, "server_label": "slow",
                                                         "command": server_command("transport_fault")}))
    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 120  # a server start; minutes only when the machine is starved
    while not children() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert children() - before, "the slow run never started its server"
    return thread


def test_one_spawned_run_at_a_time_and_a_second_call_answers_busy(root: Path,
                                                                  no_child_left: set[int]) -> None:
    replies: list[dict[str, Any]] = []
    with serving(root, allow_spawn=True) as running:
        thread = _slow_run(running, replies, no_child_left)
        busy = call(running.address, "score", {"command": server_command("probe_clean")})
        assert busy["error"]["message"] == "busy: another spawned run is in progress; try again when it ends"
        assert len(call(running.address, "list_findings", {})["result"]["content"]) == 1  # reads still answer
        # closing cancels the run: its session closes, its server is terminated and reaped
    thread.join(120)  # a bound for a hung close only: the empty result below shows the run was cancelled
    assert not thread.is_alive()
    result = replies[0]["result"]
    assert result["structuredContent"]["cases"] == [] and result["structuredContent"]["readiness"] is None
    assert result["content"][0]["text"] == "cancelled: 1 case(s) not run"
    assert children() - no_child_left == set()


def test_the_sdk_client_runs_every_spawn_tool_and_its_output_schema_holds(server: me.FindingsServer,
                                                                          root: Path) -> None:
    capture_broken_sessions(root, sessions=3)
    me.promote(root)
    (finding,) = [r["finding_id"] for r in me.findings(root).to_pylist() if r["tool"] == "read_counter"]
    clean = server_command("probe_clean")
    calls = [("run_probe", {"manifest": FIXTURE_MANIFEST, "command": clean}),
             ("scaffold", {"command": clean}), ("score", {"command": clean, "server_label": "sdk"}),
             ("verify_finding", {"finding_id": finding, "case": "repeat-read", "manifest": REPRO_MANIFEST,
                                 "command": clean})]

    async def work(client: Any) -> list[Any]:
        await client.list_tools()  # the SDK validates each result against the listed output schema
        return [await client.call_tool(name, arguments) for name, arguments in calls]

    results = sdk(server.url, work)
    assert [r.is_error for r in results] == [False] * 4
    assert results[0].structured_content["schema"] == "mcpeval.probe-report/v2"
    assert results[1].structured_content["manifest"]["version"] == 1
    assert results[2].structured_content["server"] == "sdk"
    assert results[3].structured_content["state"] == "verifying"
