"""A probe report as JUnit suites (``probe``/``score``/``report --format junit``), rendered by ``junit``.

Two suites, each only when the report has it:

* ``<server> cases``: one test case per manifest case, named by its id, classed
  ``mcpeval.<server>.<probe kind>``; a failed case is a ``failure`` typed by its reason label with the
  hint and its numbers as text, a case that could not complete is an ``error`` (transport reason), a
  case a cancelled run never started is ``skipped``;
* ``<server> readiness``: one test case per lost check (``<check id>`` or ``<check id> <tool>``, a
  ``failure`` typed by its reason with the check's hint and score) and one passing case per area that
  lost nothing; a battery that could not complete is one ``error``, a readiness under another standard
  one ``skipped`` (display only).

Only ids, labels, tool names in the tool grammar, numbers and fixed hints appear.
"""

from __future__ import annotations

from ..junit import JUnitCase, JUnitSuite, render_junit
from .cases import CaseResult
from .readiness.model import Readiness
from .render import RenderOptions
from .report_view import ReportView

__all__ = ["case_suite", "junit_format", "readiness_suite", "report_junit", "report_junit_suites"]


def _case(server: str, case: CaseResult) -> JUnitCase:
    classname = f"mcpeval.{server}.{case.probe}"
    if case.passed:
        return JUnitCase(case.id, classname)
    numbers = case.text_line().split(" ", 2)[2]  # "fail attempts=... reason=... <measurements>"
    text = f"{case.hint}\n{numbers}" if case.hint else numbers
    status = "error" if case.errored else "failure"
    return JUnitCase(case.id, classname, status, message=case.reason, type=case.reason, text=text)


def case_suite(report: ReportView) -> JUnitSuite:
    """The manifest cases of ``report`` (cases a cancelled run never started are skipped)."""
    cases = [_case(report.server, c) for c in report.cases]
    cases += [JUnitCase(cid, f"mcpeval.{report.server}", "skipped", message="not run: the run was cancelled")
              for cid in report.not_run]
    gate = report.gate or {"passed": 0, "total": 0}
    props = (("server", report.server), ("gate", f"{gate['passed']}/{gate['total']}"))
    return JUnitSuite(f"{report.server} cases", tuple(cases), props)


def _readiness_cases(server: str, r: Readiness) -> list[JUnitCase]:
    found: list[JUnitCase] = []
    for area in r.areas:
        classname = f"mcpeval.readiness.{server}.{area.name}"
        if not area.checks:
            found.append(JUnitCase(area.name, classname))
        for check in area.checks:
            name = check.id if check.tool is None else f"{check.id} {check.tool}"
            observed = "" if check.observed is None else f" observed={check.observed}"
            found.append(JUnitCase(name, classname, "failure", message=check.reason, type=check.reason,
                                   text=f"{check.hint}\nscore={check.score}{observed} area {area.name} "
                                        f"{area.score}/100 weight={area.weight}"))
    return found


def readiness_suite(report: ReportView) -> JUnitSuite | None:
    """The readiness of ``report`` as a suite, or None when the report has neither readiness nor an error."""
    server, r = report.server, report.readiness
    classname = f"mcpeval.readiness.{server}"
    if report.readiness_error is not None:
        cases = [JUnitCase("readiness", classname, "error", message=report.readiness_error,
                           type=report.readiness_error, text="the readiness battery could not complete")]
        return JUnitSuite(f"{server} readiness", tuple(cases), (("server", server),))
    if r is None:
        return None
    props = (("server", server), ("standard", r.standard), ("score", f"{r.score}/100"))
    if r.display_only:
        case = JUnitCase("readiness", classname, "skipped",
                         message=f"scored under {r.standard}: display only")
        return JUnitSuite(f"{server} readiness", (case,), props)
    return JUnitSuite(f"{server} readiness", tuple(_readiness_cases(server, r)), props)


def report_junit_suites(report: ReportView) -> list[JUnitSuite]:
    """The suites of ``report``: its cases when a manifest ran, then its readiness when there is one."""
    suites = [case_suite(report)] if report.gate is not None or report.not_run else []
    readiness = readiness_suite(report)
    return suites + ([readiness] if readiness is not None else [])


def report_junit(report: ReportView) -> str:
    """``report`` as a JUnit XML document (``testsuites`` named ``mcpeval-nb <server>``)."""
    return render_junit(report_junit_suites(report), name=f"mcpeval-nb {report.server}")


def junit_format(report: ReportView, _options: RenderOptions) -> str:
    """The ``junit`` row of a report's format table."""
    return report_junit(report)
