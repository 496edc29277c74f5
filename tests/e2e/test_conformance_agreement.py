"""Agreement with the official conformance suite: on its reference servers, the official SDK's servers,
``serve`` and fixtures with faults, every readiness check the two tools share (``SHARED_CHECKS``) gives
the same verdict, at 2026-07-28 and at 2025-11-25.  A server that breaks a shared requirement is in the
set, so the test sees the two tools agree on failures too."""

from __future__ import annotations

import contextlib
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import mcpeval_nb as me
from mcpeval_nb.probe.conformance import read_conformance_results
from mcpeval_nb.probe.conformance_map import (
    ERA_CHECKS,
    MODERN,
    Agreement,
    agreement,
    era_agreement,
    suite_scenarios,
)
from mcpeval_nb.transport import HttpTarget
from tests.e2e.conformance_support import reference_server, run_client_suite, run_suite
from tests.eras_support import eras_http
from tests.probe_support import fixture
from tests.processes import stop

Server = Callable[[], contextlib.AbstractContextManager[str]]


@contextlib.contextmanager
def _fixture(name: str, *args: str) -> Iterator[str]:
    proc = subprocess.Popen(fixture(name, "--http", *args), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().decode().strip()
    finally:
        stop(proc)
        if proc.stdout is not None:
            proc.stdout.close()


@contextlib.contextmanager
def _serve(root: Path) -> Iterator[str]:
    with me.FindingsServer(me.ServeOptions(listen="127.0.0.1:0", root=root)) as server:
        yield server.url


FAULTS = ("shuffle", "old-resource-code", "accept-version", "no-header-check", "no-cache", "http-200")


def _agree(url: str, spec: str, out: Path) -> tuple[Agreement, ...]:
    suite = run_suite(url, suite_scenarios(spec), spec_version=spec, out=out)
    protocol = "2026-07-28" if spec == MODERN else "legacy"
    report = me.score_server(HttpTarget(url), server="agreement",
                             options=me.BatteryOptions(history=False, protocol=protocol))
    assert report.readiness is not None, report.readiness_error
    declared = me.guidance(HttpTarget(url), server="agreement", protocol=protocol).capabilities
    pairs = agreement(report.readiness, suite, capabilities=declared)
    assert pairs, "no shared check was judged by both tools"
    disagreements = [(p.shared.check, p.ours, p.suite) for p in pairs if not p.agrees]
    assert disagreements == []
    return pairs


def _verdicts(pairs: tuple[Agreement, ...]) -> dict[str, bool]:
    return {p.shared.check: p.ours for p in pairs}


@pytest.mark.parametrize(("name", "start"), [
    ("reference everything-server", lambda _root: reference_server("everything-server")),
    ("sdk dual", lambda _root: eras_http("--era", "dual")),
    ("sdk modern-only", lambda _root: eras_http("--era", "modern")),
    ("serve", _serve),
])
def test_the_shared_checks_agree_on_well_behaved_modern_servers(name: str, start: Callable[[Path], Server],
                                                                tmp_path: Path) -> None:
    with start(tmp_path / "root") as url:  # type: ignore[attr-defined]
        pairs = _agree(url, MODERN, tmp_path / "results")
    assert {p.shared.check for p in pairs} >= {"protocol.discover", "protocol.version-refusal"}


def test_the_tools_agree_on_a_server_without_cache_hints(tmp_path: Path) -> None:
    with reference_server("sep-2549-no-caching-hints") as url:
        pairs = _agree(url, MODERN, tmp_path)
    assert _verdicts(pairs)["protocol.cache-hints"] is False


def test_the_tools_agree_on_a_server_with_six_faults(tmp_path: Path) -> None:
    with _fixture("modern_faults", *FAULTS) as url:
        verdicts = _verdicts(_agree(url, MODERN, tmp_path))
    for check in ("protocol.tools-order", "protocol.unknown-resource", "protocol.version-refusal",
                  "protocol.headers", "protocol.cache-hints", "protocol.unknown-method"):
        assert verdicts.get(check) is False, check


@pytest.mark.parametrize(("name", "start"), [
    ("reference everything-server", lambda _root: reference_server("everything-server")),
    ("sdk dual", lambda _root: eras_http("--era", "dual")),
    ("serve", _serve),
    ("no ping", lambda _root: _fixture("no_ping")),
])
def test_the_shared_checks_agree_on_legacy_servers(name: str, start: Callable[[Path], Server],
                                                   tmp_path: Path) -> None:
    with start(tmp_path / "root") as url:  # type: ignore[attr-defined]
        pairs = _agree(url, "2025-11-25", tmp_path / "results")
    assert _verdicts(pairs).get("protocol.ping") is (name != "no ping")


CLIENT_SCENARIOS = ("request-metadata", "http-standard-headers", "http-custom-headers",
                    "http-invalid-tool-headers")
#: The battery's invalid-argument call to the suite's annotated tool mirrors no parameter (there is none
#: to mirror), which the scenario counts against the client; the base64 check needs a call the battery
#: never makes.  Written as the suite's own baseline, read by ``mcpeval-nb conformance``.
BASELINE = """client:
  - http-custom-headers:sep-2243-client-supports-custom-headers
  - http-custom-headers:sep-2243-client-base64-unsafe
"""


def test_this_client_passes_the_suite_s_client_scenarios_against_its_reference_servers(
        tmp_path: Path) -> None:
    command = shlex.join([sys.executable, "-m", "mcpeval_nb", "score", "--server", "conformance",
                          "--no-history", "--confirm-read-only", "--protocol", "2026-07-28", "--url"])
    results = run_client_suite(command, CLIENT_SCENARIOS, spec_version=MODERN, out=tmp_path / "results")
    (tmp_path / "baseline.yml").write_text(BASELINE, encoding="utf-8")
    judged = me.judge_conformance(results, me.load_conformance_baseline(tmp_path / "baseline.yml"))
    assert {s.scenario for s, _ in judged.scenarios} == set(CLIENT_SCENARIOS)
    assert judged.count("failed") == 0 and judged.count("stale") == 0, judged.render("text")
    assert judged.exit_code == 0 and judged.count("passed") >= 12


@pytest.mark.parametrize(("name", "start", "serves"), [
    ("reference everything-server", lambda: reference_server("everything-server"),
     {"legacy": True, "modern": True}),
    ("sdk modern-only", lambda: eras_http("--era", "modern"), {"legacy": False, "modern": True}),
    ("sdk legacy-only", lambda: eras_http("--era", "legacy"), {"legacy": True, "modern": False}),
])
def test_the_era_matrix_agrees_with_the_suite_on_which_eras_a_server_serves(
        name: str, start: Callable[[], contextlib.AbstractContextManager[str]], serves: dict[str, bool],
        tmp_path: Path) -> None:
    with start() as url:
        matrix = me.era_matrix(HttpTarget(url), server="eras",
                               options=me.BatteryOptions(history=False, call_timeout_s=10.0))
        for check in ERA_CHECKS:
            run_suite(url, (check.scenario,), spec_version=check.spec_version, out=tmp_path / "results")
    assert matrix.serves == serves
    pairs = era_agreement(matrix.serves, read_conformance_results(tmp_path / "results"))
    assert [(p.shared.check, p.ours, p.suite) for p in pairs] == [
        (f"serves.{era}", served, served) for era, served in serves.items()]
