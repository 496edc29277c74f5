"""Every fixed reason label is reached by a real fixture-server process (SPEC 8.3).

Each test runs one manifest against one fixture process and compares every case's verdict with a
table; the last test checks that the tables together cover every label of ``mcpeval-nb explain``.
"""

from __future__ import annotations

from typing import Any

import pytest

import mcpeval_nb
from tests.probe_support import SANDBOXES, case, fixture, free_port, manifest, run, verdicts, writer_case

Table = dict[str, tuple[bool, str | None, int | None]]
T: dict[str, Table] = {}


def _check(name: str, command: list[str], cases: list[dict[str, Any]], table: Table, **kw: Any) -> None:
    T[name] = table
    timeout = kw.pop("timeout_ms", None)
    writes = any(c["access"] == "mutating" for c in cases)
    extra = {"sandboxes": SANDBOXES} if writes else {}
    report = run(command, manifest(*cases, timeout_ms=timeout, **extra), allow_mutation=writes, **kw)
    assert verdicts(report) == table


CLEAN_CASES = [
    case("discovery", "discovery-cost", max_tools=3, max_schema_bytes=100000),
    case("missing", "instruction-fidelity", tool="describe_status", arguments={},
         expect={"outcome": "ok", "required_result_fields": ["absent"]}),
    case("missing-path", "instruction-fidelity", tool="describe_status", arguments={},
         expect={"outcome": "ok", "required_result_paths": ["/structuredContent/absent"]}),
    writer_case("code", "instruction-fidelity", tool="break_session", arguments={},
         expect={"outcome": "error", "error_code": -32099}),
    case("expected-error", "error-honesty", tool="read_counter", arguments={}, max_attempts=3,
         expect_retryable=False),
    writer_case("retryability", "error-honesty", tool="break_session", arguments={}, max_attempts=3,
         expect_retryable=True),
    case("no-recovery", "error-honesty", tool="flaky_read", arguments={}, max_attempts=2,
         expect_retryable=True),
    writer_case("not-observed", "state-recovery", failure_tool="read_counter", failure_arguments={},
         recovery_tool="recover_session", recovery_arguments={}, validation_tool="session_status",
         validation_arguments={}),
    writer_case("recovery", "state-recovery", failure_tool="break_session", failure_arguments={},
         recovery_tool="break_session", recovery_arguments={}, validation_tool="session_status",
         validation_arguments={}),
    writer_case("mismatch-ok", "instruction-fidelity", tool="break_session", arguments={},
         expect={"outcome": "ok"}),
]


def test_clean_server_reaches_the_expectation_and_honesty_reasons() -> None:
    _check("clean", fixture("probe_clean"), CLEAN_CASES, {
        "discovery": (False, "discovery-limit-exceeded", 1),
        "missing": (False, "missing-field", 1),
        "missing-path": (False, "missing-field", 1),
        "code": (False, "error-code-mismatch", 1),
        "expected-error": (False, "expected-error", 1),
        "retryability": (False, "retryability-mismatch", 1),
        "no-recovery": (False, "retry-did-not-recover", 2),
        "not-observed": (False, "failure-not-observed", 1),
        "recovery": (False, "recovery-failed", 2),
        "mismatch-ok": (False, "unexpected-outcome", 1),
    })


def test_broken_server_reaches_the_schema_contention_and_degradation_reasons() -> None:
    port = free_port()
    cases = [
        case("contention", "contention", tool="shared_read", arguments={"port": port}),
        case("unstable", "error-honesty", tool="flaky_read", arguments={}, max_attempts=4,
             expect_retryable=True),
        case("tokens", "token-cost", max_total_tokens=100000, max_tool_tokens=100),
        case("schema", "schema-guessability", tool="describe_status", arguments={}),
        case("repeat", "degradation-over-n", tool="read_counter", arguments={}, max_attempts=5),
        case("literal", "instruction-fidelity", tool="describe_status", arguments={},
             expect={"outcome": "ok", "equals": {"status": "ready"}}),
        writer_case("validation", "state-recovery", failure_tool="break_session", failure_arguments={},
             recovery_tool="recover_session", recovery_arguments={}, validation_tool="session_status",
             validation_arguments={}),
    ]
    _check("broken", fixture("probe_broken"), cases, {
        "contention": (False, "contended-client-failed", 2),
        "unstable": (False, "unstable-error-code", 2),
        "tokens": (False, "token-budget-exceeded", 1),
        "schema": (False, "invalid-schema", None),
        "repeat": (False, "unexpected-outcome", 3),
        "literal": (False, "value-mismatch", 1),
        "validation": (False, "validation-failed", 3),
    })


def test_required_argument_missing_from_the_manifest_fails_without_a_call() -> None:
    cases = [case("required", "schema-guessability", tool="lookup_by_kind", arguments={}),
             case("given", "schema-guessability", tool="lookup_by_kind", arguments={"kind": "alpha"})]
    _check("required", fixture("required_args"), cases, {
        "required": (False, "missing-required-argument", None), "given": (True, None, None)})


