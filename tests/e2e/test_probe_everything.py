"""The standard probe kinds against npm ``@modelcontextprotocol/server-everything``, stdio and HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import everything_command
from tests.probe_support import case, manifest, run, verdicts

pytestmark = pytest.mark.e2e

LOCATION = {"location": "New York"}
CASES = [
    case("discovery", "discovery-cost", max_tools=100, max_schema_bytes=1_000_000),
    case("tokens", "token-cost", max_total_tokens=100_000, max_tool_tokens=10_000),
    case("guessable", "schema-guessability", tool="echo", arguments={"message": "hello"}),
    case("repeat", "degradation-over-n", tool="get-sum", arguments={"a": 1, "b": 2}, max_attempts=3),
    case("fidelity", "instruction-fidelity", tool="get-structured-content", arguments=LOCATION,
         expect={"outcome": "ok", "required_result_fields": ["structuredContent"],
                 "required_result_paths": ["/structuredContent"]}),
    case("honesty", "error-honesty", tool="get-sum", arguments={"a": "one"}, max_attempts=3,
         expect_retryable=False),
    case("latency", "latency-budget", tool="echo", arguments={"message": "hi"}, attempts=2,
         max_latency_ms=10_000),
    case("pages", "pagination", max_pages=5),
    case("surfaces", "surface-listing", max_pages=20),
    case("output", "output-schema", tool="get-structured-content", arguments=LOCATION),
    case("negotiation", "protocol-negotiation", bogus_version="2000-01-01"),
    case("contention", "contention", tool="echo", arguments={"message": "both"}),
    case("cancel", "cancellation", tool="trigger-long-running-operation",
         arguments={"duration": 1, "steps": 2}, grace_seconds=1, reason="stop"),
    case("payload", "payload-bounds", tool="echo", arguments={"message": ""}, field="message",
         size_bytes=100_000, expect_handled=False),
]
EXPECTED = {c["id"]: (True, None, None) for c in CASES}


def _structure(report: Any) -> list[tuple[str, str, bool, int, tuple[str, ...]]]:
    return [(c.id, c.probe, c.passed, c.attempts, tuple(sorted(c.measurements))) for c in report.cases]


def test_standard_kinds_pass_against_server_everything_over_stdio() -> None:
    command = everything_command("stdio")
    first = run(command, manifest(*CASES))
    assert verdicts(first) == EXPECTED
    assert first.cases[0].measurements["tool_count"] >= 10
    second = run(command, manifest(*CASES))
    assert _structure(first) == _structure(second)


def test_standard_kinds_pass_against_server_everything_over_streamable_http(everything_http: str) -> None:
    report = run(everything_http, manifest(*CASES))
    assert verdicts(report) == EXPECTED
    stdio = run(everything_command("stdio"), manifest(*CASES))
    assert _structure(report) == _structure(stdio)
