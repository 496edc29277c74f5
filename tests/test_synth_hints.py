"""The battery's second attempt at valid arguments (readiness.hints): what a tool's schema, description and
error say, before a refusal of the rules' placeholder is charged to the server; "could not synthesise a
valid argument for X" where nothing helps; SPEC 8.4's charges kept for a server that fails on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpeval_nb.probe.readiness.hints import pattern_example, string_hints
from mcpeval_nb.probe.readiness.synth import synthesize

from .test_battery import lost, score


@pytest.mark.parametrize(("pattern", "example"), [
    ("^[A-Z]{3}$", "AAA"), (r"^\d{4}-\d{2}-\d{2}$", "0000-00-00"), ("^(foo|bar)-[a-z0-9_]+$", "foo-a"),
    (r"^\w+@\w+\.com$", "a@a.com"), ("x?y*z", "z"), ("[^a]", "b"),
])
def test_pattern_examples_match_their_pattern(pattern: str, example: str) -> None:
    assert pattern_example(pattern) == example


def test_an_unparsable_or_unsupported_pattern_has_no_example() -> None:
    assert pattern_example("(") is None and pattern_example(r"(a)\1") is None


def test_hints_come_from_the_description_then_formats_then_the_name() -> None:
    zone = {"type": "string", "description": "IANA name (e.g., 'America/New_York', 'Europe/London'). "
                                             "Use 'Etc/UTC' if none."}
    assert string_hints("timezone", zone) == ["America/New_York", "Europe/London", "Etc/UTC", "UTC"]
    assert string_hints("when", {"type": "string"}, "Invalid time format. Expected HH:MM") == ["12:00"]
    assert string_hints("url", {"type": "string", "pattern": "^https://"}) == ["https://example.com",
                                                                                 "https://"]
    assert string_hints("code", {"type": "string"}) == []


def test_a_hinted_synthesis_still_validates_against_the_whole_schema() -> None:
    schema = {"type": "object", "required": ["code"],
              "properties": {"code": {"type": "string", "maxLength": 2}}}
    assert synthesize(schema, hint=lambda name, sub: "toolong").arguments is None
    assert synthesize(schema).invented == 1 and synthesize(schema, hint=lambda n, s: "ok").invented == 0


def test_the_second_attempt_finds_valid_arguments_and_says_where_it_cannot(root: Path) -> None:
    said: list[str] = []
    r = score("picky_args", progress=said.append)
    reliability = lost(r, "reliability")
    coverage = lost(r, "coverage")
    # zone_now (quoted examples) and at_time (the format its own error names) were called successfully
    assert not any(tool in ("zone_now", "at_time") for _, tool, _ in reliability + coverage)
    # sealed refuses every value: not charged as a failed call, reported as unsynthesizable
    assert ("coverage.exercised", "sealed", "coverage-unsynthesizable") in [
        (c, t, why) for c, t, why in coverage]
    assert "battery: could not synthesise a valid argument for sealed" in said
    assert not any(t == "sealed" and why.endswith("call-failed") for _, t, why in reliability + coverage)
    # broken fails with -32603 on a valid day (nothing invented): charged as SPEC 8.4 says
    assert any(t == "broken" and why.endswith("call-failed") for _, t, why in reliability + coverage)
