"""probe, score, init and verify with each ``--protocol`` value, as real processes, against the official
SDK's servers (``sdk_eras``: modern-only, dual and legacy, on stdio and stateless HTTP).  Each command
runs in the era asked for and says so; the era a legacy run used leaves its outputs as they were; an era
the server does not serve is exit 2 naming the fix, and changes nothing (a verify mismatch leaves the
finding's lifecycle as it was); no canary the servers plant reaches anything a command prints."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpeval_nb.transport import McpSession, StdioTarget
from tests.era_support import era_argv
from tests.eras_support import eras_http
from tests.probe_support import run_cli

MODERN = "2026-07-28"
REQUIRES = "the server requires protocol 2026-07-28; run with --protocol auto"
NOT_SERVED = "does not serve protocol 2026-07-28"
#: A case on the SDK's echo tool: three calls with its required argument (green on every era).
REPRO = {"version": 1, "sandboxes": {}, "probes": [
    {"id": "repeat-echo", "probe": "degradation-over-n", "access": "read_only", "tool": "echo",
     "arguments": {"text": "hello"}, "max_attempts": 3}]}


def _cli(root: Path, *args: str) -> Any:
    """Run the command; no traceback, and none of the servers' canaries (instructions, a description, an
    elicitation URL, a task note: ``--readiness``) in anything it prints."""
    done = run_cli(*args, root=root, timeout=600)
    for stream in (done.stdout, done.stderr):
        assert "Traceback" not in stream and "CANARY" not in stream
    return done


def _json(done: Any) -> Any:
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def legacy_url() -> Iterator[str]:
    with eras_http("--era", "legacy", "--readiness") as url:
        yield url


@pytest.fixture(scope="module")
def modern_url() -> Iterator[str]:
    with eras_http("--era", "modern", "--readiness") as url:
        yield url


def test_probe_and_score_on_the_dual_server_speak_the_era_asked_for(tmp_path: Path) -> None:
    dual = era_argv("dual")
    legacy = _json(_cli(tmp_path, "score", "--server", "dual", "--protocol", "legacy", "--format", "json",
                        "--no-history", "--", *dual))
    assert "protocol" not in legacy and legacy["readiness"]["standard"] == "mcpeval-standard/2"
    for protocol in ("auto", MODERN):
        modern = _json(_cli(tmp_path, "score", "--server", "dual", "--protocol", protocol, "--format", "json",
                            "--no-history", "--", *dual))
        assert modern["protocol"] == {"era": "modern", "version": MODERN}, protocol
        assert modern["readiness"]["standard"] == "mcpeval-modern/1"
    text = _cli(tmp_path, "score", "--server", "dual", "--protocol", "legacy", "--no-history", "--", *dual)
    assert text.returncode in (0, 1) and "protocol 2026-07-28" not in text.stdout


def test_init_then_probe_on_the_modern_only_server(modern_url: str, tmp_path: Path) -> None:
    manifest = tmp_path / "modern.json"
    init = _cli(tmp_path, "init", "--server", "modern", "--output", str(manifest), "--protocol", MODERN,
                "--url", modern_url)
    assert init.returncode == 0, init.stderr
    assert json.loads(manifest.read_text())["probes"], "init scaffolded no case"
    assert "CANARY" not in manifest.read_text()
    probe = _json(_cli(tmp_path, "probe", "--server", "modern", "--manifest", str(manifest), "--protocol",
                       MODERN, "--format", "json", "--no-history", "--url", modern_url))
    assert probe["protocol"] == {"era": "modern", "version": MODERN}
    assert probe["cases"] and not [c["id"] for c in probe["cases"] if c.get("errored")]
    for command in (["probe", "--server", "m", "--manifest", str(manifest)], ["init", "--dry-run"]):
        refused = _cli(tmp_path, *command, "--protocol", "legacy", "--url", modern_url)
        assert refused.returncode == 2 and REQUIRES in refused.stderr, command


def test_init_then_probe_on_the_legacy_only_server(legacy_url: str, tmp_path: Path) -> None:
    manifest = tmp_path / "legacy.json"
    init = _cli(tmp_path, "init", "--server", "legacy", "--output", str(manifest), "--protocol", "legacy",
                "--url", legacy_url)
    assert init.returncode == 0, init.stderr
    for protocol in ("legacy", "auto"):
        probe = _json(_cli(tmp_path, "probe", "--server", "legacy", "--manifest", str(manifest), "--protocol",
                           protocol, "--format", "json", "--no-history", "--url", legacy_url))
        assert "protocol" not in probe and probe["cases"], protocol
    score = _json(_cli(tmp_path, "score", "--server", "legacy", "--format", "json", "--no-history", "--url",
                       legacy_url))
    assert "protocol" not in score and score["readiness"]["standard"] == "mcpeval-standard/2"
    for command in (["probe", "--server", "l", "--manifest", str(manifest)], ["init", "--dry-run"]):
        refused = _cli(tmp_path, *command, "--protocol", MODERN, "--url", legacy_url)
        assert refused.returncode == 2 and NOT_SERVED in refused.stderr, command
        assert "--protocol auto" in refused.stderr


def _capture_echo_failures(root: Path) -> str:
    """Two sessions through the real stdio shim in front of the dual server, each calling ``echo`` without
    its required argument (a tool error the SDK reports); promote; the finding's id."""
    for _ in range(2):
        argv = (sys.executable, "-m", "mcpeval_nb", "shim", "--server", "sdk", "--root", str(root), "--",
                *era_argv("dual"))
        with McpSession.connect(StdioTarget(argv), timeout=120.0) as session:
            session.initialize(capabilities={})
            session.list_tools()
            for _ in range(3):
                assert not session.call_tool("echo", {}).ok
                assert session.call_tool("echo", {"text": "a"}).ok
    assert _cli(root, "promote", "--threshold", "0").returncode == 0
    found = json.loads(_cli(root, "findings", "--format", "json").stdout)
    assert [f["tool"] for f in found] == ["echo"]
    return str(found[0]["finding_id"])


