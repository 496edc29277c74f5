"""Input synthesis for the standard battery: rules, budgets (just under / just over) and invalid arguments."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpeval_nb.jsonfmt import dumps
from mcpeval_nb.limits import (
    SYNTH_MAX_ARRAY_ITEMS,
    SYNTH_MAX_DEPTH,
    SYNTH_MAX_ENCODED_BYTES,
    SYNTH_MAX_NODES,
    SYNTH_MAX_STRING_BYTES,
)
from mcpeval_nb.probe.readiness.schema_tools import conforms, measure
from mcpeval_nb.probe.readiness.synth import invalid_arguments, synthesize


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "required": sorted(props), "properties": props}


def encoded(value: Any) -> int:
    return len(dumps(value, sort_keys=True).encode("utf-8"))


# --- the rules, in order --------------------------------------------------------------------------------


def test_formats_yield_their_fixed_example_values() -> None:
    schema = obj(a={"type": "string", "format": "date-time"}, b={"type": "string", "format": "date"},
                 c={"type": "string", "format": "uri"}, d={"type": "string", "format": "email"},
                 e={"type": "string", "format": "uuid"})
    assert synthesize(schema).arguments == {
        "a": "2026-01-01T00:00:00Z", "b": "2026-01-01", "c": "https://example.com",
        "d": "user@example.com", "e": "00000000-0000-4000-8000-000000000000"}


def test_plain_strings_are_padded_to_min_length_and_cut_to_max_length() -> None:
    schema = obj(a={"type": "string"}, b={"type": "string", "minLength": 10},
                 c={"type": "string", "maxLength": 3})
    assert synthesize(schema).arguments == {"a": "mcpeval", "b": "mcpevalxxx", "c": "mcp"}


def test_a_string_with_a_pattern_and_no_format_is_unsynthesizable() -> None:
    result = synthesize(obj(code={"type": "string", "pattern": "^[A-Z]{3}$"}))
    assert (result.arguments, result.reason) == (None, "pattern")


def test_numbers_use_minimum_then_exclusive_minimum_then_one_capped_at_maximum() -> None:
    schema = obj(a={"type": "integer", "minimum": 5}, b={"type": "integer", "exclusiveMinimum": 5},
                 c={"type": "number"}, d={"type": "integer", "maximum": 0},
                 e={"type": "number", "minimum": 2.0},
                 f={"type": "number", "minimum": 0.5})
    args = synthesize(schema).arguments
    assert args == {"a": 5, "b": 6, "c": 1, "d": 0, "e": 2, "f": 0.5}
    assert args is not None and isinstance(args["e"], int)


def test_first_applicable_rule_wins_const_enum_default_examples_any_of() -> None:
    schema = obj(a={"type": "string", "const": "k", "enum": ["e", "k"], "default": "d"},
                 b={"type": "string", "enum": ["e1", "e2"], "default": "d"},
                 c={"type": "string", "default": "d", "examples": ["x"]},
                 d={"type": "string", "examples": ["x", "y"]},
                 e={"anyOf": [{"type": "boolean"}, {"type": "string"}],
                    "oneOf": [{"type": "boolean"}, {"type": "null"}]},
                 f={"oneOf": [{"type": "null"}, {"type": "string"}]})
    assert synthesize(schema).arguments == {"a": "k", "b": "e1", "c": "d", "d": "x", "e": False, "f": None}


def test_type_arrays_use_the_first_non_null_member() -> None:
    assert synthesize(obj(a={"type": ["null", "integer"]})).arguments == {"a": 1}
    assert synthesize(obj(a={"type": ["null"]})).arguments == {"a": None}


def test_arrays_hold_min_items_copies_and_nested_objects_recurse() -> None:
    schema = obj(a={"type": "array", "items": {"type": "string"}, "minItems": 2},
                 b={"type": "array", "items": {"type": "string"}},
                 c=obj(inner={"type": "boolean"}))
    assert synthesize(schema).arguments == {"a": ["mcpeval", "mcpeval"], "b": [], "c": {"inner": False}}


def test_only_required_properties_are_synthesized() -> None:
    schema = {"type": "object", "required": ["a"],
              "properties": {"a": {"type": "boolean"}, "b": {"type": "string"}}}
    assert synthesize(schema).arguments == {"a": False}
    assert synthesize({"type": "object"}).arguments == {}


def test_a_required_name_missing_from_properties_is_unsynthesizable() -> None:
    result = synthesize({"type": "object", "required": ["ghost"], "properties": {}})
    assert (result.arguments, result.reason) == (None, "missing-property")


def test_local_refs_resolve_through_json_pointers_and_remote_refs_fail() -> None:
    schema = {"type": "object", "required": ["a", "b"], "$defs": {"x/y": {"type": "string", "minLength": 3}},
              "properties": {"a": {"$ref": "#/$defs/x~1y"}, "b": {"$ref": "#/properties/a"}}}
    assert synthesize(schema).arguments == {"a": "mcpeval", "b": "mcpeval"}
    remote = obj(a={"$ref": "https://example.com/schema.json"})
    assert synthesize(remote).reason == "ref"
    dangling = obj(a={"$ref": "#/$defs/nothing"})
    assert synthesize(dangling).reason == "ref"


def test_the_candidate_must_validate_against_the_full_schema() -> None:
    contradiction = obj(a={"type": "string", "minLength": 10, "maxLength": 3})
    assert synthesize(contradiction).reason == "invalid"
    wrong_multiple = obj(n={"type": "integer", "multipleOf": 7})
    assert synthesize(wrong_multiple).reason == "invalid"
    fractional_integer = obj(n={"type": "integer", "minimum": 2.5})
    assert synthesize(fractional_integer).reason == "invalid"


def test_final_validation_refuses_external_references_instead_of_fetching_them() -> None:
    schema = {"type": "object", "allOf": [{"$ref": "http://127.0.0.1:9/never-fetched.json"}]}
    assert synthesize(schema).reason == "invalid"
    assert conforms({}, {"type": "object"}) is True
    assert conforms({}, {"type": "not-a-type"}) is False


def test_a_non_object_schema_is_unsynthesizable() -> None:
    assert synthesize({"type": "string"}).reason == "not-object"
    assert synthesize(["not", "a", "schema"]).reason == "not-object"
    assert synthesize(obj(a=True)).reason == "type"
    assert synthesize(obj(a={"description": "no type at all"})).reason == "type"


# --- budgets: just under and just over each --------------------------------------------------------------


def test_encoded_size_just_under_the_budget_synthesizes_and_one_byte_over_does_not() -> None:
    # {"a":"<L chars>"} is L + 8 bytes of compact JSON.
    fits = SYNTH_MAX_ENCODED_BYTES - 8
    result = synthesize(obj(a={"type": "string", "default": "x" * fits}))
    assert result.ok and encoded(result.arguments) == SYNTH_MAX_ENCODED_BYTES
    assert synthesize(obj(a={"type": "string", "default": "x" * (fits + 1)})).reason == "bytes"


def test_encoded_size_counts_escapes_and_multibyte_characters() -> None:
    # "é" is two UTF-8 bytes; "\n" is escaped to two bytes.
    fits = (SYNTH_MAX_ENCODED_BYTES - 8) // 2
    result = synthesize(obj(a={"type": "string", "default": "é" * fits}))
    assert result.ok and encoded(result.arguments) == SYNTH_MAX_ENCODED_BYTES
    assert synthesize(obj(a={"type": "string", "default": "\n" * (fits + 1)})).reason == "bytes"


def test_node_count_just_under_the_budget_synthesizes_and_one_node_over_does_not() -> None:
    # the arguments object + the array + its items
    fits = SYNTH_MAX_NODES - 2
    result = synthesize(obj(a={"type": "array", "default": [0] * fits}))
    assert result.ok and result.arguments is not None and len(result.arguments["a"]) == fits
    assert synthesize(obj(a={"type": "array", "default": [0] * (fits + 1)})).reason == "nodes"


def test_array_items_from_min_items_are_capped_at_256() -> None:
    item = {"type": "boolean"}
    ok = synthesize(obj(a={"type": "array", "items": item, "minItems": SYNTH_MAX_ARRAY_ITEMS}))
    assert ok.arguments is not None and len(ok.arguments["a"]) == SYNTH_MAX_ARRAY_ITEMS
    over = synthesize(obj(a={"type": "array", "items": item, "minItems": SYNTH_MAX_ARRAY_ITEMS + 1}))
    assert over.reason == "array-items"


def test_strings_from_min_length_are_capped_at_16_kib() -> None:
    ok = synthesize(obj(a={"type": "string", "minLength": SYNTH_MAX_STRING_BYTES}))
    assert ok.arguments is not None and len(ok.arguments["a"]) == SYNTH_MAX_STRING_BYTES
    over = synthesize(obj(a={"type": "string", "minLength": SYNTH_MAX_STRING_BYTES + 1}))
    assert over.reason == "string-length"


def test_copies_of_array_items_are_charged_against_the_byte_budget() -> None:
    # 256 copies of a 16 KiB string are 4 MiB: each is within its own bound, the whole is not.
    big = {"type": "array", "items": {"type": "string", "minLength": SYNTH_MAX_STRING_BYTES}, "minItems": 256}
    assert synthesize(obj(a=big)).reason == "bytes"


def test_many_small_array_copies_are_charged_against_the_node_budget() -> None:
    inner = {"type": "array", "items": {"type": "boolean"}, "minItems": 64}
    outer = {"type": "array", "items": inner, "minItems": 64}  # 64 * 65 + 1 nodes
    assert synthesize(obj(a=outer)).reason == "nodes"


def nested(levels: int) -> dict[str, Any]:
    """A root whose required property chain descends ``levels`` schema levels to a boolean."""
    schema: dict[str, Any] = {"type": "boolean"}
    for _ in range(levels - 1):
        schema = obj(x=schema)
    return obj(x=schema)


def test_schema_traversal_is_bounded_at_eight_levels() -> None:
    ok = synthesize(nested(SYNTH_MAX_DEPTH))
    assert ok.ok
    value: Any = ok.arguments
    for _ in range(SYNTH_MAX_DEPTH - 1):
        value = value["x"]
    assert value == {"x": False}
    assert synthesize(nested(SYNTH_MAX_DEPTH + 1)).reason == "depth"


def test_ref_hops_count_as_levels() -> None:
    # root(0) -> a(1) -> $ref hop(2) ... a chain of refs each one hop deeper
    defs = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(SYNTH_MAX_DEPTH)}
    defs[f"d{SYNTH_MAX_DEPTH}"] = {"type": "boolean"}
    under = {"type": "object", "required": ["a"], "properties": {"a": {"$ref": "#/$defs/d2"}}, "$defs": defs}
    assert synthesize(under).arguments == {"a": False}
    over = {"type": "object", "required": ["a"], "properties": {"a": {"$ref": "#/$defs/d1"}}, "$defs": defs}
    assert synthesize(over).reason == "depth"


def test_ref_cycles_end_at_the_depth_budget() -> None:
    self_ref = obj(a={"$ref": "#/properties/a"})
    assert synthesize(self_ref).reason == "depth"
    mutual = {"type": "object", "required": ["a"], "properties": {"a": {"$ref": "#/$defs/p"}},
              "$defs": {"p": {"$ref": "#/$defs/q"}, "q": {"$ref": "#/$defs/p"}}}
    assert synthesize(mutual).reason == "depth"
    whole = obj(a={"$ref": "#"})
    assert synthesize(whole).reason == "depth"


def test_an_optional_recursive_property_does_not_stop_synthesis() -> None:
    tree = {"type": "object", "required": ["name"],
            "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}}}
    assert synthesize(tree).arguments == {"name": "mcpeval"}


def test_a_huge_enum_takes_its_first_member_and_a_huge_first_member_is_over_budget() -> None:
    huge = obj(a={"enum": ["first", *(f"v{i}" for i in range(200_000))]})
    assert synthesize(huge).arguments == {"a": "first"}
    heavy_first = obj(a={"enum": ["x" * 1_000_000, "small"]})
    assert synthesize(heavy_first).reason == "bytes"


def test_huge_defaults_and_consts_are_refused_before_they_are_copied() -> None:
    wide = obj(a={"type": "array", "default": [None] * 1_000_000})
    assert synthesize(wide).reason == "nodes"
    deep: Any = []
    for _ in range(100_000):  # far deeper than any recursive walk could go
        deep = [deep]
    assert synthesize(obj(a={"const": deep})).reason == "nodes"
    wide_object = obj(a={"type": "object", "default": {f"k{i}": i for i in range(100_000)}})
    assert synthesize(wide_object).reason == "nodes"


def test_literals_share_one_budget_across_properties() -> None:
    half = "x" * (SYNTH_MAX_ENCODED_BYTES // 2)
    two = obj(a={"type": "string", "default": half}, b={"type": "string", "default": half})
    assert synthesize(two).reason == "bytes"


def test_measure_stops_at_the_first_bound_passed() -> None:
    assert measure({"a": [1, "xy", None, True]}, max_nodes=10, max_bytes=100) == (6, 24)
    assert encoded({"a": [1, "xy", None, True]}) == 24
    assert measure([1, 2, 3], max_nodes=3, max_bytes=100) == "nodes"
    assert measure("x" * 10, max_nodes=3, max_bytes=11) == "bytes"


# --- invariants -------------------------------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers(-10, 10) | st.text(max_size=5)
schemas = st.recursive(
    st.fixed_dictionaries({}, optional={
        "type": st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"]),
        "minLength": st.integers(0, 20), "maxLength": st.integers(0, 20), "minimum": st.integers(-5, 5),
        "maximum": st.integers(-5, 5), "enum": st.lists(json_scalars, max_size=3), "default": json_scalars,
        "format": st.sampled_from(["date", "uuid", "hostname"]), "minItems": st.integers(0, 3)}),
    lambda inner: st.fixed_dictionaries(
        {"type": st.just("object"), "properties": st.dictionaries(st.sampled_from("abc"), inner, max_size=3)},
        optional={"required": st.lists(st.sampled_from("abcd"), max_size=3), "items": inner}),
    max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(schemas)
def test_synthesis_never_raises_and_what_it_returns_validates(schema: dict[str, Any]) -> None:
    result = synthesize(schema)
    assert (result.arguments is None) == (result.reason is not None)
    if result.arguments is not None:
        assert conforms(result.arguments, schema)
        assert encoded(result.arguments) <= SYNTH_MAX_ENCODED_BYTES


# --- invalid arguments for the honesty probe ----------------------------------------------------------------


def test_invalid_arguments_follow_the_four_rules_in_order() -> None:
    string_q = {"q": {"type": "string"}}
    assert invalid_arguments({"type": "object", "required": ["q"], "properties": string_q}) == {}
    by_name = {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "integer"}}}
    assert invalid_arguments(by_name) == {"alpha": "mcpeval"}
    assert invalid_arguments({"type": "object", "properties": string_q}) == {"q": 12345}
    untyped = {"type": "object", "properties": {"a": {"type": ["string", "null"]}},
               "additionalProperties": False}
    assert invalid_arguments(untyped) == {"mcpeval_unknown": 1}
    assert invalid_arguments({"type": "object"}) is None
    assert invalid_arguments({"type": "object", "required": []}) is None
    assert invalid_arguments("nonsense") is None
