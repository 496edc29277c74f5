"""The standard battery against the package's clean and broken fixture servers, scored by hand.

Fixture servers are started by path (fast start, the package is not imported by the child).
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import mcpeval_nb.testing.servers as fixture_servers
from mcpeval_nb.errors import UsageError
from mcpeval_nb.probe.readiness.battery import BatteryOptions, score_server
from mcpeval_nb.probe.readiness.model import Readiness
from mcpeval_nb.probe.readiness.parse import parse_readiness
from mcpeval_nb.probe.readiness.score import round_half_away
from mcpeval_nb.transport import StdioTarget

SERVERS = Path(fixture_servers.__file__).parent


def fixture(name: str, *args: str) -> StdioTarget:
    return StdioTarget((sys.executable, str(SERVERS / f"{name}.py"), *args))


def score(name: str, *args: str, **options: Any) -> Readiness:
    options.setdefault("history", False)
    report = score_server(fixture(name, *args), server="fixture", options=BatteryOptions(**options))
    assert report.readiness_error is None and report.readiness is not None
    assert report.manifest_sha256 is None and report.gate is None and report.cases == ()
    return parse_readiness(report.to_json()["readiness"])  # the written document reads back


def lost(r: Readiness, area: str) -> list[tuple[str, str | None, str]]:
    return [(c.id, c.tool, c.reason) for c in r.area(area).checks]


def bands(r: Readiness) -> dict[str | None, int]:
    """Latency bands the battery observed (100 unless a reliability.latency loss says otherwise)."""
    return {c.tool: c.score for c in r.area("reliability").checks if c.id == "reliability.latency"}


def test_the_clean_fixture_scores_76_as_worked_out_by_hand(root: Path) -> None:
    lines: list[str] = []
    r = score("probe_clean", progress=lines.append)
    # progress names phases and counts only; the battery never journals
    assert lines[0] == "battery tool 1/7" and lines[-1] == "battery protocol checks"
    assert all(line.startswith("battery ") and "CANARY" not in line for line in lines)
    assert not (root / "store").exists() or not any((root / "store").rglob("*.jsonl"))
    # catalog: read_counter passes all 5 of its checks (description, params described + typed, read-only,
    # output schema) = 100; describe_status, flaky_read, session_status miss only output-schema = 2/3;
    # shared_read misses output-schema of 5 = 80; writers break_session, recover_session pass description and
    # read-only-declared, miss destructive-declared and output-schema = 2/4.
    # (100 + 3*66.67 + 80 + 2*50) / 7 = 480 / 7 = 68.57 -> 69
    assert r.area("catalog").score == 69
    assert {cid for cid, _, _ in lost(r, "catalog")} == {"catalog.output-schema",
                                                         "catalog.destructive-declared"}
    # context: 400 catalog tokens <= 2000, heaviest 99 <= 500 -> 100
    assert r.area("context").score == 100
    assert r.area("context").measurements == {"catalog_tokens": 400, "heaviest_tool_tokens": 99}
    # protocol: -32601 for mcpeval/unknown, ping {}, unknown tool -32602, one valid page, negotiation answers
    # 2025-06-18 to the bogus 2000-01-01 and accepts it again; no resources/prompts -> 5/5
    assert r.area("protocol").score == 100
    # error-honesty: judged = read_counter ({"secret": 12345}) and shared_read ({"port": "mcpeval"}); the
    # fixture validates nothing and answers both with success -> 0/2
    assert r.area("error-honesty").score == 0
    assert lost(r, "error-honesty") == [
        ("error-honesty.invalid-input", "read_counter", "honesty-accepted-invalid"),
        ("error-honesty.invalid-input", "shared_read", "honesty-accepted-invalid")]
    # reliability: read_counter, describe_status, session_status, shared_read 3/3 -> 100 each; flaky_read
    # fails -32001 twice then succeeds: 1/3 success * mean(consistency 0, latency) ; contention on
    # read_counter 100; payload on read_counter.secret handled -> 100.  Seven entries.
    b = bands(r)
    flaky = (1 / 3) * (0 + b.get("flaky_read", 100)) / 2
    others = sum((100 + b.get(t, 100)) / 2 for t in ("read_counter", "describe_status", "session_status",
                                                      "shared_read"))
    assert r.area("reliability").score == round_half_away((others + flaky + 200) / 7)
    if not b:  # loopback calls of a few ms: (400 + 16.67 + 200) / 7 = 88.1 -> 88
        assert r.area("reliability").score == 88
    assert [x for x in lost(r, "reliability") if x[0] != "reliability.latency"] == [
        ("reliability.success", "flaky_read", "reliability-call-failed"),
        ("reliability.consistent", "flaky_read", "reliability-inconsistent")]
    # coverage: every non-writer had a success -> 100
    assert r.area("coverage").score == 100
    # overall (15*100 + 20*69 + 15*100 + 15*0 + 20*88 + 15*100) / 100 = 76.4 -> 76
    expected = round_half_away(sum(a.weight * a.score for a in r.areas) / 100)
    assert r.score == expected
    if not b:
        assert r.score == 76
    assert (r.surface.tools, r.surface.read_only, r.surface.writers, r.surface.exercised) == (7, 5, 2, 5)


def test_the_broken_fixture_scores_51_as_worked_out_by_hand(root: Path) -> None:
    r = score("probe_broken")
    # catalog: read_counter, describe_status, flaky_read, session_status: description + read-only of 3
    # (no output schema) = 66.67; break_session and recover_session are unannotated: description only of 3
    # = 33.33; shared_read's port is typed but undescribed: 3/5 = 60.
    # (4*66.67 + 2*33.33 + 60) / 7 = 393.33 / 7 = 56.19 -> 56
    assert r.area("catalog").score == 56
    # context: read_counter's 2000-char description makes it 531 tokens: curve(531, 500, 5000) =
    # 100*(ln 5000 - ln 531)/(ln 5000 - ln 500) = 97.39; catalog 808 tokens -> 100.
    # 0.75*100 + 0.25*97.39 = 99.35 -> 99
    assert r.area("context").measurements == {"catalog_tokens": 808, "heaviest_tool_tokens": 531}
    assert r.area("context").score == 99
    assert lost(r, "context") == [("context.heaviest-tool", "read_counter", "context-tool-heavy")]
    # error-honesty: describe_status requires "missing" -> {} accepted; shared_read {"port": "mcpeval"}
    # accepted -> 0/2
    assert r.area("error-honesty").score == 0
    # coverage: 7 non-writers; exercised read_counter (2 of 3 calls) and shared_read -> 2/7 = 28.57 -> 29
    assert r.area("coverage").score == 29
    assert lost(r, "coverage") == [
        ("coverage.exercised", "describe_status", "coverage-unsynthesizable"),
        ("coverage.exercised", "flaky_read", "coverage-call-failed"),
        ("coverage.exercised", "break_session", "coverage-unannotated"),
        ("coverage.exercised", "recover_session", "coverage-unannotated"),
        ("coverage.exercised", "session_status", "coverage-call-failed")]
    # reliability: read_counter 2/3 with its third call -32000 -> (2/3) * mean(0, latency); five tools not
    # exercised -> 0; shared_read sleeps 200 ms -> band 80 -> mean(100, 80) = 90; contention on shared_read
    # (the first tool with 3 successes) 100; no payload case (shared_read has no string property).
    b = bands(r)
    entries = [(2 / 3) * (0 + b.get("read_counter", 100)) / 2, 0, 0, 0, 0, 0,
               (100 + b.get("shared_read", 100)) / 2, 100]
    assert r.area("reliability").score == round_half_away(sum(entries) / 8)
    if b == {"shared_read": 80}:  # (33.33 + 90 + 100) / 8 = 27.9 -> 28
        assert r.area("reliability").score == 28
    assert r.area("reliability").measurements["untested_tools"] == 3
    assert r.area("protocol").score == 100
    if b == {"shared_read": 80}:
        # (15*100 + 20*56 + 15*99 + 15*0 + 20*28 + 15*29) / 100 = 51.0 -> 51
        assert r.score == 51
    assert r.score == round_half_away(sum(a.weight * a.score for a in r.areas) / 100)
    assert (r.surface.tools, r.surface.writers, r.surface.exercised) == (7, 0, 2)


def test_confirm_read_only_calls_unannotated_tools_and_records_the_attestation(root: Path) -> None:
    r = score("probe_broken", confirm_read_only=True)
    assert r.attested_read_only and r.measurement_profile is not None
    assert r.measurement_profile.attested_read_only
    # break_session now fails -32002 three times; recover_session succeeds
    reasons = dict((t, reason) for _, t, reason in lost(r, "coverage"))
    assert reasons["break_session"] == "coverage-call-failed"
    assert "recover_session" not in reasons
    assert r.surface.exercised == 3


def test_a_skipped_tool_is_never_called_and_never_raises_the_score(root: Path) -> None:
    full = score("probe_clean")
    skipped = score("probe_clean", skip_tools=("flaky_read",))
    profile = skipped.measurement_profile
    assert profile is not None and profile.skip_tools == ("flaky_read",)
    assert ("reliability.skipped", "flaky_read", "coverage-skipped") in lost(skipped, "reliability")
    assert ("reliability.contention", None, "coverage-skipped") in lost(skipped, "reliability")
    assert ("coverage.exercised", "flaky_read", "coverage-skipped") in lost(skipped, "coverage")
    assert skipped.score <= full.score
    assert skipped.area("reliability").score < full.area("reliability").score


def test_an_undeclared_skip_name_is_a_usage_error_that_does_not_echo_it(root: Path) -> None:
    with pytest.raises(UsageError, match=r"--skip-tool #2 names a tool the server did not declare") as info:
        score_server(fixture("probe_clean"), server="fixture",
                     options=BatteryOptions(skip_tools=("flaky_read", "CANARY_tool")))
    assert "CANARY" not in str(info.value)
    with pytest.raises(UsageError, match="--skip-tool #1 is not a valid tool name"):
        score_server(fixture("probe_clean"), server="fixture", options=BatteryOptions(skip_tools=("a b",)))


def test_an_unreachable_server_is_a_readiness_error_not_a_score(root: Path) -> None:
    report = score_server(StdioTarget((sys.executable, "-c", "import sys; sys.exit(3)")), server="gone")
    assert report.readiness is None and report.readiness_error in ("transport-closed", "transport-error")
    assert report.exit_code == 3




def test_an_exhausted_budget_is_a_readiness_error_that_wins_over_transport_symptoms(root: Path) -> None:
    report = score_server(fixture("probe_clean"), server="fixture", max_requests=12)
    assert report.readiness is None and report.readiness_error == "evaluation-budget-exceeded"
    assert report.exit_code == 3


def test_a_cancelled_battery_reports_cancelled_without_readiness(root: Path) -> None:
    cancel = threading.Event()
    lines: list[str] = []

    def progress(line: str) -> None:
        lines.append(line)
        if line == "battery tool 2/7":
            cancel.set()

    report = score_server(fixture("probe_clean"), server="fixture", options=BatteryOptions(progress=progress),
                          cancel=cancel)
    assert report.cancelled and report.readiness is None and report.exit_code == 3
    assert "battery protocol checks" not in lines


def test_the_profile_records_the_call_timeout_used(root: Path) -> None:
    r = score("probe_clean", call_timeout_s=7.5)
    assert r.measurement_profile is not None and r.measurement_profile.call_timeout_ms == 7500


WEIRD_SERVER = """
import sys
sys.path.insert(0, sys.argv[1])
from _mcp import Server, text_result
server = Server("weird")
server.tool("CANARY bad name\\u001b[31m", lambda args, ctx: text_result(), description="x")
server.tool("good_tool", lambda args, ctx: text_result(), description="x")
server.run()
"""


def test_tool_names_outside_the_grammar_never_reach_the_report(root: Path, tmp_path: Path) -> None:
    script = tmp_path / "weird.py"
    script.write_text(WEIRD_SERVER)
    target = StdioTarget((sys.executable, str(script), str(SERVERS)))
    report = score_server(target, server="weird")
    assert report.readiness is not None
    text = report.dumps() + report.render("text") + report.render("markdown")
    assert "CANARY" not in text and "\x1b" not in text
    r = parse_readiness(report.to_json()["readiness"])  # the document stays valid
    assert r.surface.tools == 2 and None in {c.tool for c in r.area("catalog").checks}


OPEN_WORLD_SERVER = """
import os, sys
sys.path.insert(0, sys.argv[1])
from _mcp import Server, text_result
def reach(args, ctx):
    with open(os.environ["OPEN_WORLD_LOG"], "a") as log:
        log.write("called\\n")
    return text_result("fetched")