def _finding_line(root: Path, finding: str) -> str:
    listed = _cli(root, "findings").stdout.splitlines()
    return str(next(line for line in listed if line.startswith(f"finding {finding} ")))


def test_verify_runs_the_case_in_each_era_and_a_mismatch_changes_nothing(legacy_url: str,
                                                                          tmp_path: Path) -> None:
    root = tmp_path / "root"
    finding = _capture_echo_failures(root)
    repro = tmp_path / "repro.json"
    repro.write_text(json.dumps(REPRO))
    verify = ("verify", "--finding", finding, "--case", "repeat-echo", "--manifest", str(repro))
    runs = [(MODERN, ["--", *era_argv("modern")]), ("legacy", ["--", *era_argv("legacy")]),
            ("auto", ["--url", legacy_url])]
    for passes, (protocol, target) in enumerate(runs, start=1):
        done = _cli(root, *verify, "--protocol", protocol, *target)
        assert done.returncode == 0, (protocol, done.stdout, done.stderr)
        state = "closed" if passes == 3 else "verifying"  # three green runs in a row close it
        assert done.stdout.startswith(f"{finding} state={state} probe=repeat-echo "
                                      f"consecutive_passes={passes}"), protocol
    before = _finding_line(root, finding)
    for protocol, target, why in (("legacy", ["--", *era_argv("modern")], REQUIRES),
                                  (MODERN, ["--url", legacy_url], NOT_SERVED)):
        refused = _cli(root, *verify, "--protocol", protocol, *target)
        assert refused.returncode == 2 and why in refused.stderr, protocol
        assert refused.stdout == ""
    assert _finding_line(root, finding) == before and "state=closed" in before


@pytest.mark.parametrize(("value", "hint"), [
    ("2025-11-25", "2025-11-25 is a legacy revision: --protocol legacy (or auto) speaks it"),
    ("2025-06-18", "2025-06-18 is a legacy revision"),
    ("2027-01-01", "the only stateless revision this version speaks is 2026-07-28"),
    ("modern", "the stateless revision is --protocol 2026-07-28"),
    ("bogus", "is not one of 'auto', 'legacy', '2026-07-28'")])
def test_a_wrong_protocol_value_is_a_usage_error_that_names_the_choice(value: str, hint: str,
                                                                       tmp_path: Path) -> None:
    for command in (["score", "--server", "s"], ["init", "--dry-run"], ["guidance", "--server", "s"]):
        done = _cli(tmp_path, *command, "--protocol", value, "--", sys.executable, "-c", "pass")
        assert done.returncode == 2 and hint in done.stderr and "--protocol" in done.stderr, command


def test_the_cli_s_protocol_choices_are_the_transport_s() -> None:
    from mcpeval_nb.cli import options
    from mcpeval_nb.transport import era

    assert options.PROTOCOL_CHOICES == era.PROTOCOL_CHOICES and options.MODERN_VERSION == era.MODERN_VERSION
