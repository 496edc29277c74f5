"""SPEC 12.2-12.4 and 8.5 worked values: Wilson bounds, recency, the seed threshold, finding ids, every
lifecycle transition, attempts_to_observe, the generate skeleton rebuild and the class precedence."""

from __future__ import annotations

import math

import pytest

import mcpeval_nb as me
from mcpeval_nb.triage.generate import UUID_PLACEHOLDER, generate_case, rebuild_arguments
from mcpeval_nb.triage.lifecycle import transition
from mcpeval_nb.triage.scoring import attempts_to_observe, factors, finding_id, seed_threshold, severity

Z = 1.959963984540054


def _wilson(f: int, n: int) -> float:
    p = f / n
    return (p + Z * Z / (2 * n) - Z * math.sqrt((p * (1 - p) + Z * Z / (4 * n)) / n)) / (1 + Z * Z / n)


@pytest.mark.parametrize(("f", "n"), [(4, 5), (1, 20), (2, 12), (3, 4), (0, 7), (7, 7), (47, 1000)])
def test_confidence_is_the_wilson_lower_bound_evaluated_in_spec_order(f: int, n: int) -> None:
    got = factors(failures=f, calls=n, last_seen_ms=0, now_ms=0, cost_calls=1, blast_tools=1).confidence
    assert got == max(0.0, _wilson(f, n))


def test_wilson_refuses_no_calls_or_more_failures_than_calls() -> None:
    for f, n in ((1, 0), (3, 2)):
        with pytest.raises(me.UsageError):
            factors(failures=f, calls=n, last_seen_ms=0, now_ms=0, cost_calls=1, blast_tools=1)


def test_recency_halves_every_14_days_and_is_one_for_a_future_last_seen() -> None:
    day = 86_400_000

    def recency(age_ms: int) -> float:
        return factors(
            failures=1, calls=2, last_seen_ms=0, now_ms=age_ms, cost_calls=1, blast_tools=1
        ).recency

    assert recency(0) == 1.0
    assert recency(14 * day) == 0.5
    assert recency(28 * day) == 0.25
    assert recency(-5 * day) == 1.0  # last_seen after now


def test_cost_and_blast_factors() -> None:
    f = factors(failures=1, calls=2, last_seen_ms=0, now_ms=0, cost_calls=3, blast_tools=4)
    assert f.cost == 2.0 and f.blast == 3.0
    assert factors(failures=1, calls=2, last_seen_ms=0, now_ms=0, cost_calls=1, blast_tools=0).blast == 1.0


def test_seed_threshold_is_the_spec_value() -> None:
    assert seed_threshold() == pytest.approx(0.324250563780762, abs=1e-15)


def test_finding_id_spec_example() -> None:
    assert finding_id("fixture", "describe_status", None, "aaaaaaaaaaaaaaaa") == "finding-b082100ba107f8ab"
    assert finding_id("fixture", "describe_status", "", "aaaaaaaaaaaaaaaa") == "finding-b082100ba107f8ab"


@pytest.mark.parametrize(
    ("state", "same", "count", "passed", "expected"),
    [
        ("open", False, 0, False, ("fix-claimed", 0)),
        ("open", True, 0, False, ("fix-claimed", 0)),
        ("fix-claimed", True, 0, False, ("fix-claimed", 0)),
        ("fix-claimed", False, 0, False, ("fix-claimed", 0)),
        ("verifying", True, 2, False, ("open", 0)),
        ("closed", True, 3, False, ("open", 0)),
        ("verifying", False, 2, False, ("fix-claimed", 0)),
        ("closed", False, 3, False, ("fix-claimed", 0)),
        ("open", False, 0, True, ("verifying", 1)),
        ("fix-claimed", True, 0, True, ("verifying", 1)),
        ("verifying", True, 1, True, ("verifying", 2)),
        ("verifying", True, 2, True, ("closed", 3)),
        ("closed", True, 3, True, ("closed", 4)),
        ("verifying", False, 2, True, ("verifying", 1)),
    ],
)
def test_every_lifecycle_transition(
    state: str, same: bool, count: int, passed: bool, expected: tuple[str, int]
) -> None:
    assert transition(state, same_probe=same, consecutive=count, passed=passed) == expected


@pytest.mark.parametrize(
    ("rate", "attempts"), [(0.0, 3), (-1.0, 3), (0.5, 5), (0.1, 29), (0.99, 3), (0.001, 100), (0.25, 11)]
)
def test_attempts_to_observe(rate: float, attempts: int) -> None:
    assert attempts_to_observe(rate) == attempts


