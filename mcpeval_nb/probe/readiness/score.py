"""Readiness under ``mcpeval-standard/2`` (SPEC 9.3) and ``mcpeval-modern/1``: a pure function from
battery observations (the two standards differ only in their protocol checks).

``score_readiness`` turns ``BatteryObservations`` (``readiness.observations``) into a ``Readiness``: six
areas, each rounded half away from zero, and the weighted overall score.  No I/O, no payloads.
"""

from __future__ import annotations

import math

from .labels import AREAS, MODERN_STANDARD
from .model import Area, Check, Readiness, Surface
from .observations import BatteryObservations, ToolFacts, ToolRun

__all__ = ["latency_band", "log_curve", "round_half_away", "score_readiness"]


def round_half_away(x: float) -> int:
    """Round half away from zero (Rust's ``f64::round``)."""
    return math.floor(abs(x) + 0.5) * (1 if x >= 0 else -1)


def log_curve(v: float, full: float, zero: float) -> float:
    """100 at or below ``full``, 0 at or above ``zero``, logarithmic in between."""
    if v <= full:
        return 100.0
    if v >= zero:
        return 0.0
    return 100.0 * (math.log(zero) - math.log(v)) / (math.log(zero) - math.log(full))


def latency_band(ms: int) -> int:
    """Score of a median latency: <=100 ms 100, <=300 80, <=1000 50, <=3000 20, else 0."""
    for bound, score in ((100, 100), (300, 80), (1000, 50), (3000, 20)):
        if ms <= bound:
            return score
    return 0


def _run_for(obs: BatteryObservations, name: str) -> ToolRun:
    for run in obs.runs:
        if run.name == name:
            return run
    return ToolRun(name, not_called="coverage-unannotated")


def _protocol(obs: BatteryObservations) -> tuple[float, list[Check], dict[str, int]]:
    if not obs.protocol:
        first = "protocol.discover" if obs.standard == MODERN_STANDARD else "protocol.ping"
        return 0.0, [Check(first, "protocol-call-failed")], {}
    lost = [Check(cid, reason) for cid, reason in obs.protocol if reason is not None]
    return 100.0 * (len(obs.protocol) - len(lost)) / len(obs.protocol), lost, {}


def _catalog(obs: BatteryObservations) -> tuple[float, list[Check], dict[str, int]]:
    if not obs.tools:
        return 0.0, [Check("catalog.empty", "catalog-no-tools")], {}
    shares, lost = [], []
    for t in obs.tools:
        checks: list[tuple[str, bool, str, int | None]] = [
            ("catalog.description", t.description_chars >= 40, "catalog-short-description",
             t.description_chars)]
        if t.has_properties:
            checks.append(("catalog.params-described", t.params_described, "catalog-undescribed-params",
                           None))
            checks.append(("catalog.params-typed", t.params_typed, "catalog-untyped-params", None))
        checks.append(("catalog.read-only-declared", t.read_only_hint is not None,
                       "catalog-read-only-undeclared", None))
        if t.writer:
            checks.append(("catalog.destructive-declared", t.destructive_hint is not None,
                           "catalog-destructive-undeclared", None))
        checks.append(("catalog.output-schema", t.has_output_schema, "catalog-no-output-schema", None))
        shares.append(100.0 * sum(ok for _, ok, _, _ in checks) / len(checks))
        lost += [Check(cid, reason, 0, observed, t.name) for cid, ok, reason, observed in checks if not ok]
    return sum(shares) / len(shares), lost, {}


def _context(obs: BatteryObservations) -> tuple[float, list[Check], dict[str, int]]:
    catalog = sum(t.tokens for t in obs.tools)
    heaviest = min(obs.tools, key=lambda t: (-t.tokens, t.name), default=None)
    heavy = heaviest.tokens if heaviest else 0
    c_score, h_score = log_curve(catalog, 2000, 40000), log_curve(heavy, 500, 5000)
    lost = []
    if round_half_away(c_score) < 100:
        lost.append(Check("context.catalog", "context-catalog-heavy", round_half_away(c_score), catalog))
    if round_half_away(h_score) < 100 and heaviest is not None:
        lost.append(Check("context.heaviest-tool", "context-tool-heavy", round_half_away(h_score), heavy,
                          heaviest.name))
    measurements = {"catalog_tokens": catalog, "heaviest_tool_tokens": heavy}
    return 0.75 * c_score + 0.25 * h_score, lost, measurements


def _non_writers(obs: BatteryObservations) -> list[ToolFacts]:
    return [t for t in obs.tools if not t.writer]


def _honesty(obs: BatteryObservations) -> tuple[float, list[Check], dict[str, int]]:
    judged = honest = 0
    lost = []
    for t in _non_writers(obs):
        run = _run_for(obs, t.name)
        if run.skipped:
            judged += 1
            lost.append(Check("error-honesty.invalid-input", "coverage-skipped", tool=t.name))
        elif run.honesty is not None:
            judged += 1
            reason = run.honesty.reason()
            if reason is None:
                honest += 1
            else:
                lost.append(Check("error-honesty.invalid-input", reason, tool=t.name))
    if not judged:
        reason = "honesty-untestable" if _non_writers(obs) else "no-read-only-tools"
        return 0.0, [Check("error-honesty.untestable", reason)], {}
    return 100.0 * honest / judged, lost, {}


