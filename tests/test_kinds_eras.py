"""Probe kinds on both eras against the official SDK: URL-mode and form elicitation, sampling with tools,
tasks and negotiation, with canaries (instructions, a description, an elicitation URL, a task result)
that never reach a report, the journal or the trend history."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import mcpeval_nb as me
from mcpeval_nb.testing.servers._eras_readiness import (
    CANARY_DESCRIPTION,
    CANARY_INSTRUCTIONS,
    CANARY_TASK,
    CANARY_URL,
)
from mcpeval_nb.transport import HttpTarget
from tests.era_support import era_http, era_stdio
from tests.probe_support import case, manifest

CANARIES = (CANARY_INSTRUCTIONS, CANARY_DESCRIPTION, CANARY_URL, CANARY_TASK, "CANARY-era")
CASES = manifest(
    case("confirm", "elicitation", tool="confirm_action", arguments={"item": "x"}, respond="accept",
         max_requests=2),
    case("portal", "elicitation", tool="open_portal", arguments={}, respond="accept", max_requests=2),
    case("model", "sampling", tool="ask_model", arguments={}, max_requests=2),
    case("job", "instruction-fidelity", tool="job", arguments={"ms": 50, "note": CANARY_TASK},
         expect={"outcome": "ok"}),
    case("versions", "protocol-negotiation", bogus_version="2000-01-01"))


@pytest.fixture(scope="module")
def modern_http() -> Iterator[HttpTarget]:
    with era_http("modern") as target:
        yield target


def _probe(target: object, protocol: str, root: Path) -> me.ProbeReport:
    options = me.ProbeOptions(server="eras", protocol=protocol, root=root, journal=True, history=True)
    return me.run_probes(target, manifest=CASES, options=options)  # type: ignore[arg-type]


def _verdicts(report: me.ProbeReport) -> dict[str, tuple[bool, str | None]]:
    return {c.id: (c.passed, c.reason) for c in report.cases}


def _assert_no_canary(report: me.ProbeReport, root: Path) -> None:
    outputs = [report.render(fmt) for fmt in ("text", "json", "markdown", "junit", "sarif")]
    outputs += [p.read_text() for p in root.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json")]
    for text in outputs:
        assert not any(canary in text for canary in CANARIES)


def test_every_kind_passes_on_the_modern_era_and_no_canary_escapes(modern_http: HttpTarget,
                                                                   tmp_path: Path) -> None:
    report = _probe(modern_http, "2026-07-28", tmp_path)
    assert _verdicts(report) == dict.fromkeys(("confirm", "portal", "model", "job", "versions"), (True, None))
    assert report.modern and report.readiness is not None and report.readiness.standard == "mcpeval-modern/1"
    _assert_no_canary(report, tmp_path)


def test_every_kind_passes_on_the_legacy_era_and_no_canary_escapes(tmp_path: Path) -> None:
    report = _probe(era_stdio("dual"), "legacy", tmp_path)
    assert _verdicts(report) == dict.fromkeys(("confirm", "portal", "model", "job", "versions"), (True, None))
    assert not report.modern and report.readiness is not None
    assert report.readiness.standard == "mcpeval-standard/2"
    _assert_no_canary(report, tmp_path)


def test_trends_say_standard_changed_between_the_eras(modern_http: HttpTarget, tmp_path: Path) -> None:
    with era_http("dual") as dual:
        for protocol in ("legacy", "2026-07-28"):
            options = me.BatteryOptions(history=True, root=tmp_path, protocol=protocol)
            me.score_server(dual, server="dual", options=options)
    assert "standard changed" in me.trends_text(root=tmp_path)
