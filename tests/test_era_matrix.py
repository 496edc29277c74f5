"""The protocol era matrix (``compare --eras``) on modern-only, dual and legacy SDK servers, in every
format."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

import mcpeval_nb as me
from mcpeval_nb.cli import cli
from mcpeval_nb.transport import HttpTarget
from tests.era_support import era_http

OPTIONS = me.BatteryOptions(history=False, call_timeout_s=10.0)


@pytest.fixture(scope="module")
def matrices() -> Iterator[dict[str, me.EraMatrix]]:
    out = {}
    for era in ("modern", "dual", "legacy"):
        with era_http(era) as target:
            out[era] = me.era_matrix(target, server=f"sdk-{era}", options=OPTIONS)
    yield out


@pytest.mark.parametrize(("era", "serves", "auto", "standards"), [
    ("modern", {"legacy": False, "modern": True}, "modern",
     (None, "mcpeval-modern/1", "mcpeval-modern/1")),
    ("dual", {"legacy": True, "modern": True}, "modern",
     ("mcpeval-standard/2", "mcpeval-modern/1", "mcpeval-modern/1")),
    ("legacy", {"legacy": True, "modern": False}, "legacy",
     ("mcpeval-standard/2", "mcpeval-standard/2", None))])
def test_the_matrix_is_right_for_each_kind_of_server(matrices: dict[str, me.EraMatrix], era: str,
                                                     serves: dict[str, bool], auto: str,
                                                     standards: tuple[str | None, ...]) -> None:
    matrix = matrices[era]
    doc = json.loads(matrix.render("json"))
    assert doc["schema"] == "mcpeval-nb.era-matrix/v1" and doc["serves"] == serves
    assert [c["protocol"] for c in doc["columns"]] == ["legacy", "auto", "2026-07-28"]
    assert [c["standard"] for c in doc["columns"]] == list(standards)
    assert doc["columns"][1]["era"] == auto and matrix.exit_code == 0
    for column in doc["columns"]:
        assert column["error"] == (None if column["served"] else "protocol-mismatch")


def test_text_markdown_and_junit_say_the_same(matrices: dict[str, me.EraMatrix]) -> None:
    matrix = matrices["modern"]
    text = matrix.render("text")
    assert text.startswith("sdk-modern eras: legacy not served, modern served\n")
    assert "  protocol=legacy error=protocol-mismatch\n" in text
    assert "protocol=auto era=modern version=2026-07-28 readiness" in text
    assert "| legacy | - | - | - | - | - | protocol-mismatch |" in matrix.render("markdown")
    suite = ET.fromstring(matrix.render("junit")).find("testsuite")
    assert suite is not None
    statuses = {case.get("name"): [child.tag for child in case] for case in suite.iter("testcase")}
    assert statuses["protocol legacy"] == ["skipped"] and statuses["protocol 2026-07-28"] == []


def test_compare_eras_from_the_command_line() -> None:
    with era_http("dual") as target:
        result = CliRunner().invoke(cli, ["compare", "--eras", "--endpoint", f"dual={target.url}",
                                          "--format", "json"])
        refused = CliRunner().invoke(cli, ["compare", "--eras", "--endpoint", f"a={target.url}",
                                           "--endpoint", f"b={target.url}"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["serves"] == {"legacy": True, "modern": True}
    assert isinstance(refused.exception, me.UsageError) and refused.exception.exit_code == 2
    assert "--eras takes exactly one target" in str(refused.exception)


def test_a_target_that_cannot_be_reached_errors_every_column() -> None:
    matrix = me.era_matrix(HttpTarget("http://127.0.0.1:9/mcp"), server="gone", options=OPTIONS)
    assert matrix.exit_code == 3
    assert {c.error for c in matrix.columns} == {"transport-error"}