def _tool_entry(t: ToolFacts, run: ToolRun) -> tuple[float, list[Check]]:
    if run.skipped:
        return 0.0, [Check("reliability.skipped", "coverage-skipped", tool=t.name)]
    reason = run.not_exercised_reason()
    if reason is not None:
        return 0.0, [Check("reliability.none-exercised", reason, tool=t.name)]
    calls = run.calls
    success = 100.0 * run.successes / len(calls)
    lost = []
    if run.successes < len(calls):
        lost.append(Check("reliability.success", "reliability-call-failed", round_half_away(success),
                          run.successes, t.name))
    outcomes = {(c.outcome, c.code) for c in calls}
    parts = [100.0 if len(outcomes) == 1 else 0.0]
    if len(outcomes) > 1:
        lost.append(Check("reliability.consistent", "reliability-inconsistent", tool=t.name))
    latencies = sorted(c.latency_ms for c in calls if c.latency_ms is not None)
    band = latency_band(latencies[(len(latencies) - 1) // 2]) if latencies else 0
    parts.append(float(band))
    if band < 100:
        lost.append(Check("reliability.latency", "reliability-slow", band, None, t.name))
    if t.has_output_schema:
        ok = all(c.output_conforms is not False for c in calls if c.outcome == "success")
        parts.append(100.0 if ok else 0.0)
        if not ok:
            lost.append(Check("reliability.output-schema", "reliability-output-schema-broken", tool=t.name))
    return success / 100.0 * sum(parts) / len(parts), lost


def _reliability(obs: BatteryObservations) -> tuple[float, list[Check], dict[str, int]]:
    entries: list[float] = []
    lost: list[Check] = []
    counts = dict.fromkeys(("successful_calls", "tool_errors", "rpc_errors", "rejected_calls",
                            "transport_errors", "untested_tools"), 0)
    any_skipped = False
    for t in _non_writers(obs):
        run = _run_for(obs, t.name)
        any_skipped |= run.skipped
        entry, checks = _tool_entry(t, run)
        entries.append(entry)
        lost += checks
        counts["untested_tools"] += not run.calls
        for c in run.calls:
            key = {"success": "successful_calls", "tool-error": "tool_errors",
                   "transport-error": "transport_errors"}.get(c.outcome)
            key = key or ("rejected_calls" if c.code == -32602 else "rpc_errors")
            counts[key] += 1
    if not entries:
        reason = "no-read-only-tools" if not _non_writers(obs) else "reliability-none-exercised"
        return 0.0, [Check("reliability.none-exercised", reason)], counts
    for cid, case, failed in (("reliability.contention", obs.contention, "reliability-contention-failed"),
                              ("reliability.payload", obs.payload, "reliability-payload-unhandled")):
        if any_skipped:
            entries.append(0.0)
            lost.append(Check(cid, "coverage-skipped"))
        elif case is not None:
            entries.append(100.0 if case[1] else 0.0)
            if not case[1]:
                lost.append(Check(cid, failed, tool=case[0]))
    return sum(entries) / len(entries), lost, counts


def _coverage(obs: BatteryObservations) -> tuple[float, list[Check], dict[str, int]]:
    tools = _non_writers(obs)
    if not tools:
        return 0.0, [Check("coverage.exercised", "no-read-only-tools")], {}
    lost = []
    for t in tools:
        reason = _run_for(obs, t.name).not_exercised_reason()
        if reason is not None:
            lost.append(Check("coverage.exercised", reason, tool=t.name))
    return 100.0 * (len(tools) - len(lost)) / len(tools), lost, {}


_SCORERS = {"protocol": _protocol, "catalog": _catalog, "context": _context, "error-honesty": _honesty,
            "reliability": _reliability, "coverage": _coverage}


def score_readiness(obs: BatteryObservations) -> Readiness:
    """Score battery observations under ``mcpeval-standard/2`` (SPEC 9.3).

    Args:
        obs: the battery's observations.

    Returns:
        The readiness: six areas (each rounded half away from zero), the weighted overall score, the
        surface counts and the measurement profile.
    """
    areas = []
    for name, weight in AREAS:
        raw, lost, measurements = _SCORERS[name](obs)
        areas.append(Area(name, weight, round_half_away(raw), tuple(lost), measurements))
    overall = min(max(round_half_away(sum(a.weight * a.score for a in areas) / 100), 0), 100)
    writers = sum(t.writer for t in obs.tools)
    exercised = sum(_run_for(obs, t.name).not_exercised_reason() is None for t in _non_writers(obs))
    surface = Surface(len(obs.tools), len(obs.tools) - writers, writers, exercised)
    return Readiness(overall, tuple(areas), surface, obs.attested_read_only, obs.measurement_profile,
                     obs.standard)
