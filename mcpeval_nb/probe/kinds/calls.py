"""Kinds that judge tool calls on the run's connection: schema-guessability, degradation-over-n,
instruction-fidelity, error-honesty, state-recovery, latency-budget, payload-bounds (SPEC 8.3)."""

from __future__ import annotations

import copy
from typing import Any

from ...errors import TransportError
from ...limits import MAX_SERVER_REQUESTS
from ...transport.budget import BUDGET_EXCEEDED
from ..cases import CaseResult, Detail
from .base import CaseContext, failed, passed
from .expect import check_expectation

__all__ = ["degradation_over_n", "error_honesty", "instruction_fidelity", "latency_budget",
           "payload_bounds", "schema_guessability", "state_recovery"]


def _schema_problem(schema: Any) -> bool:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return True
    props = schema.get("properties")
    if props is not None and not isinstance(props, dict):
        return True
    required = schema.get("required")
    if required is None:
        return False
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return True
    return any(r not in (props or {}) for r in required)


def schema_guessability(ctx: CaseContext) -> CaseResult:
    """Preflight the listed inputSchema against the manifest arguments, then one call."""
    f = ctx.fields
    entry = ctx.entry(f["tool"]) or {}
    schema = entry.get("inputSchema")
    if _schema_problem(schema) or not isinstance(schema, dict):
        return failed(ctx.case, "invalid-schema", 0, None)
    if any(name not in f["arguments"] for name in schema.get("required", ())):
        return failed(ctx.case, "missing-required-argument", 0, None)
    outcome = ctx.call(f["tool"], f["arguments"])
    if not outcome.ok:
        return failed(ctx.case, "unexpected-outcome", 1, 1)
    return passed(ctx.case, 1)


def degradation_over_n(ctx: CaseContext) -> CaseResult:
    """Up to max_attempts identical calls; the first error fails the case."""
    f = ctx.fields
    for attempt in range(1, f["max_attempts"] + 1):
        if not ctx.call(f["tool"], f["arguments"]).ok:
            return failed(ctx.case, "unexpected-outcome", attempt, attempt)
    return passed(ctx.case, f["max_attempts"])


def instruction_fidelity(ctx: CaseContext) -> CaseResult:
    """One call checked against the case's expectation."""
    f = ctx.fields
    reason = check_expectation(ctx.call(f["tool"], f["arguments"]), f["expect"])
    return passed(ctx.case, 1) if reason is None else failed(ctx.case, reason, 1, 1)


def _retryable(payload: dict[str, Any] | None) -> bool:
    value = (payload or {}).get("retryable")
    return value if isinstance(value, bool) else False


def error_honesty(ctx: CaseContext) -> CaseResult:
    """Repeat a failing call: stable codes, honest retryability, recovery when retryable."""
    f = ctx.fields
    expect_retryable = f["expect_retryable"]
    first_code: int | None = None
    for attempt in range(1, f["max_attempts"] + 1):
        outcome = ctx.call(f["tool"], f["arguments"])
        if outcome.ok:
            if attempt == 1:
                return failed(ctx.case, "expected-error", 1, 1)
            if expect_retryable:
                return passed(ctx.case, attempt)
            return failed(ctx.case, "unexpected-outcome", attempt, attempt)
        if first_code is None:
            first_code = outcome.code
        elif outcome.code != first_code:
            return failed(ctx.case, "unstable-error-code", attempt, attempt)
        if _retryable(outcome.payload) != expect_retryable:
            return failed(ctx.case, "retryability-mismatch", attempt, attempt)
        if not expect_retryable and attempt == 2:
            return passed(ctx.case, 2)
    return failed(ctx.case, "retry-did-not-recover", f["max_attempts"], f["max_attempts"])


def state_recovery(ctx: CaseContext) -> CaseResult:
    """Failure, recovery, validation: three calls in order."""
    f = ctx.fields
    if ctx.call(f["failure_tool"], f["failure_arguments"]).ok:
        return failed(ctx.case, "failure-not-observed", 1, 1)
    if not ctx.call(f["recovery_tool"], f["recovery_arguments"]).ok:
        return failed(ctx.case, "recovery-failed", 2, 2)
    if not ctx.call(f["validation_tool"], f["validation_arguments"]).ok:
        return failed(ctx.case, "validation-failed", 3, 3)
    return passed(ctx.case, 3)


def latency_budget(ctx: CaseContext) -> CaseResult:
    """Up to ``attempts`` calls, each within ``max_latency_ms``; the slowest is measured."""
    f = ctx.fields
    limit = f["max_latency_ms"]
    base = ctx.session.timeout  # the manifest's timeout_ms, else the transport default (stdio 30 s, HTTP 5 s)
    slowest = 0
    for attempt in range(1, f["attempts"] + 1):
        outcome = ctx.call(f["tool"], f["arguments"], timeout=base + limit / 1000)
        slowest = max(slowest, outcome.latency_ms)
        if not outcome.ok:
            return failed(ctx.case, "unexpected-outcome", attempt, attempt, latency_ms=slowest)
        if outcome.latency_ms > limit:
            return failed(ctx.case, "latency-budget-exceeded", attempt, attempt,
                          detail=Detail("max_latency_ms", limit, outcome.latency_ms), latency_ms=slowest)
    return passed(ctx.case, f["attempts"], latency_ms=slowest)


def payload_bounds(ctx: CaseContext) -> CaseResult:
    """One call with ``field`` set to ``size_bytes`` of ``a``; a broken connection fails the case."""
    f = ctx.fields
    arguments = copy.deepcopy(dict(f["arguments"]))
    arguments[f["field"]] = "a" * f["size_bytes"]
    try:
        outcome = ctx.call(f["tool"], arguments, max_server_requests=MAX_SERVER_REQUESTS, journal=False)
    except TransportError as exc:
        if exc.reason == BUDGET_EXCEEDED:
            raise
        ctx.needs_reconnect = True
        return failed(ctx.case, "payload-unhandled", 1, 1)
    if not outcome.ok and f["expect_handled"]:
        return failed(ctx.case, "unexpected-outcome", 1, 1, latency_ms=outcome.latency_ms)
    ctx.record(f["tool"], arguments, outcome)
    return passed(ctx.case, 1, latency_ms=outcome.latency_ms)
