"""The commands that talk to a server, as real processes, on servers of each era: the official SDK's
modern-only, dual and legacy servers and the raw modern fixture.  Each runs in the right era, says so,
and never prints a traceback; an era mismatch is exit 2 naming the fix."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpeval_nb.demo.fixture_findings import REPRO_MANIFEST, capture_broken_sessions
from tests.era_support import era_argv
from tests.eras_support import eras_http
from tests.probe_support import fixture, run_cli

PAGES = {"version": 1, "probes": [{"id": "pages", "probe": "pagination", "access": "read_only",
                                   "max_pages": 3}]}


def _cli(root: Path, *args: str) -> Any:
    done = run_cli(*args, root=root, timeout=600)
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout
    return done


@pytest.fixture(scope="module")
def modern_url() -> Iterator[str]:
    with eras_http("--era", "modern", "--readiness") as url:
        yield url


def test_probe_and_score_speak_2026_07_28_to_a_modern_only_server(modern_url: str, tmp_path: Path) -> None:
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps(PAGES))
    probe = _cli(tmp_path, "probe", "--server", "modern", "--manifest", str(manifest), "--format", "json",
                 "--url", modern_url)
    assert probe.returncode == 0, probe.stderr
    report = json.loads(probe.stdout)
    assert report["protocol"] == {"era": "modern", "version": "2026-07-28"}
    assert report["readiness"]["standard"] == "mcpeval-modern/1"
    score = _cli(tmp_path, "score", "--server", "modern", "--protocol", "2026-07-28", "--url", modern_url)
    assert score.returncode == 0 and "modern protocol 2026-07-28 (stateless)" in score.stdout


def test_a_legacy_only_flag_against_a_modern_server_is_a_usage_error_naming_the_fix(modern_url: str,
                                                                                     tmp_path: Path) -> None:
    for command in (["score", "--server", "m"], ["init", "--dry-run"], ["guidance", "--server", "m"]):
        done = _cli(tmp_path, *command, "--protocol", "legacy", "--url", modern_url)
        assert done.returncode == 2
        assert "the server requires protocol 2026-07-28; run with --protocol auto" in done.stderr


def test_init_and_compare_eras_on_the_dual_server_over_stdio(tmp_path: Path) -> None:
    init = _cli(tmp_path, "init", "--dry-run", "--", *era_argv("dual"))
    assert init.returncode == 0 and "describe_weather skipped: required arguments" in init.stdout
    matrix = _cli(tmp_path, "compare", "--eras", "--format", "json", "--", *era_argv("dual"))
    assert matrix.returncode == 0, matrix.stderr
    assert json.loads(matrix.stdout)["serves"] == {"legacy": True, "modern": True}


def test_a_modern_request_to_a_legacy_server_names_the_fix(tmp_path: Path) -> None:
    done = _cli(tmp_path, "score", "--server", "legacy", "--protocol", "2026-07-28", "--",
                *era_argv("legacy"))
    assert done.returncode == 2 and "does not serve protocol 2026-07-28" in done.stderr
    legacy = _cli(tmp_path, "score", "--server", "legacy", "--format", "json", "--", *era_argv("legacy"))
    assert legacy.returncode == 0 and "protocol" not in json.loads(legacy.stdout)


def test_sizes_and_verify_run_in_the_modern_era(tmp_path: Path) -> None:
    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps({"calls": [{"tool": "lookup", "args": {"city": "Oslo"}}]}))
    sizes = _cli(tmp_path, "sizes", "--call-manifest", str(calls), "--server", "modern", "--protocol",
                 "2026-07-28", "--", *fixture("modern_faults"))
    assert sizes.returncode == 0, sizes.stderr
    capture_broken_sessions(tmp_path, sessions=2)
    assert _cli(tmp_path, "promote", "--threshold", "0").returncode == 0
    finding = json.loads(_cli(tmp_path, "findings", "--format", "json").stdout)[0]["finding_id"]
    repro = tmp_path / "repro.json"
    repro.write_text(json.dumps(REPRO_MANIFEST))
    verify = _cli(tmp_path, "verify", "--finding", finding, "--case", "repeat-read", "--manifest", str(repro),
                  "--protocol", "2026-07-28", "--", *fixture("modern_faults"))
    assert verify.returncode == 0, verify.stderr
    assert verify.stdout.startswith(f"{finding} state=verifying")
    mismatch = _cli(tmp_path, "verify", "--finding", finding, "--case", "repeat-read", "--manifest",
                    str(repro), "--protocol", "legacy", "--", *fixture("modern_faults"))
    assert mismatch.returncode == 2 and "requires protocol 2026-07-28" in mismatch.stderr
    assert sys.executable  # the servers run under this interpreter
