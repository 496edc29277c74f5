"""The one table of probe kinds: per kind its label, access rule, numeric ranges, semantic rule and runner.

Everything else that depends on the kind is derived from ``KIND_TABLE``: the label list (``PROBE_KINDS``,
in SPEC 8.3's order), the manifest's read-only and range checks and their messages (``probe.rules``), the
runner's dispatch and declared-tool checks, and the report reader's kind check.  The published manifest
schema (``schemas/manifest.schema.json``) states the same kinds, access constants and ranges;
``tests/test_manifest_kinds.py`` checks that the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import KindFn
from .calls import (
    degradation_over_n,
    error_honesty,
    instruction_fidelity,
    latency_budget,
    payload_bounds,
    schema_guessability,
    state_recovery,
)
from .catalog import discovery_cost, pagination, protocol_negotiation, surface_listing, token_cost
from .features import completion, output_schema, resource_subscription
from .rules import (
    Rule,
    completion_rule,
    fidelity_rule,
    identifier_rule,
    negotiation_rule,
    subscription_rule,
    token_cost_rule,
    workflow_rule,
)
from .server_requests import elicitation, sampling
from .sessions import cancellation, contention, workflow

__all__ = ["KIND_TABLE", "PROBE_KINDS", "KindSpec", "Range", "probe_kinds"]


@dataclass(frozen=True)
class Range:
    """An integer field's inclusive bounds (SPEC 8.1): ``<field> must be between <low> and <high>``.

    Attributes:
        field: the case field. low / high: the inclusive bounds.
        required: False when the field may be absent (then it is not checked).
    """

    field: str
    low: int
    high: int
    required: bool = True


@dataclass(frozen=True)
class KindSpec:
    """Everything the package knows about one probe kind.

    Attributes:
        name: the kind label (``probe`` in a manifest case and a report).
        run: the implementation, ``CaseContext -> CaseResult``.
        read_only_only: every case of this kind must declare ``access: read_only``.
        ranges: the integer fields' bounds, in the order they are checked.
        rule: the kind's further semantic rule, run after the ranges, or None.
        steps: the case lists ``steps`` (each names a tool): every step tool must be declared and none
            may be a writer, and a failure's hint names the failing call.
    """

    name: str
    run: KindFn
    read_only_only: bool
    ranges: tuple[Range, ...] = ()
    rule: Rule | None = None
    steps: bool = False


def _spec(name: str, run: KindFn, read_only_only: bool, *ranges: Range, rule: Rule | None = None,
          steps: bool = False) -> KindSpec:
    return KindSpec(name=name, run=run, read_only_only=read_only_only, ranges=ranges, rule=rule, steps=steps)


_SPECS = (
    _spec("workflow", workflow, True, Range("repetitions", 1, 20), rule=workflow_rule, steps=True),
    _spec("contention", contention, False),
    _spec("error-honesty", error_honesty, False, Range("max_attempts", 2, 20)),
    _spec("state-recovery", state_recovery, False),
    _spec("discovery-cost", discovery_cost, True, Range("max_tools", 1, 10000),
          Range("max_schema_bytes", 1, 10000000)),
    _spec("token-cost", token_cost, True, Range("max_total_tokens", 1, 1000000),
          Range("max_tool_tokens", 1, 100000, required=False), rule=token_cost_rule),
    _spec("schema-guessability", schema_guessability, False),
    _spec("degradation-over-n", degradation_over_n, False, Range("max_attempts", 2, 100)),
    _spec("instruction-fidelity", instruction_fidelity, False, rule=fidelity_rule),
    _spec("latency-budget", latency_budget, True, Range("attempts", 2, 20),
          Range("max_latency_ms", 1, 600000)),
    _spec("pagination", pagination, True, Range("max_pages", 1, 1000)),
    _spec("payload-bounds", payload_bounds, True, Range("size_bytes", 1, 16000000),
          rule=identifier_rule("field", "payload field is invalid")),
    _spec("surface-listing", surface_listing, True, Range("max_pages", 1, 1000)),
    _spec("output-schema", output_schema, True),
    _spec("cancellation", cancellation, True, Range("grace_seconds", 1, 60),
          rule=identifier_rule("reason", "cancellation reason is invalid")),
    _spec("protocol-negotiation", protocol_negotiation, True, rule=negotiation_rule),
    _spec("sampling", sampling, True, Range("max_requests", 1, 10)),
    _spec("elicitation", elicitation, True, Range("max_requests", 1, 10)),
    _spec("resource-subscription", resource_subscription, True, Range("max_wait_seconds", 1, 60),
          rule=subscription_rule),
    _spec("completion", completion, True, Range("max_values", 1, 100), rule=completion_rule),
)

#: kind label -> its spec, in SPEC 8.3's kind order.
KIND_TABLE: dict[str, KindSpec] = {spec.name: spec for spec in _SPECS}
#: Every probe kind label, in SPEC order.
PROBE_KINDS: tuple[str, ...] = tuple(KIND_TABLE)


def probe_kinds() -> tuple[str, ...]:
    """Every probe kind label, in SPEC order."""
    return PROBE_KINDS
