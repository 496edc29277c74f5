"""Probe kinds: one function per kind label, taking a ``CaseContext`` and returning a ``CaseResult``."""

from __future__ import annotations

from .base import CaseContext, KindFn, failed, is_writer, passed
from .calls import (
    degradation_over_n,
    error_honesty,
    instruction_fidelity,
    latency_budget,
    payload_bounds,
    schema_guessability,
    state_recovery,
)
from .catalog import (
    discovery_cost,
    pagination,
    protocol_negotiation,
    surface_listing,
    token_cost,
    tool_tokens,
)
from .expect import check_expectation, json_equal, resolve_pointer
from .features import completion, output_conforms, output_schema, resource_subscription
from .server_requests import elicitation, sampling
from .sessions import cancellation, contention, workflow

__all__ = [
    "KINDS",
    "CaseContext",
    "KindFn",
    "check_expectation",
    "failed",
    "is_writer",
    "json_equal",
    "output_conforms",
    "passed",
    "resolve_pointer",
    "tool_tokens",
]

#: kind label -> implementation, in SPEC's kind order.
KINDS: dict[str, KindFn] = {
    "workflow": workflow,
    "contention": contention,
    "error-honesty": error_honesty,
    "state-recovery": state_recovery,
    "discovery-cost": discovery_cost,
    "token-cost": token_cost,
    "schema-guessability": schema_guessability,
    "degradation-over-n": degradation_over_n,
    "instruction-fidelity": instruction_fidelity,
    "latency-budget": latency_budget,
    "pagination": pagination,
    "payload-bounds": payload_bounds,
    "surface-listing": surface_listing,
    "output-schema": output_schema,
    "cancellation": cancellation,
    "protocol-negotiation": protocol_negotiation,
    "sampling": sampling,
    "elicitation": elicitation,
    "resource-subscription": resource_subscription,
    "completion": completion,
}
