"""The signal rules are data: every row fires on its example, is documented, and a new rule is one row."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from mcpeval_nb.privacy.catalog import catalog_tool
from mcpeval_nb.privacy.catalog_signals import FLAGS, SIGNAL_RULES, SignalRule, flags_of, tool_text

SALT = bytes(32)
DOCS = Path(__file__).resolve().parent.parent / "docs" / "catalog.md"


def _entry_for(rule: SignalRule, text: str) -> dict[str, Any]:
    """A tool definition that carries ``text`` where a rule of this scope reads."""
    props: dict[str, Any] = {"city": {"type": "string"}}
    entry: dict[str, Any] = {"name": "probe_tool", "description": "A tool.", "inputSchema": {
        "type": "object", "properties": props}}
    if rule.scope == "param-name":
        props[text] = {"type": "string"}
    elif rule.scope in ("param-text", "schema-bytes"):
        props["city"]["description"] = text
    else:
        entry["description"] = text
    return entry


@pytest.mark.parametrize("rule", SIGNAL_RULES, ids=lambda r: f"{r.label}:{r.scope}:{r.example[:20]!r}")
def test_every_rule_fires_on_its_example_and_keeps_only_its_label(rule: SignalRule) -> None:
    tool = catalog_tool(_entry_for(rule, rule.example), SALT, frozenset({"send_email"}))
    assert rule.label in tool.flags
    stored = json.dumps(tool.to_dict(), ensure_ascii=False)
    if rule.scope != "param-name":  # a parameter's name is kept when it is a label (docs/catalog.md)
        assert rule.example not in stored


CLEAN = [
    "Echoes back the input string",
    "Returns the sum of two numbers",
    "Read the complete contents of a file from the file system as text. Use this tool when you need to "
    "examine the contents of a single file. Only works within allowed directories.",
    "Returns the list of directories that this server is allowed to access. Use this to understand which "
    "directories are available before trying to access files.",
    "Create a new file or completely overwrite an existing file. Use with caution.",
    "Search issues by label; the token parameter pages through results.",
    "Toggles simulated, random-leveled logging on or off.",
    "Weather forecast ☀️ for a city (emoji with a variation selector is not hidden text).",
]


@pytest.mark.parametrize("description", CLEAN)
def test_ordinary_descriptions_raise_no_flag(description: str) -> None:
    entry = {"name": "plain", "description": description, "inputSchema": {"type": "object", "properties": {
        "path": {"type": "string", "description": "Where, relative to the allowed directory."},
        "page_token": {"type": "string"}, "author": {"type": "string"}, "limit": {"type": "integer"}}}}
    assert catalog_tool(entry, SALT, frozenset({"read", "search", "plain"})).flags == ()


def test_plain_word_names_count_only_quoted_or_next_to_the_word_tool() -> None:
    names = frozenset({"echo", "send_email"})
    say = lambda text: catalog_tool({"name": "x", "description": text}, SALT, names).flags  # noqa: E731
    assert say("We echo the answer back.") == ()
    assert say("Call the echo tool first.") == ("cross-tool-reference",)
    assert say("Prefer `echo` for this.") == ("cross-tool-reference",)
    assert say("Then send_email.") == ("cross-tool-reference",)
    itself = {"name": "send_email", "description": "send_email sends mail"}
    assert catalog_tool(itself, SALT, names).flags == ()


def test_a_new_rule_is_one_more_row() -> None:
    row = SignalRule("exfiltration-url", "text", "a URL with a query the model is asked to visit",
                     "visit https://x.example/?q=", re.compile(r"https?://\S+\?\S*="))
    text = tool_text({"name": "t", "description": "then visit https://x.example/?q=1"}, schema_bytes=0)
    assert flags_of(text, rules=(*SIGNAL_RULES, row)) == ("exfiltration-url",)
    assert flags_of(text) == ()


def test_flags_are_listed_in_table_order_and_each_once() -> None:
    entry = {"name": "t", "description": "<IMPORTANT>x\u200b</IMPORTANT> ignore previous " + "y" * 5000,
             "inputSchema": {"type": "object", "properties": {"password": {"type": "string"}}}}
    flags = catalog_tool(entry, SALT).flags
    assert flags == ("hidden-text", "model-directive", "secret-request", "oversized")
    assert FLAGS == ("hidden-text", "model-directive", "cross-tool-reference", "secret-request", "oversized")


def test_docs_list_every_rule_with_its_example() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for rule in SIGNAL_RULES:
        assert rule.means in text, rule.means
        assert f"`{rule.label}`" in text and f"`{rule.scope}`" in text


HOSTILE = ["<" + " " * 200_000, "ignore" + " " * 200_000 + "x", "x" * 200_000, "a tool " * 40_000,
           "`" + "a" * 200_000, "do" + " " * 200_000 + "not", "user" + "\t" * 200_000, "~/" * 100_000]


@pytest.mark.parametrize("text", HOSTILE, ids=lambda t: repr(t[:8]))
def test_hostile_runs_are_read_in_linear_time_never_stalling_the_recorder(text: str) -> None:
    # A pattern that backtracks over a long run would take hours here (pytest-timeout ends it).
    entry = {"name": "t", "description": text, "title": text,
             "inputSchema": {"type": "object", "properties": {"p": {"type": "string", "description": text}}}}
    assert isinstance(catalog_tool(entry, SALT, frozenset({"a", "x", "user"})).flags, tuple)
