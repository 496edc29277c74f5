"""Invariant: whatever a manifest holds, a refusal never quotes it (hypothesis)."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpeval_nb import ManifestError, manifest_schema, parse_manifest
from mcpeval_nb.probe.rules import SCHEMA_KEYS
from tests.test_manifest_rules import BASE

MARK = "CANARYq7"
canary_text = st.builds(lambda a, b: f"{a}{MARK}{b}", st.text(max_size=5), st.text(max_size=5))
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | canary_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(canary_text, inner, max_size=3),
    max_leaves=6,
)
PATHS = [["version"], ["timeout_ms"], ["sandboxes", "scratch", "description"], ["sandboxes", MARK],
         ["probes", 0, "id"], ["probes", 0, "tool"], ["probes", 0, "arguments"],
         ["probes", 0, "max_attempts"],
         ["probes", 0, MARK], ["probes", 1, "expect", "equals"], ["probes", 1, "expect", "equals_paths"],
         ["probes", 1, "expect", "required_result_paths"], ["probes", 2, "sandbox"], ["probes", 3, "steps"],
         ["probes", 3, "steps", 0, "tool"], ["probes", 1, "probe"], [MARK]]


@settings(max_examples=150, deadline=None)
@given(path=st.sampled_from(PATHS), value=values)
def test_manifest_refusals_never_quote_manifest_content(path: list[Any], value: Any) -> None:
    doc = copy.deepcopy(BASE)
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    try:
        parse_manifest(json.dumps(doc).encode(), source="m.json")
    except ManifestError as exc:
        assert MARK not in str(exc)


def _schema_keys(node: Any, found: set[str]) -> set[str]:
    if isinstance(node, dict):
        found.update(node.get("properties", {}))
        for child in node.values():
            _schema_keys(child, found)
    elif isinstance(node, list):
        for child in node:
            _schema_keys(child, found)
    return found


def test_messages_may_name_exactly_the_keys_the_published_schema_defines() -> None:
    assert _schema_keys(manifest_schema(), set()) == SCHEMA_KEYS
