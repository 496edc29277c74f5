"""The battery on both eras: ``mcpeval-modern/1`` on 2026-07-28 servers (each check failing on its own
fault), ``mcpeval-standard/2`` unchanged on legacy servers, the era recorded in reports."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest

import mcpeval_nb as me
from mcpeval_nb.probe.readiness.battery import BatteryOptions, score_server
from mcpeval_nb.transport import HttpTarget, StdioTarget
from tests.era_support import era_http
from tests.probe_support import case, fixture, manifest, run
from tests.processes import stop

OPTIONS = BatteryOptions(history=False, call_timeout_s=5.0)


def _score(target: StdioTarget | HttpTarget, protocol: str = "auto") -> me.ProbeReport:
    return score_server(target, server="modern", options=BatteryOptions(history=False, call_timeout_s=5.0,
                                                                         protocol=protocol))


def _lost(report: me.ProbeReport) -> list[tuple[str, str]]:
    assert report.readiness is not None, report.readiness_error
    return [(c.id, c.reason) for c in report.readiness.area("protocol").checks]


def test_a_correct_modern_server_scores_full_protocol_under_the_modern_standard() -> None:
    report = _score(StdioTarget(tuple(fixture("modern_faults"))))
    assert report.readiness is not None and report.readiness.standard == "mcpeval-modern/1"
    assert report.readiness.area("protocol").score == 100 and _lost(report) == []
    doc = json.loads(report.dumps())
    assert doc["protocol"] == {"era": "modern", "version": "2026-07-28"}
    assert "modern protocol 2026-07-28 (stateless)" in report.render("text")
    assert me.parse_report(report.dumps()).dumps() == report.dumps()


@pytest.mark.parametrize(("fault", "lost"), [
    ("no-result-type", ("protocol.result-type", "protocol-result-type-missing")),
    ("no-cache", ("protocol.cache-hints", "protocol-cache-hints-missing")),
    ("shuffle", ("protocol.tools-order", "protocol-tools-order-unstable")),
    ("old-resource-code", ("protocol.unknown-resource", "protocol-unknown-resource-code")),
    ("accept-version", ("protocol.version-refusal", "protocol-version-accepted")),
    ("undeclared", ("protocol.input-required", "protocol-input-undeclared")),
    ("stuck-task", ("protocol.tasks", "protocol-task-lifecycle-broken"))])
def test_each_modern_fault_loses_its_own_check(fault: str, lost: tuple[str, str]) -> None:
    assert _lost(_score(StdioTarget(tuple(fixture("modern_faults", fault))))) == [lost]


@pytest.fixture(scope="module")
def modern_http() -> Iterator[dict[str, HttpTarget]]:
    procs = {name: subprocess.Popen(fixture("modern_faults", "--http", *extra), stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL)
             for name, extra in (("checked", ()), ("unchecked", ("no-header-check",)),
                                 ("statusless", ("http-200",)))}
    try:
        yield {name: HttpTarget(proc.stdout.readline().decode().strip())  # type: ignore[union-attr]
               for name, proc in procs.items()}
    finally:
        for proc in procs.values():
            stop(proc)
            if proc.stdout is not None:
                proc.stdout.close()


def test_header_body_agreement_and_statuses_are_checked_on_http_only(
        modern_http: dict[str, HttpTarget]) -> None:
    assert _lost(_score(modern_http["checked"])) == []
    assert _lost(_score(modern_http["unchecked"])) == [("protocol.headers",
                                                        "protocol-header-mismatch-accepted")]
    assert [c for c, _ in _lost(_score(modern_http["statusless"]))] == [
        "protocol.unknown-method", "protocol.version-refusal", "protocol.headers"]


def test_the_sdk_server_is_scored_in_the_era_it_is_asked_for() -> None:
    with era_http("dual") as target:
        modern, legacy = _score(target, "2026-07-28"), _score(target, "legacy")
    assert modern.readiness is not None and legacy.readiness is not None
    assert modern.readiness.standard == "mcpeval-modern/1"
    assert legacy.readiness.standard == "mcpeval-standard/2"
    assert _lost(modern) == []
    legacy_ids = {c for c, _ in _lost(legacy)} | {"protocol.ping", "protocol.negotiation"}
    assert "protocol.discover" not in legacy_ids
    assert "protocol" not in json.loads(legacy.dumps()) and "protocol" in json.loads(modern.dumps())


def test_a_legacy_server_report_is_the_same_under_auto_and_legacy() -> None:
    doc = manifest(case("pages", "pagination", max_pages=3), case("cost", "discovery-cost", max_tools=50,
                                                                  max_schema_bytes=100000))
    auto = run(fixture("probe_clean"), doc, protocol="auto")
    legacy = run(fixture("probe_clean"), doc, protocol="legacy")
    assert auto.dumps() == legacy.dumps() and auto.render("text") == legacy.render("text")
    assert auto.protocol is not None and auto.protocol.era == "legacy"


def test_trends_and_diff_call_the_two_standards_not_comparable() -> None:
    with era_http("dual") as target:
        modern, legacy = _score(target, "2026-07-28"), _score(target, "legacy")
    diff = me.diff_reports(legacy, modern)
    assert "not comparable: standard changed" in diff.render("text")
