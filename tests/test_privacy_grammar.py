"""Grammars and opaque session tokens (SPEC 2.3, 4.4)."""

from __future__ import annotations

import hashlib

import pytest

from mcpeval_nb.privacy import (
    SERVER_LABEL_MESSAGE,
    opaque_session,
    valid_identifier,
    valid_method,
    valid_server,
    valid_session_token,
    valid_template_id,
    valid_tool,
)

S1_TOKEN = "session:e8bc163c82eee18733288c7d4ac636db3a6deb013ef2d37b68322be20edc45cc"


@pytest.mark.parametrize(
    "name", ["a", "navigate", "1browserCommandFailed", "ns:tool.v-1_x", "x" * 128, "-", "..."]
)
def test_tool_names_inside_the_grammar_are_accepted(name: str) -> None:
    assert valid_tool(name)
    assert valid_server(name)


@pytest.mark.parametrize(
    "name", ["", "x" * 129, "invalid/tool", "a b", "a\x00b", "é", "tool\n", "١", "a\tb", "a@b", "a,b"]
)
def test_tool_names_outside_the_grammar_are_refused(name: str) -> None:
    assert not valid_tool(name)
    assert not valid_server(name)


@pytest.mark.parametrize("value", [None, 7, b"tool", ["tool"]])
def test_non_strings_never_pass_a_grammar(value: object) -> None:
    assert not valid_tool(value)
    assert not valid_server(value)
    assert not valid_method(value)
    assert not valid_identifier(value)
    assert not valid_template_id(value)
    assert not valid_session_token(value)


def test_server_label_message_names_the_rule_only() -> None:
    assert SERVER_LABEL_MESSAGE == (
        "server must be a 1-128 character label using only ASCII letters, digits, '.', '_', '-', or ':'"
    )


@pytest.mark.parametrize(
    "method", ["tools/call", "notifications/message", "initialize", "a/b/c", "x" * 128, "ns:a.b/c-d_e"]
)
def test_methods_are_slash_separated_non_empty_segments(method: str) -> None:
    assert valid_method(method)


@pytest.mark.parametrize(
    "method",
    [
        "",
        "/tools",
        "tools/",
        "tools//call",
        "x" * 129,
        "a/" + "b" * 127,
        "tools call",
        "tools/cäll",
        "tools/call\n",
    ],
)
def test_methods_outside_the_grammar_are_refused(method: str) -> None:
    assert not valid_method(method)


@pytest.mark.parametrize("ident", ["a", "Z", "invalid_params", "a1.b:c-d_e", "a" * 64])
def test_identifiers_start_with_a_letter_and_are_at_most_64_bytes(ident: str) -> None:
    assert valid_identifier(ident)


@pytest.mark.parametrize("ident", ["", "1a", "-a", "_a", "a" * 65, "a b", "é", "a/b", "a\n"])
def test_identifiers_outside_the_grammar_are_refused(ident: str) -> None:
    assert not valid_identifier(ident)


def test_template_ids_are_exactly_sixteen_lowercase_hex_digits() -> None:
    assert valid_template_id("0123456789abcdef")
    assert not valid_template_id("0123456789ABCDEF")
    assert not valid_template_id("0123456789abcde")
    assert not valid_template_id("0123456789abcdef0")
    assert not valid_template_id("0123456789abcdeg")


def test_raw_session_is_replaced_by_sha256_token() -> None:
    assert opaque_session("s1") == S1_TOKEN
    assert opaque_session("") == "session:" + hashlib.sha256(b"").hexdigest()
    assert opaque_session("séance") == "session:" + hashlib.sha256("séance".encode()).hexdigest()


def test_stored_session_token_round_trips_and_is_lowercased() -> None:
    assert opaque_session(S1_TOKEN) == S1_TOKEN
    upper = "session:" + S1_TOKEN[8:].upper()
    assert opaque_session(upper) == S1_TOKEN
    assert opaque_session(opaque_session("anything")) == opaque_session("anything")


@pytest.mark.parametrize(
    "value",
    [
        S1_TOKEN[:-1],
        S1_TOKEN + "0",
        S1_TOKEN[:-1] + "g",
        "SESSION:" + S1_TOKEN[8:],
        " " + S1_TOKEN,
        "session:" + "é" * 64,
    ],
)
def test_near_tokens_are_hashed_not_kept(value: str) -> None:
    token = opaque_session(value)
    assert token != value
    assert token == "session:" + hashlib.sha256(value.encode()).hexdigest()
    assert valid_session_token(token)
