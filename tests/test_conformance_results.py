"""Reading the conformance suite's results and baseline and judging them by its own rules, from files
laid out as the suite writes them (no Node needed)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import mcpeval_nb as me

CANARY = "CANARY-conformance-details"


def _result(out: Path, name: str, checks: list[tuple[str, str]]) -> None:
    where = out / f"{name}-2026-12-02T02-54-00-298Z"
    where.mkdir(parents=True)
    rows = [{"id": cid, "name": "N", "description": "D", "status": status, "timestamp": "t",
             "details": {"response": CANARY}, "errorMessage": CANARY, "logs": [CANARY]}
            for cid, status in checks]
    (where / "checks.json").write_text(json.dumps(rows), encoding="utf-8")


@pytest.fixture
def results(tmp_path: Path) -> Path:
    out = tmp_path / "results"
    _result(out, "server-caching", [("a", "SUCCESS"), ("b", "FAILURE"), ("b", "SUCCESS"), ("c", "SKIPPED"),
                                    ("log", "INFO")])
    _result(out, "server-tools-list", [("tools-list", "SUCCESS")])
    _result(out, "server-ping", [("ping", "WARNING")])
    _result(out, "request-metadata", [("m", "FAILURE"), ("n", "SUCCESS")])
    return out


def test_results_are_read_and_collapsed_most_severe_first(results: Path) -> None:
    scenarios = me.read_conformance_results(results)
    assert [(s.mode, s.scenario) for s in scenarios] == [
        ("client", "request-metadata"), ("server", "caching"), ("server", "ping"), ("server", "tools-list")]
    caching = scenarios[1]
    assert caching.status("b") == "FAILURE" and caching.status("log") is None


def test_without_a_baseline_every_failure_and_warning_is_unexpected(results: Path) -> None:
    judged = me.judge_conformance(me.read_conformance_results(results))
    assert (judged.count("failed"), judged.count("passed"), judged.count("skipped")) == (3, 3, 1)
    assert judged.exit_code == 1


def test_the_baseline_rules_expected_stale_and_tolerated(results: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.yml"
    baseline.write_text("server:\n  - caching:b\n  - caching:c\n  - ping\n  - tools-list\nclient:\n"
                        "  - request-metadata:m\n  - request-metadata:n\n", encoding="utf-8")
    judged = me.judge_conformance(me.read_conformance_results(results),
                                  me.load_conformance_baseline(baseline))
    verdicts = {(s.scenario, cid): v for s, checks in judged.scenarios for cid, v in checks}
    assert verdicts[("caching", "b")] == "expected" and verdicts[("caching", "c")] == "skipped"
    assert verdicts[("ping", "ping")] == "expected" and verdicts[("tools-list", "(scenario)")] == "stale"
    assert verdicts[("request-metadata", "m")] == "expected"
    assert verdicts[("request-metadata", "n")] == "stale"
    assert judged.exit_code == 1 and judged.count("failed") == 0


def test_every_format_carries_labels_never_details(results: Path) -> None:
    judged = me.judge_conformance(me.read_conformance_results(results))
    for fmt in ("text", "json", "junit", "sarif"):
        assert CANARY not in me.render(judged, fmt)
    suites = ET.fromstring(me.render(judged, "junit")).findall("testsuite")
    assert len(suites) == 4
    sarif = json.loads(me.render(judged, "sarif"))
    assert {r["level"] for r in sarif["runs"][0]["results"]} == {"error"}


@pytest.mark.parametrize(("text", "message"), [
    ("server:\n  - caching: b\n", "'server' entry 1 is not"), ("server:\n  - caching:\n", "is not"),
    ("server:\n  - ping\n  - ping:x\n", "both wholesale and per check"), ("server: ping\n", "must be a list"),
    ("- a\n", "expected an object")])
def test_a_baseline_outside_the_grammar_is_refused_by_place(tmp_path: Path, text: str, message: str) -> None:
    baseline = tmp_path / "baseline.yml"
    baseline.write_text(text, encoding="utf-8")
    with pytest.raises(me.DocumentError, match=message):
        me.load_conformance_baseline(baseline)


def test_a_directory_without_results_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(me.DocumentError, match=r"no conformance checks\.json"):
        me.read_conformance_results(tmp_path)


def test_check_ids_with_a_dollar_sign_are_read_and_baselined(tmp_path: Path) -> None:
    """The suite's json-schema-2020-12 scenario names checks after keywords (``...-$defs``): a full run's
    results were refused before."""
    out = tmp_path / "results"
    _result(out, "server-json-schema-2020-12", [("json-schema-2020-12-$schema", "SUCCESS"),
                                                ("json-schema-2020-12-$defs", "FAILURE")])
    baseline = tmp_path / "baseline.yml"
    baseline.write_text("server:\n  - json-schema-2020-12:json-schema-2020-12-$defs\n", encoding="utf-8")
    judged = me.judge_conformance(me.read_conformance_results(out), me.load_conformance_baseline(baseline))
    verdicts = {cid: v for _, checks in judged.scenarios for cid, v in checks}
    assert verdicts == {"json-schema-2020-12-$schema": "passed", "json-schema-2020-12-$defs": "expected"}
    assert judged.exit_code == 0 and "$defs" in me.render(judged, "junit")
