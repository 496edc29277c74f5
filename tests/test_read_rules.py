"""The read rules of the privacy boundary: one chain per record type, shared by records and the loader."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pyarrow as pa
import pytest

from mcpeval_nb import AnnotationRecord, CallRecord, TrendPoint
from mcpeval_nb.privacy.read_rules import (
    ANNOTATION_RULES,
    CALL_RULES,
    TREND_RULES,
    ReadRule,
    keep,
    rule_for,
    transform,
)
from mcpeval_nb.tables import sanitise

PACKAGE = Path(__file__).resolve().parent.parent / "mcpeval_nb"
BAD = "not a valid value!"


def test_the_chains_follow_the_spec_order_then_the_extension_object() -> None:
    assert [r.field for r in CALL_RULES] == ["ts", "session", "server", "method", "tool", "args", "outcome",
                                             "kind", "error", "ext"]
    assert [r.field for r in ANNOTATION_RULES] == ["ts", "session", "kind", "note", "event_id"]
    assert [r.field for r in TREND_RULES] == ["measurement_profile", "ts", "server", "manifest_sha256",
                                              "standard"]


@pytest.mark.parametrize("rule", [r for r in CALL_RULES if r.field in ("ts", "server", "method", "tool",
                                                                        "outcome", "kind")],
                         ids=lambda r: r.field)
def test_an_invalid_call_field_becomes_its_rules_fallback_per_record(rule: ReadRule) -> None:
    record = CallRecord(ts="2026-08-04T12:00:00.250Z", session="s", seq=1, server="demo", method="tools/call",
                        tool="t", outcome="ok", kind="real")
    clean = dataclasses.replace(record, **{rule.field: BAD}).sanitized()
    assert getattr(clean, rule.field) == rule.fallback
    assert getattr(record.sanitized(), rule.field) == getattr(record, rule.field)


def test_the_loader_maps_distinct_values_through_the_same_rule_objects() -> None:
    for name, rule in sanitise._RULES.items():
        assert rule is rule_for(CALL_RULES, name)
    column = pa.array(["demo", BAD, "demo", BAD])
    n = len(column)
    numbers = pa.array([1] * n, type=pa.uint64())
    out = sanitise.sanitise_columns(ts=numbers, seq=numbers, latency_ms=numbers, shim_self_us=numbers,
                                    session=column, server=column, method=column, tool=column,
                                    outcome=pa.array(["ok", BAD, "ok", BAD]),
                                    kind=pa.array(["real", BAD] * 2),
                                    capture_id=column, event_id=column)
    for name in sanitise._RULES:
        want = [rule_for(CALL_RULES, name)(v) for v in out[name].dictionary_encode().to_pylist()]
        assert out[name].to_pylist() == want
    assert out["server"].to_pylist() == ["demo", "invalid", "demo", "invalid"]
    assert out["tool"].to_pylist() == ["demo", None, "demo", None]


def test_annotation_and_trend_rules_apply_per_record() -> None:
    note = AnnotationRecord(ts=BAD, session="s", kind=BAD, note="a\x01b" + "n" * 300,
                            event_id="NOPE").sanitized()
    assert (note.ts, note.kind, note.note, note.event_id) == ("unknown", "invalid", "ab" + "n" * 238, None)
    point = TrendPoint(ts=BAD, server=BAD, passed=True, cases_total=1, cases_passed=1, score=1,
                       manifest_sha256="ABC", standard=BAD).sanitized()
    assert (point.ts, point.server, point.manifest_sha256) == ("unknown", "invalid", None)
    assert point.standard is None


def test_optional_rules_keep_absent_values_absent() -> None:
    seen: list[object] = []
    rule = transform("x", lambda v: seen.append(v) or v, optional=True)
    assert rule(None) is None and seen == []
    assert keep("x", bool, "fallback")(None) == "fallback"


def _fallbacks() -> set[str]:
    return {r.fallback for chain in (CALL_RULES, ANNOTATION_RULES, TREND_RULES) for r in chain
            if isinstance(r.fallback, str)}


def test_no_fallback_value_is_written_outside_the_read_rules() -> None:
    fallbacks = _fallbacks()
    assert fallbacks == {"unknown", "invalid", "unparsed/metadata", "unparsed"}
    files = [*sorted((PACKAGE / "tables").glob("*.py")), PACKAGE / "privacy" / "records.py"]
    found = [f"{path.name}:{node.lineno} {node.value!r}" for path in files
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Constant) and node.value in fallbacks]
    assert found == []
