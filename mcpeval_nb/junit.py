"""JUnit XML, the report format CI servers read: one module that every ``--format junit`` uses.

The document is the common JUnit layout that Jenkins, GitLab, GitHub test reporters and Azure read
(``testsuites`` > ``testsuite`` > ``testcase`` with at most one ``failure``, ``error`` or ``skipped``, the
last carrying its reason as text: the schema gives it no attributes);
``tests/test_junit.py`` checks it against that XML schema.  Commands build ``JUnitSuite`` values from
their reports (``ProbeReport.junit_suites``, ``ProbeDiff.junit_suites``, ``GateReport.junit_suites``)
and call ``render_junit``: only labels, ids, numbers and fixed hint texts go in, and characters XML 1.0
cannot carry are dropped.  No timestamps or host names: the bytes are a function of the report.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["STATUSES", "JUnitCase", "JUnitSuite", "render_junit"]

#: A test case's outcome: ``failure`` is a verdict, ``error`` could not complete, ``skipped`` not judged.
STATUSES = ("passed", "failure", "error", "skipped")
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass(frozen=True)
class JUnitCase:
    """One test case.

    Attributes:
        name: the case (a case id, a check id, a budget check).
        classname: the group it belongs to (``mcpeval.<server>.<kind>`` and the like).
        status: one of ``STATUSES``.
        message: the reason label (``failure``/``error``) or why it was skipped.
        type: the failure's type attribute (a reason label).
        text: the body: the remediation hint and the numbers behind the verdict.
        time: seconds (0 when the report does not time it).
        output: a note for a case that passed or failed (``system-out``), e.g. a warning.
    """

    name: str
    classname: str
    status: str = "passed"
    message: str | None = None
    type: str | None = None
    text: str | None = None
    time: float = 0.0
    output: str | None = None


@dataclass(frozen=True)
class JUnitSuite:
    """A named group of cases, with optional ``(name, value)`` properties."""

    name: str
    cases: tuple[JUnitCase, ...]
    properties: tuple[tuple[str, str], ...] = ()

    def count(self, status: str) -> int:
        """How many cases have ``status``."""
        return sum(c.status == status for c in self.cases)


def _clean(text: str) -> str:
    return _NOT_XML.sub("", text)


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def _totals(element: ET.Element, suites: Sequence[JUnitSuite], *, skipped: bool) -> None:
    element.set("tests", str(sum(len(s.cases) for s in suites)))
    element.set("failures", str(sum(s.count("failure") for s in suites)))
    element.set("errors", str(sum(s.count("error") for s in suites)))
    if skipped:  # the schema allows the count on a suite, not on the document
        element.set("skipped", str(sum(s.count("skipped") for s in suites)))
    element.set("time", _seconds(sum(c.time for s in suites for c in s.cases)))


def _case(parent: ET.Element, case: JUnitCase) -> None:
    if case.status not in STATUSES:
        raise ValueError(f"unknown JUnit status {case.status}")
    element = ET.SubElement(parent, "testcase", name=_clean(case.name), classname=_clean(case.classname),
                            time=_seconds(case.time))
    if case.status == "skipped":  # the schema gives <skipped> text only, no attributes
        ET.SubElement(element, "skipped").text = _clean("\n".join(t for t in (case.message, case.text) if t))
    elif case.status != "passed":
        child = ET.SubElement(element, case.status)
        if case.message is not None:
            child.set("message", _clean(case.message))
        if case.type is not None:
            child.set("type", _clean(case.type))
        if case.text:
            child.text = _clean(case.text)
    if case.output:
        ET.SubElement(element, "system-out").text = _clean(case.output)


def render_junit(suites: Sequence[JUnitSuite], *, name: str) -> str:
    """The JUnit XML document for ``suites``.

    Args:
        suites: the test suites, in order.
        name: the ``testsuites`` element's name (the command: ``mcpeval-nb probe``).

    Returns:
        The document: an XML declaration, 2-space indentation, a trailing newline.

    Raises:
        ValueError: a case's status is not one of ``STATUSES``.
    """
    root = ET.Element("testsuites", name=_clean(name))
    _totals(root, suites, skipped=False)
    for suite in suites:
        element = ET.SubElement(root, "testsuite", name=_clean(suite.name))
        _totals(element, [suite], skipped=True)
        if suite.properties:
            props = ET.SubElement(element, "properties")
            for key, value in suite.properties:
                ET.SubElement(props, "property", name=_clean(key), value=_clean(value))
        for case in suite.cases:
            _case(element, case)
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
