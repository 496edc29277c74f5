"""The one JUnit renderer: valid against the schema CI servers read, counts right, text escaped."""

from __future__ import annotations

import pytest
from lxml import etree

from mcpeval_nb import JUnitCase, JUnitSuite, render_junit
from tests.ci_support import junit, outcomes


def test_every_status_renders_valid_junit_with_the_right_counts() -> None:
    suite = JUnitSuite(
        "demo cases",
        (
            JUnitCase("a", "mcpeval.demo.pagination"),
            JUnitCase(
                "b",
                "mcpeval.demo.token-cost",
                "failure",
                message="token-budget-exceeded",
                type="token-budget-exceeded",
                text="hint\nnumbers",
            ),
            JUnitCase(
                "c", "mcpeval.demo.contention", "error", message="transport-closed", type="transport-closed"
            ),
            JUnitCase("d", "mcpeval.demo", "skipped", message="not run"),
            JUnitCase("e", "mcpeval.demo", output="warning: a note"),
        ),
        (("server", "demo"),),
    )
    text = render_junit([suite, JUnitSuite("empty", ())], name="mcpeval-nb demo")
    root = junit(text)
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("5", "1", "1")
    first = root.findall("testsuite")[0]
    assert (first.get("tests"), first.get("skipped")) == ("5", "1")
    assert outcomes(root) == {
        "a": ("passed", None),
        "b": ("failure", "token-budget-exceeded"),
        "c": ("error", "transport-closed"),
        "d": ("skipped", "not run"),
        "e": ("passed", None),
    }
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n') and text.endswith("</testsuites>\n")


def test_markup_is_escaped_and_characters_xml_cannot_carry_are_dropped() -> None:
    case = JUnitCase(
        'x<&>"', "c", "failure", message="a & b < c", type="t", text="bell\x07 and ]]> end\ud800"
    )
    root = junit(render_junit([JUnitSuite("s", (case,))], name="n"))
    failure = root.find(".//failure")
    assert failure is not None and failure.get("message") == "a & b < c"
    assert failure.text == "bell and ]]> end"
    assert root.find(".//testcase") is not None and root.find(".//testcase").get("name") == 'x<&>"'  # type: ignore[union-attr]


def test_an_unknown_status_is_refused_and_the_schema_check_can_fail() -> None:
    with pytest.raises(ValueError, match="unknown JUnit status"):
        render_junit([JUnitSuite("s", (JUnitCase("a", "c", "flaky"),))], name="n")
    with pytest.raises(etree.DocumentInvalid):
        junit('<testsuites><testsuite name="s"><testcase name="a"/></testsuite></testsuites>')  # no tests=
