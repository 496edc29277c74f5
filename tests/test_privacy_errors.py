"""Storable error information (SPEC 4.1-4.2): codes, buckets, template ids; prose never kept."""

from __future__ import annotations

from typing import Any

import pytest

from mcpeval_nb.jsonfmt import dumps
from mcpeval_nb.privacy import (
    error_info,
    privacy_safe_code,
    safe_string_bucket,
    sanitize_error,
    template_id,
    tool_error_info,
)

SALT = bytes(32)
GONE = "session 0be9b59c-1234-4abc-8def-0123456789ab gone"


def test_error_info_of_a_jsonrpc_error_keeps_code_and_template_only() -> None:
    payload = {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32000, "message": GONE, "data": {"secret": "CANARY-data"}, "stack": "CANARY"},
    }
    info = error_info(payload, SALT)
    assert info == {"code": -32000, "template": "{message}", "template_id": "eb5b81a70555da3b"}
    assert "CANARY" not in dumps(info, sort_keys=False)


def test_error_info_reads_a_bare_error_object() -> None:
    assert error_info({"code": "timeout", "message": "x"}, SALT) == {
        "code": "timeout",
        "template": "{message}",
        "template_id": template_id(SALT, "x"),
    }


def test_error_info_key_order_follows_the_struct() -> None:
    info = error_info(
        {
            "error": {
                "message": "m",
                "kind": "CANARY-kind",
                "retryable": True,
                "layer": "transport",
                "code": "E1",
            }
        },
        SALT,
    )
    assert list(info) == ["code", "layer", "retryable", "kind", "template", "template_id"]
    assert info["layer"] == "str<32" and info["kind"] == "str<32"


@pytest.mark.parametrize(
    ("inner", "expected"),
    [
        ({"code": None}, {"code": None}),
        ({}, {}),
        ({"message": 5}, {}),
        ({"retryable": "yes"}, {}),
        ({"layer": 3, "kind": None}, {}),
        ({"layer": "str<8"}, {"layer": "str<8"}),
        ({"layer": "a-very-long-layer-name-of-33-bytes"}, {"layer": "str<128"}),
    ],
)
def test_error_info_keeps_each_field_only_with_the_right_type(
    inner: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert error_info({"error": inner}, SALT) == expected


def test_error_info_of_a_non_object_error_is_empty() -> None:
    assert error_info({"error": "CANARY"}, SALT) == {}
    assert error_info({"error": None}, SALT) == {}
    assert error_info("CANARY", SALT) == {}


@pytest.mark.parametrize(
    ("code", "safe"),
    [
        (-32602, -32602),
        (404, 404),
        (1.5, 1.5),
        (True, True),
        (None, None),
        ("invalid_params", "invalid_params"),
        ("E" + "x" * 63, "E" + "x" * 63),
        ("E" + "x" * 64, "str<128"),
        ("404", "str<8"),
        ("CANARY secret code", "str<32"),
        ("str<512", "str<512"),
        ([1, "CANARY", 3], {"array": 3}),
        ({"array": 4}, {"array": 4}),
        ({"object": 2}, {"object": 2}),
        ({"array": -1}, {"object": 1}),
        ({"array": 1.0}, {"object": 1}),
        ({"array": True}, {"object": 1}),
        ({"a": "CANARY", "b": 2}, {"object": 2}),
        ({}, {"object": 0}),
    ],
)
def test_privacy_safe_code(code: Any, safe: Any) -> None:
    assert privacy_safe_code(code) == safe
    assert privacy_safe_code(safe) == safe


def test_safe_string_bucket_keeps_buckets_and_buckets_everything_else() -> None:
    assert safe_string_bucket("str>4096") == "str>4096"
    assert safe_string_bucket("transport") == "str<32"
    assert safe_string_bucket("") == "str<8"


def test_tool_error_info_templates_the_first_text_content() -> None:
    result = {
        "isError": True,
        "content": [{"type": "text", "text": GONE}, {"type": "text", "text": "CANARY"}],
    }
    assert tool_error_info(result, SALT) == {
        "code": "tool-error",
        "template": "{message}",
        "template_id": "eb5b81a70555da3b",
    }


@pytest.mark.parametrize(
    "result",
    [
        {"isError": True},
        {"content": []},
        {"content": [{"type": "image"}]},
        {"content": [{"text": 5}]},
        {"content": "CANARY"},
        None,
    ],
)
def test_tool_error_info_without_text_has_only_the_code(result: Any) -> None:
    assert tool_error_info(result, SALT) == {"code": "tool-error"}


def test_sanitize_error_reapplies_the_serialisers() -> None:
    stored = {
        "code": "CANARY code",
        "layer": "CANARY-layer",
        "retryable": False,
        "kind": "str<8",
        "template": "CANARY template prose",
        "template_id": "0123456789abcdef",
    }
    assert sanitize_error(stored) == {
        "code": "str<32",
        "layer": "str<32",
        "retryable": False,
        "kind": "str<8",
        "template": "{message}",
        "template_id": "0123456789abcdef",
    }


@pytest.mark.parametrize("tid", ["0123456789ABCDEF", "0123", "CANARY-not-an-id", "0123456789abcdef0"])
def test_an_invalid_template_id_is_omitted_not_null(tid: str) -> None:
    assert sanitize_error({"template": "{message}", "template_id": tid}) == {"template": "{message}"}


def test_explicit_null_code_is_distinct_from_a_missing_code() -> None:
    assert sanitize_error({"code": None}) == {"code": None}
    assert sanitize_error({}) == {}
    assert dumps(sanitize_error({"code": None}), sort_keys=False) == '{"code":null}'


def test_null_optional_fields_are_omitted() -> None:
    assert (
        sanitize_error(
            {"layer": None, "retryable": None, "kind": None, "template": None, "template_id": None}
        )
        == {}
    )


@pytest.mark.parametrize(
    "bad", [{"layer": 5}, {"kind": []}, {"template": 1}, {"template_id": 7}, {"retryable": "true"}]
)
def test_sanitize_error_refuses_wrong_json_types(bad: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        sanitize_error(bad)


def test_sanitize_error_is_idempotent() -> None:
    info = {
        "code": {"a": 1},
        "layer": "x",
        "kind": "y" * 600,
        "retryable": True,
        "template": "t",
        "template_id": "ffffffffffffffff",
    }
    once = sanitize_error(info)
    assert sanitize_error(once) == once
