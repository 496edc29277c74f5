"""Argument shaping (SPEC 3.1-3.5) and the store-side re-sanitisation (SPEC 3.6)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpeval_nb.jsonfmt import dumps, loads
from mcpeval_nb.privacy import EnumIndex, is_canonical_token, sanitize_shape, shape, string_bucket

NAVIGATE_SCHEMA = {
    "type": "object",
    "properties": {
        "waitUntil": {"type": "string", "enum": ["load", "networkIdle", 3, None]},
        "mode": {"anyOf": [{"enum": ["fast"]}, {"oneOf": [{"enum": ["slow"]}]}], "allOf": [{"enum": ["x"]}]},
        "opts": {"type": "object", "properties": {"color": {"enum": ["red", "blue"]}}},
        "a.b": {"enum": ["dotted"]},
        "a": {"properties": {"b": {"enum": ["nested"]}}},
        "items[]": {"enum": ["literal"]},
        "list": {"type": "array", "items": {"enum": ["item"]}},
        "tuple": {"type": "array", "items": [{"enum": ["never"]}]},
        "ref": {"$ref": "#/$defs/r"},
        "sl/ash": {"enum": ["slashed"]},
        "ti~lde": {"enum": ["tilded"]},
    },
    "$defs": {"r": {"enum": ["referenced"]}},
}


def _index() -> EnumIndex:
    index = EnumIndex()
    index.learn_listing(
        {
            "tools": [
                {"name": "navigate", "inputSchema": NAVIGATE_SCHEMA},
                {"name": "bad name", "inputSchema": {"enum": ["x"]}},
                {"name": "root", "inputSchema": {"enum": ["top"]}},
                {"name": "arr", "inputSchema": {"items": {"enum": ["first"]}}},
            ]
        }
    )
    return index


def test_scalars_become_type_tokens() -> None:
    assert shape(None) == "null"
    assert shape(True) == "bool:true"
    assert shape(False) == "bool:false"
    assert shape(3) == "num:3"
    assert shape(-12.5) == "num:-12.5"
    assert shape(1.0) == "num:1.0"
    assert shape(loads("1e20")) == "num:1e20"
    assert shape(loads("100000000000000000000")) == "num:1e20"


def test_minus_zero_shapes_as_num_minus_zero_point_zero_per_spec_reading() -> None:
    # SPEC 18.8 [?]: "-0" is believed to parse as float -0.0; we pin num:-0.0 and accept both on store.
    assert shape(loads("-0")) == "num:-0.0"
    assert sanitize_shape("num:-0.0") == "num:-0.0"
    assert sanitize_shape("num:-0") == "num:-0"


def test_arrays_shape_only_their_first_element() -> None:
    assert shape([{"a": "CANARY-1"}, "CANARY-2", 5]) == {"array": 3, "items": {"a": "str<8"}}
    assert shape([]) == {"array": 0, "items": "empty"}
    assert shape([[]]) == {"array": 1, "items": {"array": 0, "items": "empty"}}


def test_object_keys_are_kept_verbatim_and_values_shaped() -> None:
    shaped = shape({"zeta": 1, "Alpha": {"inner key": "hello"}, "": None})
    assert shaped == {"zeta": "num:1", "Alpha": {"inner key": "str<8"}, "": "null"}
    assert dumps(shaped, sort_keys=True) == '{"":"null","Alpha":{"inner key":"str<8"},"zeta":"num:1"}'


@pytest.mark.parametrize(
    "value",
    [
        "0be9b59c-1234-4abc-8def-0123456789ab",
        "0BE9B59C-1234-4ABC-8DEF-0123456789AB",
        "0be9b59c12344abc8def0123456789ab",
        "d41d8cd98f00b204e9800998ecf8427e",
        "{0be9b59c-1234-4abc-8def-0123456789ab}",
        "urn:uuid:0be9b59c-1234-4abc-8def-0123456789ab",
    ],
)
def test_uuid_forms_including_32_hex_digests_are_uuid(value: str) -> None:
    assert shape(value) == "uuid"


@pytest.mark.parametrize(
    "value",
    [
        "0be9b59c-1234-4abc-8def-0123456789a",
        "0be9b59c12344abc8def0123456789abc",
        "0be9b59c-1234-4abc-8def-0123456789ag",
        "{0be9b59c-1234-4abc-8def-0123456789ab",
    ],
)
def test_near_uuids_are_length_bucketed(value: str) -> None:
    assert shape(value).startswith("str<")


@pytest.mark.parametrize(
    ("nbytes", "bucket"),
    [
        (0, "str<8"),
        (8, "str<8"),
        (9, "str<32"),
        (32, "str<32"),
        (33, "str<128"),
        (128, "str<128"),
        (129, "str<512"),
        (512, "str<512"),
        (513, "str<4096"),
        (4096, "str<4096"),
        (4097, "str>4096"),
    ],
)
def test_length_buckets_are_inclusive_on_utf8_bytes(nbytes: int, bucket: str) -> None:
    assert string_bucket("x" * nbytes) == bucket
    assert shape("x" * nbytes) == bucket


def test_length_buckets_count_utf8_bytes_not_characters() -> None:
    assert string_bucket("é" * 4) == "str<8"
    assert string_bucket("é" * 5) == "str<32"
    assert string_bucket("😀" * 2) == "str<8"
    assert string_bucket("😀" * 3) == "str<32"


def test_urls_shape_to_their_domain_token() -> None:
    assert shape({"u": "https://CANARY.customer.github.io/x?CANARY"}) == {"u": "url:customer.github.io"}


def test_learned_enum_members_at_their_exact_path_become_enum_tokens() -> None:
    index = _index()
    args = {
        "waitUntil": "networkIdle",
        "mode": "slow",
        "opts": {"color": "red"},
        "a.b": "dotted",
        "a": {"b": "nested"},
        "items[]": "literal",
        "list": ["item"],
        "sl/ash": "slashed",
        "ti~lde": "tilded",
    }
    assert shape(args, "navigate", index) == {
        "waitUntil": "enum:networkIdle",
        "mode": "enum:slow",
        "opts": {"color": "enum:red"},
        "a.b": "enum:dotted",
        "a": {"b": "enum:nested"},
        "items[]": "enum:literal",
        "list": {"array": 1, "items": "enum:item"},
        "sl/ash": "enum:slashed",
        "ti~lde": "enum:tilded",
    }


def test_enum_members_are_not_matched_at_another_path() -> None:
    index = _index()
    shaped = shape(
        {
            "color": "red",
            "opts": {"waitUntil": "load"},
            "a": {"b": "dotted"},
            "a.b": "nested",
            "list": "item",
            "items[]": ["literal"],
        },
        "navigate",
        index,
    )
    assert shaped == {
        "color": "str<8",
        "opts": {"waitUntil": "str<8"},
        "a": {"b": "str<8"},
        "a.b": "str<8",
        "list": "str<8",
        "items[]": {"array": 1, "items": "str<8"},
    }


def test_non_string_enum_members_refs_and_tuple_items_are_not_learned() -> None:
    index = _index()
    assert shape({"ref": "referenced", "tuple": ["never"], "waitUntil": "3"}, "navigate", index) == {
        "ref": "str<32",
        "tuple": {"array": 1, "items": "str<8"},
        "waitUntil": "str<8",
    }


def test_enum_at_root_and_root_items_are_learned() -> None:
    index = _index()
    assert shape("top", "root", index) == "enum:top"
    assert shape(["first"], "arr", index) == {"array": 1, "items": "enum:first"}


def test_a_tool_never_listed_or_an_empty_tool_gets_no_enum_tokens() -> None:
    index = _index()
    assert shape({"waitUntil": "load"}, "other", index) == {"waitUntil": "str<8"}
    assert shape({"waitUntil": "load"}, "", index) == {"waitUntil": "str<8"}
    assert shape({"waitUntil": "load"}, "navigate", None) == {"waitUntil": "str<8"}
    assert not index.declared("bad name")


def test_enum_beats_uuid_and_url_rules() -> None:
    index = EnumIndex()
    index.learn(
        "t", {"properties": {"u": {"enum": ["https://example.com/", "d41d8cd98f00b204e9800998ecf8427e"]}}}
    )
    assert shape({"u": "https://example.com/"}, "t", index) == {"u": "enum:https://example.com/"}
    assert shape({"u": "d41d8cd98f00b204e9800998ecf8427e"}, "t", index) == {
        "u": "enum:d41d8cd98f00b204e9800998ecf8427e"
    }


def test_a_new_listing_replaces_a_tools_enum_map() -> None:
    index = EnumIndex()
    index.learn("t", {"properties": {"m": {"enum": ["old"]}}})
    index.learn_listing({"tools": [{"name": "t", "inputSchema": {"properties": {"m": {"enum": ["new"]}}}}]})
    assert shape({"m": "old"}, "t", index) == {"m": "str<8"}
    assert shape({"m": "new"}, "t", index) == {"m": "enum:new"}


def test_a_listing_with_an_empty_schema_still_declares_the_tool() -> None:
    index = EnumIndex()
    index.learn_listing({"tools": [{"name": "t", "inputSchema": {}}, {"name": "u"}]})
    assert index.declared("t")
    assert not index.declared("u")


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("waitUntil", "load", True),
        ("a.b", "dotted", True),
        ("a.b", "nested", False),
        ("/k/a/k/b", "nested", True),
        ("/k/a.b", "dotted", True),
        ("items[]", "literal", True),
        ("/k/list/i", "item", True),
        ("/k/list", "item", False),
        ("/k/sl~1ash", "slashed", True),
        ("/k/ti~0lde", "tilded", True),
        ("/k/ti~2lde", "tilded", False),
        ("/x/waitUntil", "load", False),
        ("/k", "load", False),
        ("waitUntil", "networkidle", False),
    ],
)
def test_public_enum_path_syntax(path: str, value: str, expected: bool) -> None:
    assert _index().is_enum("navigate", path, value) is expected


def test_public_enum_path_root_and_root_item() -> None:
    index = _index()
    assert index.is_enum("root", "", "top")
    assert index.is_enum("arr", "[]", "first")
    assert not index.is_enum("arr", "", "first")


@pytest.mark.parametrize(
    "token",
    [
        "null",
        "bool:true",
        "bool:false",
        "uuid",
        "empty",
        "str<8",
        "str<32",
        "str<128",
        "str<512",
        "str<4096",
        "str>4096",
        "num:3",
        "num:-1.5e3",
        "num:1e20",
        "num:0.0",
        "url:example.com",
        "url:ip",
        "url:public-suffix",
        "url:" + "a" * 253,
        "enum:networkIdle",
        "enum:" + "e" * 128,
        "enum:a.b:c-d_e",
    ],
)
def test_canonical_tokens_survive_sanitize_shape(token: str) -> None:
    assert is_canonical_token(token)
    assert sanitize_shape(token) == token


@pytest.mark.parametrize(
    ("text", "bucket"),
    [
        ("enum:network idle", "str<32"),
        ("enum:", "str<8"),
        ("enum:" + "e" * 129, "str<512"),
        ("num:", "str<8"),
        ("num:abc", "str<8"),
        ("num: 3", "str<8"),
        ("num:1e400", "str<32"),
        ("num:01", "str<8"),
        ("num:+1", "str<8"),
        ("num:NaN", "str<8"),
        ("url:", "str<8"),
        ("url:" + "a" * 254, "str<512"),
        ("url:ex_ample.com", "str<32"),
        ("url:CANARY/path", "str<32"),
        ("str<9", "str<8"),
        ("NULL", "str<8"),
        ("bool:yes", "str<8"),
        ("CANARY-raw-value", "str<32"),
        ("uuid ", "str<8"),
    ],
)
def test_non_canonical_strings_are_rebucketed_by_length(text: str, bucket: str) -> None:
    assert not is_canonical_token(text)
    assert sanitize_shape(text) == bucket


def test_sanitize_shape_turns_raw_json_into_tokens() -> None:
    raw = {
        "secret": "CANARY-manifest-argument",
        "limit": 5,
        "on": True,
        "none": None,
        "f": 2.5,
        "list": ["CANARY-a", "CANARY-b"],
        "empty": [],
        "nested": {"k": "v"},
    }
    assert sanitize_shape(raw) == {
        "secret": "str<32",
        "limit": "num:5",
        "on": "bool:true",
        "none": "null",
        "f": "num:2.5",
        "list": {"array": 2, "items": "str<8"},
        "empty": {"array": 0, "items": "empty"},
        "nested": {"k": "str<8"},
    }


def test_array_and_object_counts_are_kept_only_as_u64() -> None:
    assert sanitize_shape({"array": 3, "items": "str<8"}) == {"array": 3, "items": "str<8"}
    assert sanitize_shape({"object": 2}) == {"object": 2}
    assert sanitize_shape({"array": 2**64 - 1}) == {"array": 2**64 - 1}
    assert sanitize_shape({"array": -1, "object": 1.5}) == {"array": "num:-1", "object": "num:1.5"}
    assert sanitize_shape({"array": True, "object": "3"}) == {"array": "bool:true", "object": "str<8"}
    assert sanitize_shape({"count": 3}) == {"count": "num:3"}


def test_enum_tokens_that_the_store_would_rebucket_are_what_shape_can_emit() -> None:
    # shape() emits enum:<member> for any learned member; the store keeps only grammar-safe members.
    index = EnumIndex()
    index.learn("t", {"properties": {"w": {"enum": ["network idle"]}}})
    shaped = shape({"w": "network idle"}, "t", index)
    assert shaped == {"w": "enum:network idle"}
    assert sanitize_shape(shaped) == {"w": "str<32"}


SHAPES: list[Any] = [
    {"a": "CANARY", "array": 2, "b": [1, "x"], "c": {"object": 5, "d": None}},
    ["enum:network idle", {"array": -3}],
    "num:-0.0",
    {"x": {"array": 1, "items": {"array": 0, "items": "empty"}}},
]


@pytest.mark.parametrize("value", SHAPES)
def test_sanitize_shape_is_idempotent(value: Any) -> None:
    once = sanitize_shape(value)
    assert sanitize_shape(once) == once


def test_shape_output_is_already_sanitized() -> None:
    raw = {
        "u": "https://www.example.com/",
        "id": "0be9b59c-1234-4abc-8def-0123456789ab",
        "n": [1.5e-7],
        "s": "CANARY-xyz",
        "b": False,
    }
    shaped = shape(raw)
    assert sanitize_shape(shaped) == shaped
