"""Manifest validation: structure, SPEC 8.1 rules in SPEC order with SPEC messages, never a value."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import jsonschema
import pytest

import mcpeval_nb
from mcpeval_nb import ManifestError, UsageError, parse_manifest, select_cases
from mcpeval_nb.jsonfmt import dumps

BASE: dict[str, Any] = {
    "version": 1,
    "timeout_ms": 5000,
    "sandboxes": {"scratch": {"description": "A throwaway workspace."}},
    "probes": [
        {"id": "repeat", "probe": "degradation-over-n", "access": "read_only", "tool": "read_counter",
         "arguments": {"secret": "CANARY-argument"}, "max_attempts": 5},
        {"id": "literal", "probe": "instruction-fidelity", "access": "read_only", "tool": "describe_status",
         "arguments": {}, "expect": {"outcome": "ok", "equals": {"status": "ready"},
                                     "required_result_paths": ["/structuredContent/a~1b"]}},
        {"id": "writes", "probe": "state-recovery", "access": "mutating", "sandbox": "scratch",
         "failure_tool": "break_session", "failure_arguments": {}, "recovery_tool": "recover_session",
         "recovery_arguments": {}, "validation_tool": "session_status", "validation_arguments": {}},
        {"id": "flow", "probe": "workflow", "access": "read_only", "repetitions": 2, "steps": [
            {"tool": "read_status", "arguments": {}, "expect": {"outcome": "ok"}},
            {"tool": "invalid_read", "arguments": {}, "expect": {"outcome": "error", "error_code": -32602}}]},
    ],
}


def mutated(path: list[Any], value: Any = ..., *, delete: bool = False) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    node = doc
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


def error_of(doc: Any) -> str:
    with pytest.raises(ManifestError) as info:
        parse_manifest(doc if isinstance(doc, bytes | str) else json.dumps(doc).encode(), source="m.json")
    return str(info.value)


def test_valid_manifest_keeps_cases_in_order_and_hashes_the_exact_bytes() -> None:
    raw = json.dumps(BASE, indent=3).encode()
    manifest = parse_manifest(raw)
    assert [c.id for c in manifest.cases] == ["repeat", "literal", "writes", "flow"]
    assert manifest.sha256 == hashlib.sha256(raw).hexdigest()
    assert manifest.timeout_ms == 5000 and manifest.sandboxes == frozenset({"scratch"})
    assert manifest.cases[3].primary_tool == "read_status"
    assert manifest.cases[2].primary_tool == "break_session"


def test_inline_manifest_is_hashed_as_sorted_compact_json() -> None:
    manifest = parse_manifest(BASE)
    assert manifest.sha256 == hashlib.sha256(dumps(BASE, sort_keys=True).encode()).hexdigest()


@pytest.mark.parametrize(("doc", "message", "where"), [
    (mutated(["version"], 2), "manifest version must be 1", "(at /version)"),
    (mutated(["timeout_ms"], 99), "timeout_ms must be between 100 and 600000", "(at /timeout_ms)"),
    (mutated(["sandboxes", "scratch", "description"], "x" * 241), "sandbox description must be at most 240",
     "(at /sandboxes/*/description)"),
    (mutated(["probes"], []), "manifest must declare at least one probe", "(at /probes)"),
    (mutated(["probes", 1, "id"], "repeat"), "probe case repeat: probe case ids must be unique",
     "(at /probes/1/id)"),
    (mutated(["probes", 0, "tool"], "bad/tool"), "probe case repeat: probe tool is invalid",
     "(at /probes/0/tool)"),
    (mutated(["probes", 0, "arguments"], ["CANARY"]), "probe case repeat: probe arguments must be an object",
     "(at /probes/0/arguments)"),
    (mutated(["probes", 0, "sandbox"], "scratch"),
     "probe case repeat: read-only probe must not name a sandbox",
     "(at /probes/0/sandbox)"),
    (mutated(["probes", 2, "sandbox"], delete=True), "probe case writes: mutating probe must name a sandbox",
     "(at /probes/2/access)"),
    (mutated(["probes", 2, "sandbox"], "elsewhere"),
     "probe case writes: mutating probe sandbox is not declared",
     "(at /probes/2/sandbox)"),
    (mutated(["probes", 0, "max_attempts"], 101), "probe case repeat: max_attempts must be between 2 and 100",
     "(at /probes/0/max_attempts)"),
    (mutated(["probes", 1, "expect", "error_code"], 5),
     "probe case literal: ok expectation must not declare error_code", "(at /probes/1/expect/error_code)"),
    (mutated(["probes", 3, "steps", 1, "expect", "required_result_fields"], ["status"]),
     "probe case flow: error expectation must not declare result fields", "(at /probes/3/steps/1/expect)"),
    (mutated(["probes", 1, "expect", "required_result_paths"], ["/a", "/a"]),
     "probe case literal: expected result paths must be unique",
     "(at /probes/1/expect/required_result_paths)"),
    (mutated(["probes", 1, "expect", "required_result_paths"], ["no-slash"]),
     "probe case literal: expected result path is invalid", "(at /probes/1/expect/required_result_paths)"),
    (mutated(["probes", 1, "expect", "equals"], {"status": "CANARY value"}),
     "probe case literal: expected equality value is invalid", "(at /probes/1/expect/equals)"),
    (mutated(["probes", 3, "access"], "mutating"), "probe case flow: mutating probe must name a sandbox",
     "(at /probes/3/access)"),
    (mutated(["probes", 3, "repetitions"], 21), "probe case flow: repetitions must be between 1 and 20",
     "(at /probes/3/repetitions)"),
])
def test_each_rule_reports_its_spec_message_case_and_path(doc: dict[str, Any], message: str,
                                                          where: str) -> None:
    text = error_of(doc)
    assert text.startswith("m.json: ")
    assert message in text and text.endswith(where)
    assert "CANARY" not in text


def test_rules_run_in_spec_order_version_before_everything_else() -> None:
    doc = mutated(["version"], 3)
    doc["timeout_ms"] = 1
    doc["probes"][0]["max_attempts"] = 0
    assert "manifest version must be 1" in error_of(doc)


def test_case_rules_run_id_then_tools_then_arguments_then_access_then_kind() -> None:
    doc = copy.deepcopy(BASE)
    doc["probes"][0].update(tool="bad/tool", arguments="CANARY", max_attempts=0)
    assert "probe tool is invalid" in error_of(doc)
    doc["probes"][0]["tool"] = "read_counter"
    assert "probe arguments must be an object" in error_of(doc)
    doc["probes"][0]["arguments"] = {}
    assert "max_attempts must be between" in error_of(doc)


def test_invalid_case_id_is_reported_by_position_without_naming_it() -> None:
    text = error_of(mutated(["probes", 1, "id"], "CANARY id with spaces"))
    assert "probe case #2: probe case id is invalid (at /probes/1/id)" in text
    assert "CANARY" not in text


def test_unknown_fields_and_wrong_types_are_refused_without_quoting_them() -> None:
    doc = mutated(["probes", 0, "CANARY_field"], "CANARY value")
    text = error_of(doc)
    assert "probe case repeat: unknown field" in text and "CANARY" not in text
    assert "missing field `max_attempts`" in error_of(mutated(["probes", 0, "max_attempts"], delete=True))
    wrong = error_of(mutated(["probes", 0, "max_attempts"], "CANARY"))
    assert "`max_attempts` has the wrong JSON type" in wrong
    assert "unknown probe kind" in error_of(mutated(["probes", 0, "probe"], "CANARY"))
    assert "unknown field" in error_of(mutated(["CANARY"], 1))


def test_text_that_is_not_json_is_refused_without_quoting_it() -> None:
    text = error_of(b'{"version": 1, "probes": [CANARY')
    assert "m.json: manifest is not valid JSON" in text and "CANARY" not in text


def test_read_only_only_kinds_refuse_mutating_access_even_with_a_sandbox() -> None:
    doc = copy.deepcopy(BASE)
    doc["probes"].append({"id": "pages", "probe": "pagination", "access": "mutating", "max_pages": 3})
    assert "unknown field" not in error_of(doc)
    assert "mutating probe must name a sandbox" in error_of(doc)


def _schema_accepts(doc: Any) -> bool:
    return jsonschema.Draft202012Validator(mcpeval_nb.manifest_schema()).is_valid(doc)


@pytest.mark.parametrize("doc", [
    BASE,
    mutated(["version"], 2),
    mutated(["timeout_ms"], 600001),
    mutated(["probes", 0, "max_attempts"], 1),
    mutated(["probes", 0, "tool"], "x" * 129),
    mutated(["probes", 0, "id"], "9starts-with-digit"),
    mutated(["probes", 1, "expect", "equals"], {"status": "two words"}),
    mutated(["probes", 3, "steps"], [BASE["probes"][3]["steps"][0]]),
    mutated(["sandboxes", "bad name"], {"description": "x"}),
    mutated(["probes", 2, "extra"], 1),
])
def test_published_schema_and_semantic_rules_agree(doc: dict[str, Any]) -> None:
    try:
        parse_manifest(doc)
        accepted = True
    except ManifestError:
        accepted = False
    assert accepted == _schema_accepts(doc)


def test_mutating_case_needs_the_operator_flag_and_a_declared_sandbox() -> None:
    manifest = parse_manifest(BASE)
    with pytest.raises(UsageError, match="mutating probes require --allow-mutation"):
        select_cases(manifest)
    selected = select_cases(manifest, allow_mutation=True)
    assert [c.id for c in selected] == ["repeat", "literal", "writes", "flow"]
    assert [c.id for c in select_cases(manifest, probe="workflow")] == ["flow"]
    assert [c.id for c in select_cases(manifest, case_id="literal")] == ["literal"]


def test_selection_errors_are_usage_errors() -> None:
    manifest = parse_manifest(BASE)
    with pytest.raises(UsageError, match="no probe cases selected"):
        select_cases(manifest, probe="pagination")
    with pytest.raises(UsageError, match="not both"):
        select_cases(manifest, probe="workflow", case_id="flow")


def test_missing_manifest_file_is_a_usage_error_naming_the_path(tmp_path: Any) -> None:
    with pytest.raises(ManifestError, match="cannot read manifest") as info:
        mcpeval_nb.load_manifest(tmp_path / "absent.json")
    assert info.value.exit_code == 2