@pytest.mark.parametrize(("mode", "reason"), [
    ("invalid", "pagination-invalid-entry"),
    ("duplicate", "pagination-duplicate-tool"),
    ("stalled", "pagination-stalled-cursor"),
])
def test_paged_server_modes_reach_each_pagination_reason(mode: str, reason: str) -> None:
    first = 4 if mode == "stalled" else 2
    _check(f"paged-{mode}", fixture("probe_paged", mode), [case("pages", "pagination", max_pages=3)],
           {"pages": (False, reason, first)})


def test_slow_tool_breaks_the_latency_budget() -> None:
    cases = [case("latency", "latency-budget", tool="slow_read", arguments={}, attempts=2, max_latency_ms=50)]
    _check("latency", fixture("probe_paged", "clean"), cases,
           {"latency": (False, "latency-budget-exceeded", 1)})


FEATURE_CASES = [
    case("payload", "payload-bounds", tool="crash", arguments={}, field="blob", size_bytes=1000,
         expect_handled=False),
    case("out-missing", "output-schema", tool="out_missing", arguments={}),
    case("out-field", "output-schema", tool="out_field_missing", arguments={}),
    case("out-invalid", "output-schema", tool="out_invalid", arguments={}),
    case("out-ref", "output-schema", tool="out_ref", arguments={}),
    case("out-none", "output-schema", tool="out_none", arguments={}),
    case("cancel-honor", "cancellation", tool="cancel_honor", arguments={}, grace_seconds=1, reason="stop"),
    case("cancel-code", "cancellation", tool="cancel_code", arguments={}, grace_seconds=1, reason="stop"),
    case("cancel-ignored", "cancellation", tool="cancel_ignore", arguments={}, grace_seconds=1,
         reason="stop"),
    case("cancel-errored", "cancellation", tool="cancel_error", arguments={}, grace_seconds=1, reason="stop"),
    case("sampling-ok", "sampling", tool="sample_ok", arguments={}, max_requests=2),
    case("sampling-invalid", "sampling", tool="sample_invalid", arguments={}, max_requests=2),
    case("sampling-flood", "sampling", tool="sample_flood", arguments={}, max_requests=2),
    case("elicit-ok", "elicitation", tool="elicit_ok", arguments={}, max_requests=2, respond="accept"),
    case("elicit-invalid", "elicitation", tool="elicit_invalid", arguments={}, max_requests=2,
         respond="decline"),
    case("elicit-flood", "elicitation", tool="elicit_flood", arguments={}, max_requests=2, respond="cancel"),
    case("sub-ok", "resource-subscription", uri="fixture://ok", trigger_tool="trigger",
         trigger_arguments={"uri": "fixture://ok"}, max_wait_seconds=5),
    case("sub-auto", "resource-subscription", uri="fixture://auto", max_wait_seconds=5),
    case("sub-unreadable", "resource-subscription", uri="fixture://unreadable", max_wait_seconds=1),
    case("sub-rejected", "resource-subscription", uri="fixture://nosub", max_wait_seconds=1),
    case("sub-silent", "resource-subscription", uri="fixture://silent", max_wait_seconds=1),
    case("complete-ok", "completion", ref_type="ref/prompt", ref_uri="greet", argument_name="name",
         argument_value="al", max_values=5),
    case("complete-unknown", "completion", ref_type="ref/prompt", ref_uri="greet", argument_name="other",
         argument_value="al", max_values=5),
    case("complete-malformed", "completion", ref_type="ref/prompt", ref_uri="malformed", argument_name="name",
         argument_value="al", max_values=5),
    case("complete-flood", "completion", ref_type="ref/prompt", ref_uri="flood", argument_name="name",
         argument_value="al", max_values=10),
    case("surfaces", "surface-listing", max_pages=3),
]


def test_features_server_reaches_output_cancellation_request_subscription_and_completion_reasons() -> None:
    _check("features", fixture("probe_features"), FEATURE_CASES, {
        "payload": (False, "payload-unhandled", 1),
        "out-missing": (False, "output-schema-declared-but-missing", 1),
        "out-field": (False, "output-schema-field-missing", 1),
        "out-invalid": (False, "output-schema-invalid-result", 1),
        "out-ref": (True, None, None),
        "out-none": (True, None, None),
        "cancel-honor": (True, None, None),
        "cancel-code": (True, None, None),
        "cancel-ignored": (False, "cancellation-ignored", 2),
        "cancel-errored": (False, "cancellation-errored", 2),
        "sampling-ok": (True, None, None),
        "sampling-invalid": (False, "sampling-invalid-request", 1),
        "sampling-flood": (False, "sampling-request-flood", 1),
        "elicit-ok": (True, None, None),
        "elicit-invalid": (False, "elicitation-invalid-request", 1),
        "elicit-flood": (False, "elicitation-request-flood", 1),
        "sub-ok": (True, None, None),
        "sub-auto": (True, None, None),
        "sub-unreadable": (False, "resource-unreadable", 1),
        "sub-rejected": (False, "subscription-rejected", 2),
        "sub-silent": (False, "subscription-notification-missing", 2),
        "complete-ok": (True, None, None),
        "complete-unknown": (False, "completion-argument-unknown", 1),
        "complete-malformed": (False, "completion-invalid-request", 1),
        "complete-flood": (False, "completion-value-flood", 1),
        "surfaces": (True, None, None),
    })


