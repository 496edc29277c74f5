"""Readiness under mcpeval-standard/2: the pinned example, each area's rules, rounding, badge, parsing."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpeval_nb.errors import DocumentError
from mcpeval_nb.jsonfmt import dumps
from mcpeval_nb.probe.readiness.model import badge_url, measurement_profile
from mcpeval_nb.probe.readiness.observations import (
    BatteryObservations,
    CallObservation,
    HonestyObservation,
    ToolFacts,
    ToolRun,
    tool_tokens,
)
from mcpeval_nb.probe.readiness.parse import parse_readiness
from mcpeval_nb.probe.readiness.score import latency_band, log_curve, round_half_away, score_readiness

PROTOCOL_OK = (("protocol.unknown-method", None), ("protocol.ping", None), ("protocol.unknown-tool", None),
               ("protocol.pagination", None), ("protocol.negotiation", None))
HONEST = HonestyObservation("rpc-error", -32602)


def calls(*latencies: int, outcome: str = "success") -> tuple[CallObservation, ...]:
    return tuple(CallObservation(outcome, None, ms) for ms in latencies)  # type: ignore[arg-type]


def ro(name: str, **kw: Any) -> ToolFacts:
    base: dict[str, Any] = {"description_chars": 60, "read_only_hint": True, "tokens": 50}
    base.update(kw)
    return ToolFacts(name, **base)


def pinned_example() -> BatteryObservations:
    """The SPEC 9.3 pinned example: 12 tools, 2 writers, 10 read-only tools all exercised."""
    tools = [ro(f"read_{i}") for i in range(9)]
    tools.append(ro("read_params", has_properties=True, params_described=False))
    tools += [ToolFacts(f"write_{i}", description_chars=60, read_only_hint=False, tokens=50)
              for i in range(2)]
    runs = [ToolRun(t.name, honesty=HONEST, calls=calls(10, 20, 30)) for t in tools[:10]]
    runs[0] = ToolRun("read_0", honesty=HONEST, calls=calls(1500, 1200, 1100))  # band 20
    runs[1] = ToolRun("read_1", honesty=HONEST, calls=calls(2000, 10, 2500))  # median 2000 -> band 20
    runs[2] = ToolRun("read_2", honesty=HONEST, calls=calls(400, 500, 20))  # median 400 -> band 50
    return BatteryObservations(tuple(tools), tuple(runs), PROTOCOL_OK, ("read_0", True), ("read_0", True))


def test_the_pinned_example_scores_91_with_its_working_written_out() -> None:
    r = score_readiness(pinned_example())
    scores = {a.name: a.score for a in r.areas}
    # protocol: 5 applicable checks (no surfaces declared), all passed -> 100
    assert scores["protocol"] == 100
    # catalog per tool: 9 read-only tools pass description + read-only-declared, miss output-schema -> 2/3;
    # read_params also misses params-described -> 3/5; each writer passes description + read-only-declared,
    # misses destructive-declared + output-schema -> 2/4.  mean = (9*66.67 + 60 + 2*50) / 12 = 63.33 -> 63
    assert scores["catalog"] == 63
    # context: 12 tools * 50 tokens = 600 <= 2000 and heaviest 50 <= 500 -> 100
    assert scores["context"] == 100
    # error-honesty: 10 judged, all answered -32602 and a ping -> 100
    assert scores["error-honesty"] == 100
    # reliability entries: 7 tools 100; read_0, read_1 at band 20 -> mean(100, 20) = 60; read_2 at band 50
    # -> 75; contention 100; payload 100.  (700 + 60 + 60 + 75 + 200) / 12 = 91.25 -> 91
    assert scores["reliability"] == 91
    # coverage: 10 of 10 non-writers had a success -> 100
    assert scores["coverage"] == 100
    # overall: (15*100 + 20*63 + 15*100 + 15*100 + 20*91 + 15*100) / 100 = 90.8 -> 91
    assert r.score == 91
    assert (r.surface.tools, r.surface.read_only, r.surface.writers, r.surface.exercised) == (12, 10, 2, 10)
    assert r.badge == "https://img.shields.io/badge/mcpeval-91%2F100-brightgreen"


def test_the_readiness_object_has_sorted_keys_and_only_lost_checks() -> None:
    doc = score_readiness(pinned_example()).to_json()
    assert list(doc) == ["areas", "assessment", "attested_read_only", "badge", "score", "standard", "surface"]
    assert doc["assessment"] == {"read_only_tools": 10, "scope": "read-only-structural",
                                 "semantic_correctness": "requires-reviewed-oracle", "tools_exercised": 10,
                                 "writer_tools_excluded": 2}
    assert [a["name"] for a in doc["areas"]] == ["protocol", "catalog", "context", "error-honesty",
                                                 "reliability", "coverage"]
    assert sum(a["weight"] for a in doc["areas"]) == 100
    reliability = doc["areas"][4]
    assert [(c["id"], c["tool"], c["score"], c["observed"]) for c in reliability["checks"]] == [
        ("reliability.latency", "read_0", 20, None), ("reliability.latency", "read_1", 20, None),
        ("reliability.latency", "read_2", 50, None)]
    assert list(reliability["checks"][0]) == ["hint", "id", "observed", "reason", "score", "tool"]
    assert reliability["measurements"] == {"rejected_calls": 0, "rpc_errors": 0, "successful_calls": 30,
                                           "tool_errors": 0, "transport_errors": 0, "untested_tools": 0}
    assert doc["areas"][2]["measurements"] == {"catalog_tokens": 600, "heaviest_tool_tokens": 50}
    assert all(c["score"] < 100 for a in doc["areas"] for c in a["checks"])


def test_rounding_is_half_away_from_zero() -> None:
    assert [round_half_away(x) for x in (0.5, 1.5, 2.5, 90.5, 90.49, -0.5, -2.5)] == [1, 2, 3, 91, 90, -1, -3]


def test_latency_bands_have_inclusive_upper_bounds() -> None:
    assert [latency_band(ms) for ms in (0, 100, 101, 300, 301, 1000, 1001, 3000, 3001)] == \
        [100, 100, 80, 80, 50, 50, 20, 20, 0]


def test_log_curve_is_full_below_and_zero_above_with_logarithmic_middle() -> None:
    assert log_curve(2000, 2000, 40000) == 100 and log_curve(40000, 2000, 40000) == 0
    mid = math.sqrt(2000 * 40000)
    assert log_curve(mid, 2000, 40000) == pytest.approx(50.0)


def test_badge_colors_follow_the_score_bands() -> None:
    assert badge_url(80).endswith("-80%2F100-brightgreen")
    assert badge_url(79).endswith("-79%2F100-yellow")
    assert badge_url(50).endswith("-yellow")
    assert badge_url(49).endswith("-49%2F100-red")


def test_tool_tokens_are_compact_bytes_over_four_rounded_up() -> None:
    entry = {"name": "é", "inputSchema": {"type": "object"}}  # 45 bytes compact (é is 2)
    assert tool_tokens(entry) == 12


def test_context_lists_heavy_catalog_and_heaviest_tool_with_curve_scores() -> None:
    tools = (ro("b_heavy", tokens=5000), ro("a_heavy", tokens=5000), ro("light", tokens=100))
    r = score_readiness(BatteryObservations(tools, protocol=PROTOCOL_OK))
    area = r.area("context")
    # catalog 10100 tokens: curve = 100*(ln 40000 - ln 10100)/(ln 40000 - ln 2000) = 45.95; heaviest 5000 -> 0
    assert area.score == round_half_away(0.75 * log_curve(10100, 2000, 40000))
    assert area.score == 34
    assert [(c.id, c.score, c.observed, c.tool) for c in area.checks] == [
        ("context.catalog", 46, 10100, None), ("context.heaviest-tool", 0, 5000, "a_heavy")]


def test_protocol_is_the_share_of_applicable_checks_and_zero_without_checks() -> None:
    failing = (("protocol.unknown-method", "protocol-unknown-method-answered"), ("protocol.ping", None),
               ("protocol.surfaces", "protocol-surface-invalid"))
    r = score_readiness(BatteryObservations((ro("t"),), protocol=failing))
    assert r.area("protocol").score == 33
    none = score_readiness(BatteryObservations((ro("t"),)))
    lost = [(c.id, c.reason) for c in none.area("protocol").checks]
    assert lost == [("protocol.ping", "protocol-call-failed")]
    assert none.area("protocol").score == 0


def test_an_empty_catalog_scores_zero_where_there_is_nothing_to_judge() -> None:
    r = score_readiness(BatteryObservations((), protocol=PROTOCOL_OK))
    reasons = {a.name: [(c.id, c.reason) for c in a.checks] for a in r.areas}
    assert reasons["catalog"] == [("catalog.empty", "catalog-no-tools")]
    assert reasons["error-honesty"] == [("error-honesty.untestable", "no-read-only-tools")]
    assert reasons["reliability"] == [("reliability.none-exercised", "no-read-only-tools")]
    assert reasons["coverage"] == [("coverage.exercised", "no-read-only-tools")]
    assert {a.name: a.score for a in r.areas} == {"protocol": 100, "catalog": 0, "context": 100,
                                                  "error-honesty": 0, "reliability": 0, "coverage": 0}
    assert r.score == 30


def test_honesty_reasons_cover_each_way_of_failing() -> None:
    cases = {"ok_code": HONEST, "ok_text": HonestyObservation("tool-error", -32000, message_ok=True),
             "accepted": HonestyObservation("success"), "empty": HonestyObservation("tool-error", -32000),
             "wrong": HonestyObservation("rpc-error", -32603),
             "broken": HonestyObservation("transport-error"),
             "no_ping": HonestyObservation("rpc-error", -32602, ping_replied=False)}
    tools = tuple(ro(n) for n in cases)
    runs = tuple(ToolRun(n, honesty=h, calls=calls(1, 1, 1)) for n, h in cases.items())
    area = score_readiness(BatteryObservations(tools, runs, PROTOCOL_OK)).area("error-honesty")
    assert area.score == round_half_away(200 / 7)
    assert [(c.tool, c.reason) for c in area.checks] == [
        ("accepted", "honesty-accepted-invalid"), ("empty", "honesty-empty-error"),
        ("wrong", "honesty-wrong-code"), ("broken", "honesty-call-failed"),
        ("no_ping", "honesty-call-failed")]


def test_honesty_without_judged_tools_is_untestable() -> None:
    r = score_readiness(BatteryObservations((ro("t"),), (ToolRun("t", calls=calls(1, 1, 1)),), PROTOCOL_OK))
    assert [(c.id, c.reason) for c in r.area("error-honesty").checks] == [
        ("error-honesty.untestable", "honesty-untestable")]


def test_reliability_multiplies_success_share_by_the_mean_of_its_parts() -> None:
    mixed = (CallObservation("success", None, 50, True), CallObservation("rpc-error", -32603, 50),
             CallObservation("success", None, 50, False))
    tools = (ro("t", has_output_schema=True),)
    r = score_readiness(BatteryObservations(tools, (ToolRun("t", honesty=HONEST, calls=mixed),), PROTOCOL_OK))
    # success 2/3; parts: consistency 0, latency 100, output conformance 0 -> 66.67% * 33.33 = 22.2 -> 22
    area = r.area("reliability")
    assert area.score == 22
    assert [(c.id, c.score, c.observed) for c in area.checks] == [
        ("reliability.success", 67, 2), ("reliability.consistent", 0, None),
        ("reliability.output-schema", 0, None)]
    assert area.measurements["rpc_errors"] == 1 and area.measurements["successful_calls"] == 2


def test_not_exercised_tools_carry_their_reason_into_reliability_and_coverage() -> None:
    tools = (ro("unsynth"), ro("rejected"), ro("failing"), ro("fine"), ro("unannotated", read_only_hint=None))
    runs = (ToolRun("unsynth", not_called="coverage-unsynthesizable"),
            ToolRun("rejected", calls=tuple(CallObservation("rpc-error", -32602, 5) for _ in range(3))),
            ToolRun("failing", calls=calls(5, 5, 5, outcome="tool-error")),
            ToolRun("fine", calls=calls(5, 5, 5)))
    r = score_readiness(BatteryObservations(tools, runs, PROTOCOL_OK))
    expected = [("unsynth", "coverage-unsynthesizable"), ("rejected", "coverage-rejected-arguments"),
                ("failing", "coverage-call-failed"), ("unannotated", "coverage-unannotated")]
    assert [(c.tool, c.reason) for c in r.area("coverage").checks] == expected
    assert [(c.tool, c.reason) for c in r.area("reliability").checks] == expected
    assert r.area("coverage").score == 20 and r.area("reliability").score == 20
    assert r.area("reliability").measurements["rejected_calls"] == 3
    assert r.area("reliability").measurements["untested_tools"] == 2
    assert r.surface.exercised == 1


def test_a_skipped_tool_zeroes_its_entries_and_the_shared_cases() -> None:
    base = pinned_example()
    runs = list(base.runs)
    runs[5] = ToolRun("read_5", skipped=True)
    skipped = score_readiness(BatteryObservations(base.tools, tuple(runs), PROTOCOL_OK, ("read_0", True),
                                                  ("read_0", True)))
    rel = skipped.area("reliability")
    assert [(c.id, c.reason) for c in rel.checks if c.reason == "coverage-skipped"] == [
        ("reliability.skipped", "coverage-skipped"), ("reliability.contention", "coverage-skipped"),
        ("reliability.payload", "coverage-skipped")]
    # (6*100 + 60 + 60 + 75 + 0 [skipped] + 0 + 0) / 12 = 66.25 -> 66
    assert rel.score == 66
    assert skipped.area("error-honesty").score == 90 and skipped.area("coverage").score == 90
    assert skipped.score < score_readiness(base).score


def test_skipping_never_raises_the_score() -> None:
    tools = (ro("dishonest"), ro("broken"))
    runs = (ToolRun("dishonest", honesty=HonestyObservation("success"), calls=calls(5, 5, 5)),
            ToolRun("broken", calls=calls(5, 5, 5, outcome="transport-error")))
    before = score_readiness(BatteryObservations(tools, runs, PROTOCOL_OK))
    for i in range(2):
        skipped = list(runs)
        skipped[i] = ToolRun(runs[i].name, skipped=True)
        after = score_readiness(BatteryObservations(tools, tuple(skipped), PROTOCOL_OK))
        assert after.score <= before.score
        assert all(a.score <= b.score for a, b in zip(after.areas, before.areas, strict=True))


def test_the_readiness_object_round_trips_through_its_parser() -> None:
    obs = pinned_example()
    profile = measurement_profile(attested_read_only=False, skip_tools=["b", "a", "a"])
    assert profile.skip_tools == ("a", "b")
    r = score_readiness(BatteryObservations(obs.tools, obs.runs, obs.protocol, obs.contention, obs.payload,
                                            False, profile))
    doc = r.to_json()
    assert parse_readiness(doc) == r
    assert dumps(parse_readiness(doc).to_json(), sort_keys=True) == dumps(doc, sort_keys=True)


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["areas"][0].update(name="vibes"), "readiness area 1: unknown area"),
    (lambda d: d["areas"][4]["checks"][0].update(id="reliability.mood"),
     "readiness area 5 check 1: unknown check id"),
    (lambda d: d["areas"][4]["checks"][0].update(reason="CANARY-reason"),
     "readiness area 5 check 1: unknown reason"),
    (lambda d: d["areas"][0].update(weight=16), "weight does not match"),
    (lambda d: d["areas"].pop(), "six areas"),
    (lambda d: d.update(attested_read_only=True), "inconsistent read-only attestation"),
    (lambda d: d["measurement_profile"].update(platform="CANARY platform"), "invalid measurement conditions"),
])
def test_parsing_rejects_unknown_labels_without_echoing_them(mutate: Any, message: str) -> None:
    profile = measurement_profile(attested_read_only=False)
    obs = pinned_example()
    doc = copy.deepcopy(score_readiness(BatteryObservations(
        obs.tools, obs.runs, obs.protocol, obs.contention, obs.payload, False, profile)).to_json())
    mutate(doc)
    with pytest.raises(DocumentError, match=message) as info:
        parse_readiness(doc)
    text = str(info.value)
    assert "CANARY" not in text and "vibes" not in text and "mood" not in text


def test_other_standards_parse_as_display_only_scores() -> None:
    legacy = parse_readiness({"score": 77, "standard": "mcpeval-standard/1", "areas": "whatever"})
    assert (legacy.score, legacy.standard, legacy.areas) == (77, "mcpeval-standard/1", ())


outcomes = st.sampled_from(["success", "tool-error", "rpc-error", "transport-error"])
call_obs = st.builds(CallObservation, outcomes, st.sampled_from([None, -32602, -32603]),
                     st.integers(0, 4000), st.sampled_from([None, True, False]))
honesty_obs = st.none() | st.builds(HonestyObservation, outcomes, st.sampled_from([None, -32602, -32000]),
                                    st.booleans(), st.booleans())


@st.composite
def observations(draw: st.DrawFn) -> BatteryObservations:
    count = draw(st.integers(1, 6))
    tools = tuple(ToolFacts(f"t{i}", description_chars=draw(st.integers(0, 80)),
                            read_only_hint=draw(st.sampled_from([True, None, False])),
                            has_output_schema=draw(st.booleans()), tokens=draw(st.integers(1, 3000)))
                  for i in range(count))
    runs = tuple(ToolRun(t.name, not_called=draw(st.sampled_from([None, "coverage-unsynthesizable"])),
                         honesty=draw(honesty_obs), calls=tuple(draw(st.lists(call_obs, max_size=3))))
                 for t in tools if not t.writer)
    case = st.none() | st.tuples(st.just("t0"), st.booleans())
    return BatteryObservations(tools, runs, PROTOCOL_OK, draw(case), draw(case))


@settings(max_examples=200, deadline=None)
@given(observations(), st.integers(0, 5))
def test_skipping_any_tool_never_raises_any_score(obs: BatteryObservations, pick: int) -> None:
    before = score_readiness(obs)
    assert 0 <= before.score <= 100
    if not obs.runs:
        return
    target = obs.runs[pick % len(obs.runs)].name
    runs = tuple(ToolRun(r.name, skipped=True) if r.name == target else r for r in obs.runs)
    after = score_readiness(BatteryObservations(obs.tools, runs, obs.protocol, obs.contention, obs.payload))
    assert after.score <= before.score
    assert all(a.score <= b.score for a, b in zip(after.areas, before.areas, strict=True))
    assert all(0 <= c.score <= 99 for a in after.areas for c in a.checks)
