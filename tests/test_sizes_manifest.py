"""Call and capture manifests: mcp-xray's shapes read strictly; every refusal names places, never values."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcpeval_nb
from mcpeval_nb import ManifestError, load_call_manifest, load_capture_manifest, parse_call_manifest
from mcpeval_nb import parse_capture_manifest as parse_capture
from tests import waiting

DATA = Path(__file__).resolve().parents[1] / "data" / "xray"
MARK = "CANARYm4"


def test_mcp_xray_call_manifest_example_parses_unchanged() -> None:
    loaded = load_call_manifest(DATA / "safe.yaml")
    assert [(c.index, c.tool, c.access, c.sandbox) for c in loaded.calls] == [
        (1, "list_labels", "read_only", None),
        (2, "get_table_details", "read_only", None),
    ]
    assert dict(loaded.calls[1].args) == {"table_name": "orders"}
    assert len(loaded.sha256) == 64


def test_mcp_xray_capture_manifest_example_parses_unchanged() -> None:
    loaded = load_capture_manifest(DATA / "capture.yaml")
    assert [p.name for p in loaded.phases] == ["design", "run"]
    assert loaded.phases[0].advance == ()
    assert [c.tool for c in loaded.phases[1].advance] == ["load_model"]


def test_yaml_and_json_forms_give_the_same_calls(tmp_path: Path) -> None:
    doc = {
        "calls": [
            {"tool": "a", "args": {"n": 1}},
            {"tool": "b", "args": {}, "access": "mutating", "sandbox": "scratch"},
        ]
    }
    (tmp_path / "c.json").write_text(json.dumps(doc))
    from_json = load_call_manifest(tmp_path / "c.json")
    from_yaml = load_call_manifest(DATA / "safe.yaml")
    assert [c.tool for c in from_json.calls] == ["a", "b"]
    assert from_json.calls[1].access == "mutating" and from_json.calls[1].sandbox == "scratch"
    assert from_yaml.calls[0].tool == "list_labels"
    assert parse_call_manifest(doc).calls == from_json.calls


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ({"calls": [{"tool": "a", "args": {}, "timeout": 5}]}, "calls entry #1: unknown field"),
        ({"calls": [{"tool": "a"}]}, "calls entry #1: missing field `args` (at /calls/0)"),
        ({"calls": [{"tool": "a", "args": {}}], "infer": True}, "unknown field"),
        ({"calls": []}, "field `calls` must list at least one entry"),
        ({"calls": [{"tool": "a b", "args": {}}]}, "calls entry #1: field `tool` is outside its grammar"),
        ({"calls": [{"tool": "a", "args": []}]}, "calls entry #1: field `args` has the wrong JSON type"),
        (
            {"calls": [{"tool": "a", "args": {}, "access": "write"}]},
            "field `access` must be read_only or mutating",
        ),
        ({"calls": [{"tool": "a", "args": {}, "access": "mutating"}]}, "a mutating call must name a sandbox"),
        ({"calls": [{"tool": "a", "args": {}, "sandbox": "s"}]}, "a read-only call must not name a sandbox"),
        ({"tools": []}, "unknown field"),
    ],
)
def test_call_manifest_refusals_name_the_entry_and_field(doc: dict[str, Any], expected: str) -> None:
    with pytest.raises(ManifestError, match=r"^m\.yaml: ") as info:
        parse_call_manifest(json.dumps(doc), source="m.yaml")
    assert expected in str(info.value)


def test_an_extra_key_is_refused_without_naming_it() -> None:
    with pytest.raises(ManifestError) as info:
        parse_call_manifest({"calls": [{"tool": "a", "args": {}, MARK: 1}]}, source="m.yaml")
    assert MARK not in str(info.value) and "(at /calls/0)" in str(info.value)


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (
            {"phases": [{"name": "a", "advance": [{"tool": "t", "args": {}}]}]},
            "the first phase is captured before",
        ),
        (
            {"phases": [{"name": "a"}, {"name": "a"}]},
            "phase #2: phase names must be unique (at /phases/1/name)",
        ),
        (
            {"phases": [{"name": "a"}, {"name": "b", "advance": [{"tool": "t"}]}]},
            "phase #2 advance call #1: missing field `args`",
        ),
        ({"phases": [{"name": "a", "when": "x"}]}, "phase #1: unknown field"),
        ({"phases": [{"name": "1a"}]}, "field `name` is outside its grammar"),
    ],
)
def test_capture_manifest_refusals(doc: dict[str, Any], expected: str) -> None:
    with pytest.raises(ManifestError) as info:
        parse_capture(doc, source="cap.yaml")
    assert expected in str(info.value)


def test_a_manifest_over_one_mebibyte_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text('calls:\n  - tool: a\n    args: {pad: "' + "x" * (1024 * 1024) + '"}\n')
    with pytest.raises(ManifestError, match="exceeds 1 MiB; refused before any call"):
        load_call_manifest(path)
    with pytest.raises(ManifestError, match="exceeds 1 MiB"):
        parse_call_manifest(path.read_bytes())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("base: &b {n: 1}\ncalls:\n  - tool: a\n    args: *b\n", "YAML aliases are refused (line 4)"),
        ("calls:\n  - tool: a\n    args: {when: 2026-01-01}\n", "value is not JSON data"),
        ("calls:\n  - tool: a\n    args: {1: x}\n", "value is not JSON data"),
        ("calls:\n  - tool: a\n    args: {n: .inf}\n", "value is not JSON data"),
        ("calls: [\n  - tool: a\n", "is not valid YAML or JSON (line"),
        ("- just\n- a list\n", "manifest must be a mapping"),
    ],
)
def test_yaml_that_json_cannot_say_is_refused(text: str, expected: str) -> None:
    with pytest.raises(ManifestError) as info:
        parse_call_manifest(text, source="m.yaml")
    assert expected in str(info.value)


def test_a_json_file_must_be_json(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text("calls:\n  - tool: a\n    args: {}\n")
    with pytest.raises(ManifestError, match="is not valid JSON"):
        load_call_manifest(path)


def test_the_published_schemas_accept_the_examples_and_refuse_extra_keys() -> None:
    import yaml

    calls = json.loads(mcpeval_nb.sizes_schema_text("calls"))
    capture = json.loads(mcpeval_nb.sizes_schema_text("capture"))
    jsonschema.Draft202012Validator.check_schema(calls)
    jsonschema.Draft202012Validator.check_schema(capture)
    jsonschema.validate(yaml.safe_load((DATA / "safe.yaml").read_text()), calls)
    jsonschema.validate(yaml.safe_load((DATA / "capture.yaml").read_text()), capture)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"calls": [{"tool": "a", "args": {}, "extra": 1}]}, calls)


canary_text = st.builds(lambda a, b: f"{a}{MARK}{b}", st.text(max_size=4), st.text(max_size=4))
values = st.recursive(
    st.none() | st.booleans() | st.integers() | canary_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(canary_text, inner, max_size=3),
    max_leaves=5,
)
BASE = {
    "calls": [
        {"tool": "a", "args": {"q": 1}},
        {"tool": "b", "args": {}, "access": "mutating", "sandbox": "s"},
    ]
}
PATHS = [
    ["calls", 0, "tool"],
    ["calls", 0, "args"],
    ["calls", 0, MARK],
    ["calls", 1, "sandbox"],
    ["calls", 1, "access"],
    ["calls", 0, "args", MARK],
    [MARK],
    ["calls"],
]


@settings(max_examples=120, deadline=None)
@given(path=st.sampled_from(PATHS), value=values)
def test_call_manifest_refusals_never_quote_manifest_content(path: list[Any], value: Any) -> None:
    doc = copy.deepcopy(BASE)
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    try:
        parse_call_manifest(json.dumps(doc), source="m.yaml")
    except ManifestError as exc:
        assert MARK not in str(exc)


@pytest.mark.parametrize(("text", "message"), [
    ("calls:\n  - tool: x\n    arguments: {a: " + "[" * 5000 + "]" * 5000 + "}\n",
     "manifest is nested too deeply (at most 128 levels)"),
    ("calls:\n  - tool: x\n    arguments: {n: " + "9" * 5000 + "}\n",
     "manifest holds a number too long to read"),
])
@pytest.mark.parametrize("command", ["sizes", "capture-phases"])
def test_deep_yaml_and_huge_numbers_are_usage_errors_naming_the_file(
        tmp_path: Path, text: str, message: str, command: str) -> None:
    """They were "unexpected RecursionError/ValueError", exit 3, without the file's name (issue 29)."""
    import sys

    path = tmp_path / "calls.yaml"
    path.write_text(text, encoding="utf-8")
    flag = "--call-manifest" if command == "sizes" else "--capture"
    extra = [] if command == "sizes" else ["--out-dir", str(tmp_path / "out")]
    done = waiting.run([sys.executable, "-m", "mcpeval_nb", command, flag, str(path), "--server", "x",
                           *extra, "--root", str(tmp_path / "root"), "--", "true"],
                       capture_output=True, text=True, stall_s=300)
    assert (done.returncode, done.stderr) == (2, f"mcpeval-nb: {path}: {message}\n")
