"""The readiness commands end to end: score, trends, report, diff, init, compare, schema report|diff."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import mcpeval_nb
import mcpeval_nb.testing.servers as fixture_servers
from mcpeval_nb.cli import main

SERVERS = Path(fixture_servers.__file__).parent


def fixture(name: str, *args: str) -> list[str]:
    return [sys.executable, str(SERVERS / f"{name}.py"), *args]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return int(code or 0), out, err


def case(case_id: str, probe: str, passed: bool, reason: str | None = None) -> dict[str, Any]:
    return {"attempts": 1, "detail": None, "first_failure": None if passed else 1,
            "hint": None if passed else mcpeval_nb.hint_for(reason or ""), "id": case_id, "measurements": {},
            "passed": passed, "probe": probe, "reason": reason, "tool": None}


def report_doc(cases: list[dict[str, Any]], readiness: dict[str, Any] | None = None,
               server: str = "demo") -> dict[str, Any]:
    return {"cases": cases, "gate": {"passed": sum(c["passed"] for c in cases), "total": len(cases)},
            "generator": {"name": "mcpeval-nb", "version": "0.1.0"}, "manifest_sha256": "ab" * 32,
            "passed": all(c["passed"] for c in cases), "readiness": readiness, "readiness_error": None,
            "schema": "mcpeval.probe-report/v2", "server": server}


def write(path: Path, doc: Any) -> str:
    path.write_text(json.dumps(doc, indent=2))
    return str(path)


@pytest.fixture(scope="module")
def clean_report() -> dict[str, Any]:
    """One scored report of the clean fixture (JSON), shared by the rendering tests (writes nothing)."""
    report = mcpeval_nb.score_server(mcpeval_nb.StdioTarget(tuple(fixture("probe_clean"))), server="demo",
                                     options=mcpeval_nb.BatteryOptions(history=False))
    assert report.readiness is not None
    return dict(report.to_json())


def test_score_prints_the_readiness_lines_and_appends_one_trend_point(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "score", "--server", "demo", "--", *fixture("probe_clean"))
    assert code == 0
    assert out.startswith("demo readiness ")
    assert "\ndemo surface tools=7 read_only=5 writers=2 exercised=5\n" in out
    lost = "  lost reliability.success score=33 tool=flaky_read observed=1 reason=reliability-call-failed\n"
    assert lost in out
    assert "battery tool 1/7" in err and "CANARY" not in out + err
    code, out, _ = run(capsys, "trends")
    assert code == 0
    score = mcpeval_nb.load_trends(root=root)[0].score  # type: ignore[index]
    stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"
    assert re.fullmatch(r"demo\n  " + stamp + f" score={score}/100 cases=0/0\n", out)


def test_score_json_validates_against_the_published_report_schema(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "score", "--server", "demo", "--format", "json", "--no-history", "--",
                       *fixture("probe_broken"))
    assert code == 0
    doc = json.loads(out)
    jsonschema.validate(doc, mcpeval_nb.report_schema())
    assert doc["manifest_sha256"] is None and doc["gate"] is None and doc["readiness"]["standard"] == \
        "mcpeval-standard/2"
    assert not (root / "store" / "probes" / "history.jsonl").exists()


def test_score_refuses_an_undeclared_skip_tool_with_exit_2(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "score", "--server", "demo", "--skip-tool", "CANARY_nope", "--",
                         *fixture("probe_clean"))
    assert code == 2 and out == ""
    assert "--skip-tool #1 names a tool the server did not declare" in err and "CANARY" not in err
    assert not (root / "store" / "probes" / "history.jsonl").exists()


def test_score_of_an_unreachable_server_exits_3_and_records_nothing(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "score", "--server", "gone", "--", sys.executable, "-c", "pass")
    assert code == 3 and "gone readiness error reason=transport-" in out
    assert not (root / "store" / "probes" / "history.jsonl").exists()


def test_trends_without_history_names_this_command(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = "no trend history yet; run `mcpeval-nb score` or `mcpeval-nb probe` first\n"
    assert run(capsys, "trends", "--last", "3") == (0, expected, "")


def test_report_rerenders_a_saved_report_identically(
        tmp_path: Path, clean_report: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "r.json", clean_report)
    code, out, _ = run(capsys, "report", path)
    original = mcpeval_nb.parse_report(json.dumps(clean_report))
    assert code == 0 and out == original.render("text")
    code, md, _ = run(capsys, "report", path, "--format", "markdown")
    assert code == 0 and "**Readiness:** " in md and "| reliability | " in md
    code, js, _ = run(capsys, "report", path, "--format", "json")
    assert json.loads(js) == clean_report


def test_report_sarif_points_failed_cases_at_their_manifest_lines(
        tmp_path: Path, clean_report: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    doc = report_doc([case("ok-case", "pagination", True), case("slow-case", "latency-budget", False,
                                                                 "latency-budget-exceeded")],
                     clean_report["readiness"])
    manifest = tmp_path / "m.json"
    manifest.write_text('{\n  "version": 1,\n  "probes": [\n'
                        '    {"id": "ok-case"},\n    {"id": "slow-case"}\n  ]\n}\n')
    code, out, _ = run(capsys, "report", write(tmp_path / "r.json", doc), "--format", "sarif",
                       "--manifest", str(manifest))
    assert code == 1
    sarif = json.loads(out)
    assert sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    assert results[0]["ruleId"] == "latency-budget-exceeded" and results[0]["level"] == "error"
    assert results[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 5}
    assert {r["ruleId"] for r in results[1:]} >= {"reliability.success"}
    assert all(r["level"] == "note" for r in results[1:])


def test_report_reads_v1_documents_and_refuses_invalid_ones(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    v1 = {"cases": [case("a", "pagination", True)], "passed": True, "readiness": {"score": 88},
          "schema": "mcpeval.probe-report/v1", "server": "old"}
    code, out, _ = run(capsys, "report", write(tmp_path / "v1.json", v1))
    assert code == 0 and "old legacy score 88 (display only)" in out
    bad = report_doc([], {"score": 50, "standard": "mcpeval-standard/2", "areas": [
        {"name": "CANARY-area", "weight": 15, "score": 1, "checks": [], "measurements": {}}]})
    code, out, err = run(capsys, "report", write(tmp_path / "bad.json", bad))
    assert code == 2 and out == "" and "unknown area" in err and "CANARY" not in err


def test_diff_classifies_cases_and_gates_on_request(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = report_doc([case("a", "pagination", True),
                       case("b", "pagination", False, "pagination-stalled-cursor"),
                       case("c", "pagination", False, "pagination-invalid-entry"),
                       case("d", "pagination", True),
                       case("gone", "pagination", True)])
    current = report_doc([case("a", "pagination", False, "pagination-duplicate-tool"),
                          case("b", "pagination", True),
                          case("c", "pagination", False, "pagination-duplicate-tool"),
                          case("d", "pagination", True), case("new", "pagination", True)])
    b, c = write(tmp_path / "b.json", base), write(tmp_path / "c.json", current)
    code, out, _ = run(capsys, "diff", b, c)
    assert code == 0
    assert out == ("a pagination regressed pass -> pagination-duplicate-tool\n"
                   "b pagination fixed pagination-stalled-cursor -> pass\n"
                   "c pagination changed pagination-invalid-entry -> pagination-duplicate-tool\n"
                   "gone pagination regressed pass -> absent\n"
                   "new pagination changed absent -> pass\n"
                   "demo diff regressed=2 fixed=1 changed=2 unchanged=1\n")
    assert run(capsys, "diff", b, c, "--fail-on-regression")[0] == 1
    assert run(capsys, "diff", b, b, "--fail-on-regression", "--fail-on-change")[0] == 0
    code, js, _ = run(capsys, "diff", b, c, "--format", "json")
    doc = json.loads(js)
    jsonschema.validate(doc, mcpeval_nb.diff_schema())
    assert doc["schema"] == "mcpeval.probe-diff/v2" and doc["summary"]["regressed"] == 2


def test_diff_compares_readiness_only_under_one_standard_and_profile(
        tmp_path: Path, clean_report: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    high = dict(clean_report["readiness"])
    low = dict(high, score=high["score"] - 5)
    b = write(tmp_path / "b.json", report_doc([], high))
    c = write(tmp_path / "c.json", report_doc([], low))
    code, out, _ = run(capsys, "diff", b, c, "--fail-on-regression")
    assert code == 1 and f"demo readiness {high['score']} -> {low['score']} (-5) regressed\n" in out
    legacy = write(tmp_path / "l.json", report_doc([], {"score": 99, "standard": "mcpeval-standard/1"}))
    code, out, _ = run(capsys, "diff", legacy, c, "--fail-on-regression", "--fail-on-change")
    assert code == 0 and "demo readiness not comparable: standard changed\n" in out
    other = write(tmp_path / "o.json", report_doc([], None, server="other"))
    code, _, err = run(capsys, "diff", b, other)
    assert code == 2 and "different servers" in err


def test_init_dry_run_prints_each_decision(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "init", "--dry-run", "--", *fixture("probe_broken"))
    assert code == 0
    assert out == ("read_counter candidate (readOnlyHint)\n"
                   "describe_status skipped: required arguments\n"
                   "flaky_read candidate (readOnlyHint)\n"
                   "break_session needs --confirm-read-only\n"
                   "recover_session needs --confirm-read-only\n"
                   "session_status candidate (readOnlyHint)\n"
                   "shared_read candidate (readOnlyHint)\n")


def test_init_writes_a_valid_manifest_and_never_overwrites_without_force(
        tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_path = tmp_path / "m.json"
    code, out, _ = run(capsys, "init", "--output", str(out_path), "--", *fixture("probe_clean"))
    # 4 catalog cases; naive {} calls succeed for read_counter (guessable, repeat, latency, output: 4),
    # describe_status, session_status, shared_read (3 each; no output schema); flaky_read fails -32001;
    # then contention and payload: 4 + 4 + 9 + 2 = 19
    assert code == 0 and out.endswith(f"wrote {out_path} with 19 cases\n")
    manifest = mcpeval_nb.load_manifest(out_path)
    ids = [c.id for c in manifest.cases]
    assert ids[:4] == ["discovery-budget", "token-budget", "catalog-pagination", "protocol-negotiation"]
    assert ids[-2:] == ["read_counter-contention", "read_counter-payload"]
    assert "flaky_read-guessable" not in ids  # its naive {} call fails (-32001)
    before = out_path.read_bytes()
    code, _, err = run(capsys, "init", "--output", str(out_path), "--", *fixture("probe_clean"))
    assert code == 2 and "pass --force" in err and out_path.read_bytes() == before
    assert run(capsys, "init", "--output", str(out_path), "--force", "--", *fixture("probe_clean"))[0] == 0


def test_init_refuses_tool_names_that_are_missing_or_not_callable(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "init", "--dry-run", "--tool", "nope", "--", *fixture("probe_clean"))
    assert code == 2 and "--tool nope: not declared by the server" in err
    code, _, err = run(capsys, "init", "--dry-run", "--tool", "break_session", "--", *fixture("probe_clean"))
    assert code == 2 and "--tool break_session: skipped: readOnlyHint=false" in err


def test_compare_scores_an_http_endpoint_and_a_stdio_command_side_by_side(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = subprocess.Popen(fixture("many_tools", "5", "--http"), stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        code, out, _ = run(capsys, "compare", "--endpoint", f"http5={url}", "--", *fixture("probe_clean"))
    finally:
        server.kill()
        server.wait(timeout=10)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["area", "http5", "stdio"]
    assert [line.split()[0] for line in lines[1:]] == ["protocol", "catalog", "context", "error-honesty",
                                                       "reliability", "coverage", "overall"]
    assert lines[2].split() == ["catalog", "100", "69"]
    code, _, err = run(capsys, "compare", "--", *fixture("probe_clean"))
    assert code == 2 and "at least two targets" in err


def test_schema_report_and_diff_print_valid_json_schemas(capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("report", "diff"):
        code, out, _ = run(capsys, "schema", name)
        assert code == 0
        jsonschema.Draft202012Validator.check_schema(json.loads(out))



def test_score_over_streamable_http_records_the_point_under_its_label(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = subprocess.Popen(fixture("many_tools", "3", "--http"), stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        code, out, _ = run(capsys, "score", "--server", "web", "--url", url)
    finally:
        server.kill()
        server.wait(timeout=10)
    assert code == 0 and out.startswith("web readiness ") and "web surface tools=3 " in out
    points = mcpeval_nb.load_trends(root=root)
    assert points is not None and [p.server for p in points] == ["web"]
    code, _, err = run(capsys, "score", "--server", "web", "--url", url, "--", "python")
    assert code == 2 and "not both" in err


def test_scaffold_ids_outside_the_identifier_grammar_fall_back_to_kind_and_position() -> None:
    sc = mcpeval_nb.Scaffold()
    sc.add("discovery-budget", "discovery-cost", max_tools=10, max_schema_bytes=1000)
    sc.add("9lives-guessable", "schema-guessability", tool="9lives", arguments={})
    assert [c["id"] for c in sc.cases] == ["discovery-budget", "case-schema-guessability-2"]
    assert list(sc.cases[1]) == ["probe", "id", "access", "tool", "arguments"]


def test_init_never_prints_a_tool_name_outside_the_grammar(
        tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.test_battery import WEIRD_SERVER

    script = tmp_path / "weird.py"
    script.write_text(WEIRD_SERVER)
    code, out, _ = run(capsys, "init", "--dry-run", "--", sys.executable, str(script), str(SERVERS))
    assert code == 0
    assert out == "- skipped: name outside the tool grammar\ngood_tool candidate (readOnlyHint)\n"
