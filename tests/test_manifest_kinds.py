"""The kind table and the published manifest schema describe the same kinds, access rules and ranges."""

from __future__ import annotations

from typing import Any

import pytest

import mcpeval_nb
from mcpeval_nb import manifest_schema
from mcpeval_nb.probe.kinds.table import KIND_TABLE, PROBE_KINDS, KindSpec


def _case_defs() -> dict[str, dict[str, Any]]:
    """kind -> the schema object a case of that kind must match (via the ``case`` allOf branches)."""
    schema = manifest_schema()
    defs = schema["$defs"]
    found: dict[str, dict[str, Any]] = {}
    for branch in defs["case"]["allOf"]:
        kind = branch["if"]["properties"]["probe"]["const"]
        ref = branch["then"]["$ref"].removeprefix("#/$defs/")
        assert defs[ref]["properties"]["probe"] == {"const": kind}
        found[kind] = defs[ref]
    return found


def _bounded_integers(case_def: dict[str, Any]) -> dict[str, tuple[int, int, bool]]:
    """field -> (minimum, maximum, required) for every integer property the schema bounds."""
    required = set(case_def["required"])
    return {name: (prop["minimum"], prop["maximum"], name in required)
            for name, prop in case_def["properties"].items()
            if prop.get("type") == "integer" and "minimum" in prop and "maximum" in prop}


def test_the_schema_and_the_table_name_the_same_kinds_in_the_same_order() -> None:
    schema = manifest_schema()
    assert schema["$defs"]["case"]["properties"]["probe"]["enum"] == list(PROBE_KINDS)
    assert list(_case_defs()) == list(PROBE_KINDS)
    assert mcpeval_nb.probe_kinds() == PROBE_KINDS == tuple(KIND_TABLE)


@pytest.mark.parametrize("spec", KIND_TABLE.values(), ids=list(KIND_TABLE))
def test_the_schema_states_each_kinds_access_rule_and_ranges_as_the_table_does(spec: KindSpec) -> None:
    case_def = _case_defs()[spec.name]
    access = case_def["properties"]["access"]
    assert access == ({"const": "read_only"} if spec.read_only_only else {"enum": ["read_only", "mutating"]})
    table = {r.field: (r.low, r.high, r.required) for r in spec.ranges}
    assert _bounded_integers(case_def) == table
    assert ("steps" in case_def["properties"]) == spec.steps

