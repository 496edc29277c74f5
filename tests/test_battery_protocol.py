"""Protocol checks, server-to-client requests and output schemas in the battery, on the features fixture.

The fixture's stalling and slow tools are skipped (they would cost their 15 s call timeouts); the modes
that break negotiation or surface listing run side by side.
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import mcpeval_nb.testing.servers as fixture_servers
from mcpeval_nb.jsonfmt import dumps
from mcpeval_nb.probe.readiness.battery import BatteryOptions, score_server
from mcpeval_nb.probe.readiness.model import Readiness
from mcpeval_nb.probe.readiness.parse import parse_readiness
from mcpeval_nb.transport import StdioTarget

FEATURES = str(Path(fixture_servers.__file__).parent / "probe_features.py")
SLOW = ("sample_stall", "elicit_stall", "cancel_honor", "cancel_code", "cancel_ignore", "cancel_error",
        "slow")


def run(mode: str) -> tuple[Readiness, str]:
    report = score_server(StdioTarget((sys.executable, FEATURES, mode)), server="features",
                          options=BatteryOptions(skip_tools=SLOW, history=False))
    assert report.readiness is not None, report.readiness_error
    doc = report.to_json()
    return parse_readiness(doc["readiness"]), dumps(doc, sort_keys=True) + report.render("text")


def test_protocol_reasons_server_requests_and_output_schemas_are_scored(root: Path) -> None:
    modes = ("full", "echo", "inconsistent", "surfaces-bad", "bad-version")
    with ThreadPoolExecutor(len(modes)) as pool:
        results = dict(zip(modes, pool.map(run, modes), strict=True))
    protocol = {mode: [(c.id, c.reason) for c in r.area("protocol").checks]
                for mode, (r, _) in results.items()}
    assert protocol == {
        "full": [],  # 6 applicable checks (resources and prompts are declared), all passed
        "echo": [("protocol.negotiation", "protocol-negotiation-echoed-unknown")],
        "inconsistent": [("protocol.negotiation", "protocol-negotiation-inconsistent-support")],
        "surfaces-bad": [("protocol.surfaces", "protocol-surface-invalid")],
        "bad-version": [("protocol.negotiation", "protocol-negotiation-invalid-version")],
    }
    # one failure of six applicable checks: 5/6 = 83.3 -> 83
    assert {mode: r.area("protocol").score for mode, (r, _) in results.items()} == {
        "full": 100, "echo": 83, "inconsistent": 83, "surfaces-bad": 83, "bad-version": 83}
    full = results["full"][0]
    lost = {(c.id, c.tool) for c in full.area("reliability").checks}
    # sampling/elicitation requests are declined (-32601) and the tools still answer: exercised
    for tool in ("sample_ok", "sample_invalid", "sample_flood", "elicit_ok", "elicit_flood"):
        assert not any(t == tool for _, t in lost), tool
    # declared output schemas: missing structuredContent, a missing field and a wrong type all break it
    broken = {("reliability.output-schema", t) for t in ("out_missing", "out_field_missing", "out_invalid")}
    assert broken <= lost
    assert ("reliability.output-schema", "out_ok") not in lost
    assert ("reliability.output-schema", "out_ref") not in lost
    # a crashing tool and a garbage answer are never exercised; the battery reconnects and carries on
    coverage = {(c.tool, c.reason) for c in full.area("coverage").checks}
    assert ("crash", "coverage-call-failed") in coverage and ("garbage", "coverage-call-failed") in coverage
    assert full.area("reliability").measurements["transport_errors"] >= 3
    for _, output in results.values():
        assert "CANARY" not in output