def test_generate_rebuilds_arguments_from_the_recorded_shape() -> None:
    shape = {
        "a": "null",
        "b": "enum:fast",
        "c": "bool:true",
        "d": "num:5",
        "e": "num:-1.5",
        "f": "uuid",
        "g": "str<32",
        "h": "url:example.com",
        "i": {"array": 2, "items": "str<8"},
        "j": {"array": 0, "items": "null"},
        "k": {"x": "str>4096"},
    }
    args, holes = rebuild_arguments(shape)
    assert args == {
        "a": None,
        "b": "fast",
        "c": True,
        "d": 5,
        "e": -1.5,
        "f": UUID_PLACEHOLDER,
        "g": "",
        "h": "",
        "i": [],
        "j": [],
        "k": {"x": ""},
    }
    assert [(h.path, h.shape) for h in holes] == [
        ("f", "uuid"),
        ("g", "str<32"),
        ("h", "url:example.com"),
        ("i", '{"array":2,"items":"str<8"}'),
        ("k.x", "str>4096"),
    ]
    for bad in ("str<8", ["x"], {"a": 3}, {"a": "words"}):
        with pytest.raises(me.UsageError, match="not a recorded argument shape"):
            rebuild_arguments(bad)


def test_generate_probe_choice_by_class() -> None:
    def kind(klass: str, retryable: int | None = 1, expect: bytes | None = None) -> tuple[str, int | None]:
        g = generate_case(
            "finding-0", tool="t", args={}, rate=0.5, klass=klass, retryable=retryable, expect=expect
        )
        return g.kind, g.max_attempts

    assert kind("recurring-error") == ("degradation-over-n", 5)
    assert kind("recovers-on-retry") == ("degradation-over-n", 5)
    assert kind("retry-did-not-recover") == ("degradation-over-n", 5)
    assert kind("unstable-error-code") == ("error-honesty", 5)
    assert kind("false-success", expect=b'{"outcome":"error"}') == ("instruction-fidelity", None)
    for klass in ("false-success", "blocked-optimal-path"):
        with pytest.raises(me.UsageError, match="needs --expect"):
            kind(klass)
    with pytest.raises(me.UsageError, match="retryability"):
        kind("unstable-error-code", retryable=None)
    with pytest.raises(me.UsageError, match="64 KiB"):
        kind("recurring-error", expect=b" " * (64 * 1024 + 1))


def test_generate_stdout_lines() -> None:
    g = generate_case(
        "finding-1", tool="t", args={"q": "str<8"}, rate=0.0, klass="recurring-error", retryable=None
    )
    assert g.stdout_lines("out.json") == [
        "finding-1",
        "probe=degradation-over-n max_attempts=3",
        "fill: q (str<8)",
        "fill the placeholders in out.json before mcpeval-nb verify",
    ]
    assert g.manifest_text().endswith("}\n") and '"access": "read_only"' in g.manifest_text()


def test_severity_ranks_and_caps() -> None:
    assert severity(4.0, 1.0, annotated=False, probed=True) == "high"
    assert severity(2.0, 1.0, annotated=False, probed=True) == "medium"
    assert severity(1.0, 1.0, annotated=True, probed=True) == "medium"
    assert severity(1.0, 1.0, annotated=False, probed=True) == "low"
    assert severity(9.0, 1.0, annotated=True, probed=False) == "medium"  # capped until a probe is bound


def test_class_precedence() -> None:
    from mcpeval_nb.triage.groups import Group
    from mcpeval_nb.triage.promote import finding_class

    g = Group("s", "t", "x", ids=[1, 2], retryable={1})
    assert finding_class(g, ["-1", "-2"], {1: {"false-success"}}, True) == "unstable-error-code"
    annotated = {1: {"blocked-optimal-path"}, 2: {"false-success"}}
    assert finding_class(g, ["-1"], annotated, True) == "false-success"
    assert finding_class(g, ["-1"], {2: {"blocked-optimal-path"}}, True) == "blocked-optimal-path"
    assert finding_class(g, ["-1"], {}, True) == "recovers-on-retry"
    assert finding_class(g, ["-1"], {}, False) == "retry-did-not-recover"
    mixed = Group("s", "t", "x", ids=[1], retryable={1, 0})
    assert finding_class(mixed, ["-1"], {}, True) == "recurring-error"
    assert finding_class(Group("s", "t", "x", ids=[1], retryable={None}), [], {}, True) == "recurring-error"
