"""A probe diff as JUnit suites (``diff --format junit``), rendered by ``junit``.

One test case per case id (classed ``mcpeval.<server>.<probe kind>``): a regression is a ``failure``
typed ``regressed`` (with the current reason's hint), a changed case is a ``failure`` only under
``--fail-on-change`` (else it passes), fixed and unchanged cases pass.  One ``readiness`` case: a
comparable drop is a failure, a rise a failure only under ``--fail-on-change``, readiness that is not
comparable is ``skipped`` with the reason.  Labels and numbers only.
"""

from __future__ import annotations

from ..junit import JUnitCase, JUnitSuite
from .diff import CaseDiff, ProbeDiff
from .reasons import hint_for

__all__ = ["diff_junit_suites"]


def _case(server: str, c: CaseDiff, fail_on_change: bool) -> JUnitCase:
    classname = f"mcpeval.{server}.{c.probe}"
    verdict = c.verdict
    if verdict in ("fixed", "unchanged") or (verdict == "changed" and not fail_on_change):
        return JUnitCase(c.id, classname)
    base = "absent" if c.base is None else (c.base.reason or "pass")
    now = "absent" if c.current is None else (c.current.reason or "pass")
    reason = None if c.current is None else c.current.reason
    hint = f"{hint_for(reason)}\n" if reason is not None else ""
    return JUnitCase(c.id, classname, "failure", message=f"{verdict}: {base} -> {now}", type=verdict,
                     text=f"{hint}{base} -> {now}")


def _readiness(diff: ProbeDiff, fail_on_change: bool) -> JUnitCase | None:
    words = diff.readiness_words()
    if words is None:
        return None
    classname = f"mcpeval.readiness.{diff.server}"
    verdict = diff.readiness.get("verdict")
    if not diff.readiness["comparable"]:
        return JUnitCase("readiness", classname, "skipped", message=f"readiness {words}")
    if verdict == "regressed" or (verdict == "changed" and fail_on_change):
        return JUnitCase("readiness", classname, "failure", message=f"readiness {words}", type=str(verdict),
                         text=f"readiness {words}")
    return JUnitCase("readiness", classname)


def diff_junit_suites(diff: ProbeDiff, *, fail_on_change: bool = False) -> list[JUnitSuite]:
    """One suite ``<server> diff``: the cases in diff order, then readiness."""
    cases = [_case(diff.server, c, fail_on_change) for c in diff.cases]
    readiness = _readiness(diff, fail_on_change)
    cases += [readiness] if readiness is not None else []
    s = diff.summary
    props = (("server", diff.server), *((v, str(s[v])) for v in s))
    return [JUnitSuite(f"{diff.server} diff", tuple(cases), props)]
