"""``schemacheck`` agrees with ``jsonschema`` on the package's own schemas, error for error.

The package checks manifests and budgets files with its own small draft 2020-12 checker (so no command
pays jsonschema's import before its first useful work); these tests generate mutated documents and
compare every violation (keyword and instance path) with jsonschema's.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpeval_nb
from mcpeval_nb.schemacheck import SchemaChecker

DATA = Path(__file__).resolve().parents[1] / "data" / "manifests"
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

MANIFESTS: list[dict[str, Any]] = [json.loads(p.read_text()) for p in sorted(DATA.glob("*.json"))]
MANIFESTS.append({"version": 1, "timeout_ms": 5000, "sandboxes": {"scratch": {"description": "x"}},
                  "probes": [
                      {"id": "flow", "probe": "workflow", "access": "read_only", "repetitions": 2, "steps": [
                          {"tool": "a", "arguments": {}, "expect": {"outcome": "ok", "equals": {"k": 1},
                                                                    "required_result_paths": ["/a~1b"]}},
                          {"tool": "b", "arguments": {}, "expect": {"outcome": "error", "error_code": -1}}]},
                      {"id": "pay", "probe": "payload-bounds", "access": "read_only", "tool": "t",
                       "arguments": {"q": "x"}, "field": "q", "size_bytes": 10,
                       "expect_handled": False},
                      {"id": "comp", "probe": "completion", "access": "read_only", "ref_uri": "u",
                       "ref_type": "ref/prompt", "argument_name": "a", "argument_value": "v",
                       "max_values": 3},
                  ]})
BUDGETS: list[dict[str, Any]] = [
    {"version": 1, "budgets": [{"server": "docs", "tool": "search", "p95_ms": 500, "p99_ms": 2000,
                                "max_error_rate": 0.05, "min_calls": 20}], "no_new_templates": False},
    {"version": 1, "budgets": [{"server": "*", "tool": "*"}, {"server": "a", "p95_ms": 1.5}]},
]

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 700000),
                     st.sampled_from([0.5, 1.0, -1.0, 1e20]),
                     st.sampled_from(["", "a", "read_only", "mutating", "ok", "error", "x y", "*", "Z" * 70,
                                      "2000-01-01", "ref/prompt", "/a"]))
_keys = st.sampled_from(["a", "id", "tool", "x"])
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                          st.dictionaries(_keys, inner, max_size=3)),
                       max_leaves=6)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            found += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            found += _paths(v, (*prefix, i))
    return found


@st.composite
def _mutated(draw: st.DrawFn, bases: list[dict[str, Any]]) -> Any:
    doc = copy.deepcopy(draw(st.sampled_from(bases)))
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if not path:
            continue
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if action == "delete":
            del parent[path[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["unknown", "sandbox", "expect", "max_pages"]))] = draw(_values)
        else:
            parent[path[-1]] = draw(_values)
    return doc


def _ours(schema: dict[str, Any], doc: Any) -> Counter[tuple[Any, ...]]:
    return Counter((e.validator, tuple(e.absolute_path)) for e in SchemaChecker(schema).iter_errors(doc))


def _theirs(schema: dict[str, Any], doc: Any) -> Counter[tuple[Any, ...]]:
    validator = jsonschema.Draft202012Validator(schema)
    return Counter((e.validator, tuple(e.absolute_path)) for e in validator.iter_errors(doc))


def test_the_valid_documents_are_valid_for_both_checkers() -> None:
    for schema, docs in ((mcpeval_nb.manifest_schema(), MANIFESTS), (mcpeval_nb.budgets_schema(), BUDGETS)):
        for doc in docs:
            assert _ours(schema, doc) == _theirs(schema, doc) == Counter()


@SETTINGS
@given(_mutated(MANIFESTS))
def test_manifest_violations_match_jsonschema(doc: Any) -> None:
    schema = mcpeval_nb.manifest_schema()
    assert _ours(schema, doc) == _theirs(schema, doc)


@SETTINGS
@given(_mutated(BUDGETS))
def test_budgets_violations_match_jsonschema(doc: Any) -> None:
    schema = mcpeval_nb.budgets_schema()
    assert _ours(schema, doc) == _theirs(schema, doc)


def test_a_schema_with_an_unsupported_keyword_or_remote_ref_is_refused() -> None:
    with pytest.raises(ValueError, match="unsupported keywords: format"):
        SchemaChecker({"type": "string", "format": "date"})
    with pytest.raises(ValueError, match="non-local"):
        SchemaChecker({"$ref": "https://example.invalid/s.json"})


def test_json_equality_keeps_booleans_apart_from_numbers() -> None:
    checker = SchemaChecker({"enum": [1, [0], {"a": 1.0}]})
    assert checker.is_valid(1) and checker.is_valid(1.0) and checker.is_valid({"a": 1})
    assert not checker.is_valid(True) and not checker.is_valid([False])