server = Server("open-world")
server.tool("web_fetch", reach, description="Fetches a page from the public internet by its address.",
            annotations={"readOnlyHint": True, "openWorldHint": True})
server.tool("local_read", lambda args, ctx: text_result("ok"), description="Reads local state only.")
server.run()
"""


def _open_world(tmp_path: Path) -> tuple[StdioTarget, Path]:
    script, log = tmp_path / "open_world.py", tmp_path / "calls.log"
    script.write_text(OPEN_WORLD_SERVER)
    log.write_text("")
    return StdioTarget((sys.executable, str(script), str(SERVERS)), env={"OPEN_WORLD_LOG": str(log)}), log


def test_open_world_tools_are_not_called_without_the_flag_and_the_profile_says_so(tmp_path: Path) -> None:
    target, log = _open_world(tmp_path)
    said: list[str] = []
    report = score_server(target, server="open", options=BatteryOptions(history=False, progress=said.append))
    assert log.read_text() == ""
    r = parse_readiness(report.to_json()["readiness"])
    assert ("coverage.exercised", "web_fetch", "coverage-open-world") in lost(r, "coverage")
    assert ("reliability.none-exercised", "web_fetch", "coverage-open-world") in lost(r, "reliability")
    assert r.measurement_profile is not None and r.measurement_profile.skip_tools == ("web_fetch",)
    assert "battery skipped: openWorldHint (pass --allow-open-world to call it)" in said
    allowed = score_server(target, server="open",
                           options=BatteryOptions(history=False, allow_open_world=True))
    assert log.read_text().count("called") >= 1
    r2 = parse_readiness(allowed.to_json()["readiness"])
    assert r2.measurement_profile is not None and r2.measurement_profile.skip_tools == ()
    assert not any(c.reason == "coverage-open-world" for a in r2.areas for c in a.checks)
    assert r2.score > r.score


def test_init_skips_open_world_tools_unless_allowed(tmp_path: Path) -> None:
    from mcpeval_nb import scaffold_manifest

    target, log = _open_world(tmp_path)
    decisions = dict(scaffold_manifest(target, confirm_read_only=True).decisions)
    assert decisions["web_fetch"] == "skipped: openWorldHint" and log.read_text() == ""
    allowed = dict(scaffold_manifest(target, confirm_read_only=True, allow_open_world=True).decisions)
    assert allowed["web_fetch"] == "candidate (readOnlyHint)"
