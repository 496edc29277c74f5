"""run_probes: synthetic journal, workflow, reconnects, usage errors before launch, cancel, progress."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mcpeval_nb
from mcpeval_nb import ProbeOptions, ProgressEvent, UsageError, run_probes
from tests.probe_support import SANDBOXES, case, fixture, manifest, run, verdicts, writer_case

STEP_OK = {"outcome": "ok", "equals": {"status": "ready"},
           "required_result_paths": ["/structuredContent/items/0/ready", "/structuredContent/a~1b/~0state"],
           "equals_paths": {"/structuredContent/status": "ready", "/structuredContent/nullable": None}}
WORKFLOW = case("flow", "workflow", repetitions=2, steps=[
    {"tool": "read_status", "arguments": {}, "expect": STEP_OK},
    {"tool": "read_other", "arguments": {}, "expect": {"outcome": "ok"}},
    {"tool": "invalid_read", "arguments": {}, "expect": {"outcome": "error", "error_code": -32602}},
])


def _journal(root: Path) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    for path in sorted((root / "store").glob("calls-*.jsonl")):
        lines += [json.loads(line) for line in path.read_text().splitlines()]
    return lines


def test_every_tool_call_is_journaled_as_a_synthetic_record_shaped_by_the_store_sanitizer(root: Path) -> None:
    doc = manifest(case("repeat", "degradation-over-n", tool="read_counter",
                        arguments={"secret": "CANARY-manifest-argument", "limit": 5}, max_attempts=3),
                   writer_case("honest", "error-honesty", tool="break_session", arguments={}, max_attempts=3,
                               expect_retryable=False), sandboxes=SANDBOXES)
    report = run_probes(fixture("probe_clean"), manifest=doc,
                        options=ProbeOptions(server="demo", battery=None, allow_mutation=True))
    assert report.exit_code == 0
    records = _journal(root)
    assert [r["seq"] for r in records] == [1, 2, 3, 4, 5]
    first = records[0]
    assert list(first) == ["ts", "session", "seq", "server", "method", "tool", "args", "latency_ms",
                           "outcome", "shim_self_us", "kind"]
    assert first["args"] == {"limit": "num:5", "secret": "str<32"}
    assert (first["kind"], first["shim_self_us"], first["method"], first["server"]) == (
        "synthetic", 0, "tools/call", "demo")
    assert len({r["session"] for r in records}) == 1 and first["session"].startswith("session:")
    failed = records[3]
    assert failed["outcome"] == "error" and failed["error"]["code"] == -32002
    assert failed["error"]["retryable"] is False and failed["error"]["template"] == "{message}"
    assert "CANARY" not in "".join(json.dumps(r) for r in records)


def test_each_run_uses_a_fresh_session(root: Path) -> None:
    doc = manifest(case("repeat", "degradation-over-n", tool="read_counter", arguments={}, max_attempts=2))
    for _ in range(2):
        run_probes(fixture("probe_clean"), manifest=doc, options=ProbeOptions(server="demo", battery=None))
    sessions = [r["session"] for r in _journal(root)]
    assert sessions[0] == sessions[1] != sessions[2] == sessions[3]


def test_workflow_checks_results_by_json_pointer_on_its_own_connection(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    report = run(fixture("workflow", "clean"), manifest(WORKFLOW), env={"WORKFLOW_CALL_LOG": str(log)})
    assert verdicts(report) == {"flow": (True, None, None)}
    assert report.cases[0].attempts == 6 and report.cases[0].tool == "read_status"
    events = log.read_text().splitlines()
    # the gate connection initializes once, the workflow's own connection once more
    assert events.count("initialize") == 2 and len(events) == 8


def test_poisoned_workflow_fails_at_the_first_mismatching_call_with_its_number_in_the_hint() -> None:
    report = run(fixture("workflow", "poison"), manifest(WORKFLOW))
    assert verdicts(report) == {"flow": (False, "value-mismatch", 4)}
    assert report.cases[0].hint is not None and report.cases[0].hint.startswith("workflow call 4: ")


def test_error_poisoning_and_malformed_error_flags_are_judged_per_call() -> None:
    assert verdicts(run(fixture("workflow", "error-poison"), manifest(WORKFLOW))) == {
        "flow": (False, "value-mismatch", 4)}
    # an isError flag that is a string (not true) classifies the call as a success (SPEC 8.3)
    assert verdicts(run(fixture("workflow", "malformed-error-flag"), manifest(WORKFLOW))) == {
        "flow": (True, None, None)}


def test_workflow_that_loses_its_server_reports_the_transport_reason_without_a_verdict() -> None:
    report = run(fixture("workflow", "crash"), manifest(WORKFLOW))
    assert report.cases[0].reason == "transport-closed" and report.exit_code == 3


@pytest.mark.parametrize("kind", ["degradation-over-n", "error-honesty", "payload-bounds", "latency-budget",
                                  "schema-guessability", "instruction-fidelity"])
def test_a_read_only_case_naming_a_writer_tool_is_refused_before_any_call(tmp_path: Path, kind: str) -> None:
    fields: dict[str, Any] = {
        "degradation-over-n": {"max_attempts": 2},
        "error-honesty": {"max_attempts": 2, "expect_retryable": False},
        "payload-bounds": {"field": "note", "size_bytes": 10, "expect_handled": True},
        "latency-budget": {"attempts": 2, "max_latency_ms": 1000},
        "schema-guessability": {},
        "instruction-fidelity": {"expect": {"outcome": "ok"}},
    }[kind]
    log = tmp_path / "calls.log"
    doc = manifest(case("careful", kind, tool="read_other", arguments={}, **fields))
    with pytest.raises(UsageError, match="probe case careful: a read-only case refuses a tool annotated as a "
                                         "writer"):
        run(fixture("workflow", "writer"), doc, env={"WORKFLOW_CALL_LOG": str(log)})
    assert "initialize" in log.read_text() and "tools/call" not in log.read_text()


def test_a_writer_tool_runs_only_in_a_sandboxed_mutating_case_with_the_operator_flag(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    mutating = {"id": "writes", "probe": "degradation-over-n", "access": "mutating", "sandbox": "box",
                "tool": "read_other", "arguments": {}, "max_attempts": 2}
    doc = manifest(mutating, sandboxes={"box": {"description": "the fixture's own memory"}})
    with pytest.raises(UsageError, match="mutating probes require --allow-mutation"):
        run(fixture("workflow", "writer"), doc, env={"WORKFLOW_CALL_LOG": str(log)})
    report = run(fixture("workflow", "writer"), doc, allow_mutation=True, env={"WORKFLOW_CALL_LOG": str(log)})
    assert report.cases[0].attempts == 2 and "tools/call" in log.read_text()


def test_workflow_refuses_writers_and_undeclared_tools_before_any_case_runs(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    with pytest.raises(UsageError, match="workflow refuses a tool annotated as a writer"):
        run(fixture("workflow", "writer"), manifest(WORKFLOW), env={"WORKFLOW_CALL_LOG": str(log)})
    assert "tools/call" not in log.read_text()
    doc = manifest(case("absent", "degradation-over-n", tool="no_such_tool", arguments={}, max_attempts=2))
    with pytest.raises(UsageError, match="probe tool was not declared by the server"):
        run(fixture("probe_clean"), doc)


def test_mutation_gate_refuses_before_any_server_starts(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    doc = manifest({"id": "writes", "probe": "degradation-over-n", "access": "mutating", "sandbox": "box",
                    "tool": "read_status", "arguments": {}, "max_attempts": 2},
                   sandboxes={"box": {"description": "scratch"}})
    with pytest.raises(UsageError, match="mutating probes require --allow-mutation"):
        run(fixture("workflow"), doc, env={"WORKFLOW_CALL_LOG": str(log)})
    assert not log.exists()
    report = run(fixture("workflow"), doc, env={"WORKFLOW_CALL_LOG": str(log)}, allow_mutation=True)
    assert report.passed and log.exists()


def test_invalid_label_and_missing_target_are_usage_errors() -> None:
    doc = manifest(case("pages", "pagination", max_pages=2))
    with pytest.raises(UsageError, match="server label is invalid"):
        run(fixture("probe_clean"), doc, server="bad label")
    with pytest.raises(UsageError, match="stdio command is required"):
        run([], doc)


def test_a_server_that_never_answers_gives_every_case_the_transport_reason() -> None:
    doc = manifest(case("pages", "pagination", max_pages=2), case("more", "pagination", max_pages=2))
    report = run(fixture("probe_clean", "early-exit"), doc)
    lost = (False, "transport-closed", None)
    assert verdicts(report) == {"pages": lost, "more": lost}
    assert report.exit_code == 3


def test_a_server_that_dies_at_start_is_reported_once_with_its_stderr_and_no_battery_retry() -> None:
    code = "import sys; print('config file missing', file=sys.stderr); sys.exit(2)"
    doc = manifest(case("pages", "pagination", max_pages=2), case("more", "pagination", max_pages=2))
    events: list[ProgressEvent] = []
    report = mcpeval_nb.run_probes([sys.executable, "-c", code], manifest=doc,
                                   options=ProbeOptions(server="demo", journal=False, history=False),
                                   progress=events.append)
    assert [e.diagnostic for e in events if e.diagnostic] == [
        "connect transport-closed: MCP server closed the connection\n"
        "  the server exited with status 2; its last stderr lines:\n  | config file missing"]
    assert report.readiness_error == "transport-closed" and report.exit_code == 3
    assert report.render_text().count("hint:") == 1


def test_the_case_after_a_lost_connection_runs_on_a_fresh_one() -> None:
    doc = manifest(case("crash", "degradation-over-n", tool="crash", arguments={}, max_attempts=2),
                   case("after", "degradation-over-n", tool="out_ok", arguments={}, max_attempts=2))
    events: list[ProgressEvent] = []
    report = mcpeval_nb.run_probes(fixture("probe_features"), manifest=doc,
                                   options=ProbeOptions(server="demo", battery=None, journal=False),
                                   progress=events.append)
    assert verdicts(report) == {"crash": (False, "transport-closed", 1), "after": (True, None, None)}
    diagnostics = [e.diagnostic for e in events if e.diagnostic]
    assert diagnostics == ["crash transport-closed: MCP server closed the connection\n"
                           "  the server exited with status 3 and wrote nothing to stderr"]
    assert [(e.phase, e.case_id, e.verdict) for e in events if e.phase != "diagnostic"] == [
        ("start", "crash", None), ("done", "crash", "error"),
        ("start", "after", None), ("done", "after", "pass")]


def test_cancelling_between_cases_leaves_the_rest_not_run_and_says_so() -> None:
    cancel = threading.Event()
    doc = manifest(*(case(f"c{i}", "pagination", max_pages=2) for i in range(4)))

    def progress(event: ProgressEvent) -> None:
        if event.phase == "done" and event.case_id == "c1":
            cancel.set()

    report = run_probes(fixture("probe_clean"), manifest=doc,
                        options=ProbeOptions(server="demo", battery=None, journal=False), progress=progress,
                        cancel=cancel)
    assert [c.id for c in report.cases] == ["c0", "c1"]
    assert report.cancelled and report.not_run == ("c2", "c3") and report.exit_code == 3
    assert "demo cancelled: 2 case(s) not run" in report.render_text()


def test_cancelling_during_a_case_stops_between_calls() -> None:
    cancel = threading.Event()
    doc = manifest(case("slow", "degradation-over-n", tool="slow", arguments={"ms": 200}, max_attempts=50))
    timer = threading.Timer(0.5, cancel.set)
    timer.start()
    try:
        report = run_probes(fixture("probe_features"), manifest=doc,
                            options=ProbeOptions(server="demo", battery=None, journal=False), cancel=cancel)
    finally:
        timer.cancel()
    assert report.cases == () and report.not_run == ("slow",)


def test_the_standard_battery_runs_after_the_cases_and_a_selected_run_never_runs_it() -> None:
    doc = manifest(case("pages", "pagination", max_pages=2))
    events: list[ProgressEvent] = []
    report = run(fixture("probe_clean"), doc, battery="standard", history=False, progress=events.append)
    phases = [e.phase for e in events if e.phase != "diagnostic"]
    assert phases == ["start", "done", "battery-start", "battery-done"]
    assert report.readiness is not None and report.readiness.standard == "mcpeval-standard/2"
    assert json.loads(report.dumps())["readiness"]["score"] == report.readiness.score
    for selection in ({"probe": "pagination"}, {"case_id": "pages"}):
        events.clear()
        report = run(fixture("probe_clean"), doc, battery="standard", progress=events.append, **selection)
        assert report.readiness is None and [e.phase for e in events] == ["start", "done"]


def test_a_battery_that_loses_its_transport_becomes_readiness_error() -> None:
    events: list[ProgressEvent] = []
    doc = manifest(case("pages", "pagination", max_pages=2))
    report = run(fixture("probe_clean"), doc, battery="standard", max_requests=8, progress=events.append)
    assert report.passed and report.readiness is None
    assert report.readiness_error == "evaluation-budget-exceeded" and report.exit_code == 3
    done = [e for e in events if e.phase == "battery-done"]
    assert done[0].verdict == "error"
    assert (done[0].diagnostic or "").startswith("readiness evaluation-budget-exceeded: ")


def test_a_battery_other_than_the_standard_one_is_refused_before_anything_starts() -> None:
    with pytest.raises(UsageError, match='battery must be "standard" or None'):
        run(fixture("probe_clean"), manifest(case("pages", "pagination", max_pages=2)), battery="custom")


@pytest.fixture
def workflow_http(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    log = tmp_path / "calls.log"
    proc = subprocess.Popen(fixture("workflow", "clean", "http"), stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "WORKFLOW_CALL_LOG": str(log)})
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip(), log
    finally:
        proc.terminate()
        proc.wait(10)


def test_workflow_and_catalog_kinds_run_over_streamable_http(workflow_http: tuple[str, Path]) -> None:
    url, log = workflow_http
    assert url.startswith("http://127.0.0.1:")
    doc = manifest(WORKFLOW, case("pages", "pagination", max_pages=2),
                   case("fidelity", "instruction-fidelity", tool="read_status", arguments={}, expect=STEP_OK))
    report = run(url, doc)
    assert verdicts(report) == {"flow": (True, None, None), "pages": (True, None, None),
                                "fidelity": (True, None, None)}
    assert log.read_text().count("tools/call") == 7


SPEC_MANIFEST = manifest(
    case("honest-retry", "error-honesty", tool="flaky_read", arguments={}, max_attempts=4,
         expect_retryable=True),
    case("bounded-discovery", "discovery-cost", max_tools=10, max_schema_bytes=10000),
    case("token-budget", "token-cost", max_total_tokens=100000, max_tool_tokens=10000),
    case("naive-status", "schema-guessability", tool="describe_status", arguments={}),
    case("repeat-read", "degradation-over-n", tool="read_counter",
         arguments={"secret": "CANARY-manifest-argument"}, max_attempts=5),
    case("literal-status", "instruction-fidelity", tool="describe_status", arguments={},
         expect={"outcome": "ok", "equals": {"status": "ready"}}),
)


def test_clean_server_passes_the_reference_manifest_and_broken_mode_fails_two_cases() -> None:
    assert run(fixture("probe_clean"), SPEC_MANIFEST).exit_code == 0
    report = run(fixture("probe_clean", "broken"), SPEC_MANIFEST)
    failed = {c.id: (c.reason, c.first_failure) for c in report.cases if not c.passed}
    assert failed == {"repeat-read": ("unexpected-outcome", 3), "literal-status": ("value-mismatch", 1)}


def test_identical_runs_write_byte_identical_reports() -> None:
    first, second = (run(fixture("probe_clean"), SPEC_MANIFEST).dumps() for _ in range(2))
    assert first == second


@pytest.mark.parametrize(("mode", "reason"), [
    ("early-exit", "transport-closed"), ("malformed", "transport-error"),
    ("mismatched-id", "transport-error")])
def test_faulty_servers_error_every_case_with_the_transport_reason(mode: str, reason: str) -> None:
    doc = manifest(case("pages", "pagination", max_pages=2), timeout_ms=5000)
    report = run(fixture("probe_clean", mode), doc)
    assert verdicts(report) == {"pages": (False, reason, None)} and report.exit_code == 3


def test_when_reconnecting_fails_every_remaining_case_gets_that_reason(tmp_path: Path) -> None:
    marker = tmp_path / "started-once"
    script = ("import os, sys, runpy\n"
              f"marker = {str(marker)!r}\n"
              "if os.path.exists(marker): sys.exit(0)\n"
              "open(marker, 'w').close()\n"
              f"sys.argv = [{fixture('probe_features')[1]!r}]\n"
              "sys.path.insert(0, os.path.dirname(sys.argv[0]))\n"
              "runpy.run_path(sys.argv[0], run_name='__main__')\n")
    doc = manifest(case("crash", "degradation-over-n", tool="crash", arguments={}, max_attempts=2),
                   case("next", "output-schema", tool="out_ok", arguments={}),
                   case("last", "pagination", max_pages=2))
    report = run([fixture("probe_features")[0], "-c", script], doc)
    lost = (False, "transport-closed", None)
    assert verdicts(report) == {"crash": (False, "transport-closed", 1), "next": lost, "last": lost}


def test_a_failing_second_catalog_page_ends_the_gate_catalog_but_fails_pagination() -> None:
    doc = manifest(case("pages", "pagination", max_pages=3))
    assert verdicts(run(fixture("probe_paged", "page-error"), doc)) == {
        "pages": (False, "pagination-invalid-entry", 2)}
    late = manifest(case("late", "degradation-over-n", tool="gamma_reset", arguments={}, max_attempts=2))
    with pytest.raises(UsageError, match="probe tool was not declared by the server"):
        run(fixture("probe_paged", "page-error"), late)