def test_stalled_calls_and_requests_reach_the_stall_and_transport_reasons() -> None:
    cases = [
        case("sampling-stall", "sampling", tool="sample_stall", arguments={}, max_requests=2),
        case("elicit-stall", "elicitation", tool="elicit_stall", arguments={}, max_requests=2,
             respond="accept"),
        case("complete-stall", "completion", ref_type="ref/prompt", ref_uri="stall", argument_name="name",
             argument_value="al", max_values=5),
        case("timeout", "degradation-over-n", tool="slow", arguments={"ms": 5000}, max_attempts=2),
        case("closed", "degradation-over-n", tool="crash", arguments={}, max_attempts=2),
        case("protocol", "degradation-over-n", tool="garbage", arguments={}, max_attempts=2),
        case("after", "output-schema", tool="out_ok", arguments={}),
    ]
    _check("stalls", fixture("probe_features"), cases, {
        "sampling-stall": (False, "sampling-stalled-call", 1),
        "elicit-stall": (False, "elicitation-stalled-call", 1),
        "complete-stall": (False, "completion-stalled-request", 1),
        "timeout": (False, "transport-timeout", 1),
        "closed": (False, "transport-closed", 1),
        "protocol": (False, "transport-error", 1),
        "after": (True, None, None),
    }, timeout_ms=1000)


@pytest.mark.parametrize(("mode", "reason"), [
    ("surfaces-bad", "surface-invalid-envelope"),
    ("surfaces-stalled", "surface-stalled-cursor"),
])
def test_surface_modes_reach_each_surface_reason(mode: str, reason: str) -> None:
    first = 1 if mode == "surfaces-bad" else 3  # resources/list once, then prompts/list twice
    cases = [case("surfaces", "surface-listing", max_pages=2)]
    _check(f"surfaces-{mode}", fixture("probe_features", mode), cases, {"surfaces": (False, reason, first)})


@pytest.mark.parametrize(("mode", "expected"), [
    ("echo", (False, "negotiation-echoed-unknown", 2)),
    ("bad-version", (False, "negotiation-invalid-version", 2)),
    ("inconsistent", (False, "negotiation-inconsistent-support", 3)),
    ("full", (True, None, None)),
])
def test_negotiation_modes_reach_each_negotiation_reason(mode: str, expected: Any) -> None:
    cases = [case("negotiation", "protocol-negotiation", bogus_version="2000-01-01")]
    _check(f"negotiation-{mode}", fixture("probe_features", mode), cases, {"negotiation": expected})


def test_an_older_supported_version_is_a_legitimate_answer() -> None:
    cases = [case("negotiation", "protocol-negotiation", bogus_version="2000-01-01")]
    _check("old-protocol", fixture("old_protocol"), cases, {"negotiation": (True, None, None)})


def test_spent_budget_reports_evaluation_budget_exceeded_for_the_remaining_cases() -> None:
    cases = [case("first", "degradation-over-n", tool="read_counter", arguments={}, max_attempts=2),
             case("second", "degradation-over-n", tool="read_counter", arguments={}, max_attempts=5),
             case("third", "degradation-over-n", tool="read_counter", arguments={}, max_attempts=2)]
    # initialize + tools/list + 2 calls = 4 requests; the second case's 3rd call breaks a budget of 7
    _check("budget", fixture("probe_clean"), cases, {
        "first": (True, None, None),
        "second": (False, "evaluation-budget-exceeded", 4),
        "third": (False, "evaluation-budget-exceeded", None),
    }, max_requests=7)


def test_an_endpoint_that_needs_authorization_reaches_transport_unauthorized(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.transport_helpers import http_fixture

    monkeypatch.delenv("MCPEVAL_HTTP_AUTHORIZATION", raising=False)
    cases = [case("auth", "degradation-over-n", tool="ok", arguments={}, max_attempts=2)]
    with http_fixture("forbidden") as url:
        _check("unauthorized", url, cases, {"auth": (False, "transport-unauthorized", None)})  # type: ignore[arg-type]


def test_every_reason_label_is_reached_by_a_real_process_test() -> None:
    if len(T) < 18:
        pytest.skip("run the whole module: the coverage check reads every table above")
    reached = {reason for table in T.values() for _, reason, _ in table.values() if reason is not None}
    assert set(mcpeval_nb.reason_hints()) and reached == {label for label, _ in mcpeval_nb.reason_hints()}
