"""Budgets files: every bad one is refused with the JSON path of the problem, never a value from it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import mcpeval_nb
from mcpeval_nb import DocumentError, parse_budgets
from tests.ci_support import cli

CANARY = "CANARY-budget-value"
GOOD: dict[str, Any] = {
    "version": 1,
    "budgets": [
        {
            "server": "docs",
            "tool": "search",
            "p95_ms": 500,
            "p99_ms": 2000,
            "max_error_rate": 0.05,
            "min_calls": 20,
        }
    ],
    "no_new_templates": False,
}


def entry(**fields: Any) -> dict[str, Any]:
    return {"version": 1, "budgets": [{"server": "docs", "tool": "search", **fields}]}


BAD: list[tuple[Any, str]] = [
    ([CANARY], "budgets: / must be an object"),
    ({"budgets": []}, "budgets: / is missing `version`"),
    ({"version": 1}, "budgets: / is missing `budgets`"),
    ({"version": 2, "budgets": []}, "budgets: /version must be 1"),
    ({"version": 1, "budgets": [], CANARY: 1}, "budgets: / has an unknown field"),
    ({"version": 1, "budgets": {CANARY: 1}}, "budgets: /budgets must be an array"),
    ({"version": 1, "budgets": [CANARY]}, "budgets: /budgets/0 must be an object"),
    ({"version": 1, "budgets": [{}, {CANARY: 500}]}, "budgets: /budgets/1 has an unknown field"),
    (entry(server=f"{CANARY} with spaces"), "budgets: /budgets/0/server must be a label"),
    (entry(tool=7), "budgets: /budgets/0/tool must be a string"),
    (entry(p95_ms=-1), "budgets: /budgets/0/p95_ms must be at least 0"),
    (entry(p99_ms=CANARY), "budgets: /budgets/0/p99_ms must be a number"),
    (entry(p95_ms=True), "budgets: /budgets/0/p95_ms must be a number"),
    (entry(max_error_rate=1.5), "budgets: /budgets/0/max_error_rate must be at most 1"),
    (entry(max_error_rate=-0.1), "budgets: /budgets/0/max_error_rate must be at least 0"),
    (entry(min_calls=2.5), "budgets: /budgets/0/min_calls must be an integer"),
    (entry(min_calls=-3), "budgets: /budgets/0/min_calls must be at least 0"),
    (
        {"version": 1, "budgets": [], "no_new_templates": CANARY},
        "budgets: /no_new_templates must be a boolean",
    ),
    (
        {"version": 1, "budgets": [{"p95_ms": -1}, {"tool": 5}]},
        "budgets: /budgets/0/p95_ms must be at least 0",
    ),
]


@pytest.mark.parametrize(("doc", "message"), BAD, ids=[m.split(": ", 1)[1] for _, m in BAD])
def test_a_bad_budgets_file_is_refused_with_the_json_path_of_the_problem(doc: Any, message: str) -> None:
    with pytest.raises(DocumentError) as info:
        parse_budgets(json.dumps(doc))
    text = str(info.value)
    assert text.startswith(message)
    assert CANARY not in text and "spaces" not in text
    # the published schema refuses the same document (the checker and the schema cannot drift)
    assert not jsonschema.Draft202012Validator(mcpeval_nb.budgets_schema()).is_valid(doc)


def test_text_that_is_not_json_and_repeated_selectors_are_refused() -> None:
    where = r"\(line 1, column 28: expecting value\)"
    with pytest.raises(DocumentError, match=rf"^b\.json: not valid JSON {where}$"):
        parse_budgets(b'{"version": 1, "budgets": [' + CANARY.encode(), source="b.json")
    doc = {"version": 1, "budgets": [{"server": "docs"}, {"tool": "x"}, {"server": "docs", "tool": "*"}]}
    with pytest.raises(DocumentError, match="/budgets/2 has the same server and tool as /budgets/0"):
        parse_budgets(doc)


def test_the_issue_layout_parses_with_every_limit() -> None:
    assert jsonschema.Draft202012Validator(mcpeval_nb.budgets_schema()).is_valid(GOOD)
    [b] = parse_budgets(json.dumps(GOOD)).budgets
    assert (b.server, b.tool, b.p95_ms, b.p99_ms, b.max_error_rate, b.min_calls) == (
        "docs",
        "search",
        500,
        2000,
        0.05,
        20,
    )
    defaults = parse_budgets({"version": 1, "budgets": [{}]})
    assert (defaults.budgets[0].server, defaults.budgets[0].tool, defaults.no_new_templates) == (
        "*",
        "*",
        False,
    )


def test_the_command_exits_two_naming_the_file_and_the_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "budgets.json"
    path.write_text(json.dumps(entry(p95_ms=CANARY)))
    code, out, err = cli(capsys, "gate", "--budgets", str(path), "--root", str(tmp_path / "root"))
    assert (code, out) == (2, "")
    assert err == f"mcpeval-nb: {path}: /budgets/0/p95_ms must be a number\n"
