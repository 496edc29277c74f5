"""``mcpeval.probe-diff/v2``: compare two probe reports of one server (SPEC 15 summary).

Cases are matched by id.  Verdicts: ``regressed`` (passed -> failed or errored, or a case that
disappeared), ``fixed`` (failed -> passed), ``changed`` (the failure reason changed, or a case was added),
``unchanged``.  Readiness is compared only under the same standard with known, equal measurement
profiles; otherwise it is ``not comparable`` with the reason, and never gates.  A lower comparable score
is a regression.  Only labels and numbers appear in the document.

As JUnit (``diff --format junit``, rendered by ``junit``): one suite ``<server> diff`` with one test case
per case id (classed ``mcpeval.<server>.<probe kind>``): a regression is a ``failure`` typed
``regressed`` (with the current reason's hint), a changed case is a ``failure`` only under
``--fail-on-change`` (else it passes), fixed and unchanged cases pass.  One ``readiness`` case: a
comparable drop is a failure, a rise a failure only under ``--fail-on-change``, readiness that is not
comparable is ``skipped`` with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import UsageError
from ..junit import JUnitCase, JUnitSuite, render_junit
from .cases import CaseResult
from .reasons import hint_for
from .render import Format, FormatSet, RenderOptions, json_text, lines_text, render
from .report import ProbeReport

__all__ = ["DIFF_SCHEMA", "VERDICTS", "CaseDiff", "ProbeDiff", "diff_junit_suites", "diff_reports"]

DIFF_SCHEMA = "mcpeval.probe-diff/v2"
VERDICTS = ("regressed", "fixed", "changed", "unchanged")


def _state(case: CaseResult | None) -> dict[str, Any] | None:
    if case is None:
        return None
    return {"passed": case.passed, "reason": case.reason}


@dataclass(frozen=True)
class CaseDiff:
    """One case id across the two reports."""

    id: str
    probe: str
    base: CaseResult | None
    current: CaseResult | None

    @property
    def verdict(self) -> str:
        """``regressed``, ``fixed``, ``changed`` or ``unchanged``."""
        b, c = self.base, self.current
        if c is None:
            return "regressed"
        if b is None:
            return "changed"
        if b.passed and not c.passed:
            return "regressed"
        if not b.passed and c.passed:
            return "fixed"
        return "unchanged" if b.reason == c.reason else "changed"

    def to_json(self) -> dict[str, Any]:
        """Sorted keys."""
        return {"base": _state(self.base), "current": _state(self.current), "id": self.id,
                "probe": self.probe, "verdict": self.verdict}


@dataclass(frozen=True)
class ProbeDiff:
    """The diff of two reports; ``to_json`` is the ``mcpeval.probe-diff/v2`` document."""

    #: The diff's format table.
    FORMATS: ClassVar[FormatSet[ProbeDiff]] = FormatSet(
        (Format("text", lambda d, _: d.render_text()), Format("json", lambda d, _: d.dumps()),
         Format("markdown", lambda d, _: d.render_markdown()), Format("junit", lambda d, o: _junit(d, o))),
        unknown="unknown diff format; use text, json, markdown or junit")

    server: str
    cases: tuple[CaseDiff, ...]
    readiness: dict[str, Any]

    @property
    def summary(self) -> dict[str, int]:
        """Counts per verdict (readiness included when comparable and moved)."""
        counts = dict.fromkeys(VERDICTS, 0)
        for case in self.cases:
            counts[case.verdict] += 1
        return counts

    @property
    def regressed(self) -> bool:
        """A case regressed or the comparable readiness score dropped."""
        return self.summary["regressed"] > 0 or self.readiness.get("verdict") == "regressed"

    @property
    def changed(self) -> bool:
        """Anything other than ``unchanged`` (cases or a comparable readiness move)."""
        counts = self.summary
        moved = self.readiness.get("verdict") not in (None, "unchanged")
        return moved or any(counts[v] for v in ("regressed", "fixed", "changed"))

    def to_json(self) -> dict[str, Any]:
        """The diff document (sorted keys)."""
        return {"cases": [c.to_json() for c in self.cases], "readiness": self.readiness,
                "schema": DIFF_SCHEMA, "server": self.server, "summary": self.summary}

    def dumps(self) -> str:
        """Pretty, key-sorted JSON with a trailing newline."""
        return json_text(self.to_json())

    def render(self, fmt: str = "text", *, fail_on_change: bool = False) -> str:
        """Render as ``text``, ``json``, ``markdown`` or ``junit`` (``fail_on_change``: changed cases
        are JUnit failures too; regressions always are).

        Raises:
            UsageError: an unknown format.
        """
        return render(self, fmt, fail_on_change=fail_on_change)

    def moved(self) -> list[tuple[CaseDiff, str, str]]:
        """Each case that did not stay unchanged, with its base and current states as words."""
        return [(c, "absent" if c.base is None else (c.base.reason or "pass"),
                 "absent" if c.current is None else (c.current.reason or "pass"))
                for c in self.cases if c.verdict != "unchanged"]

    def readiness_words(self) -> str | None:
        """``80 -> 75 (-5) regressed``, ``not comparable: <why>``, or None when neither had readiness."""
        r = self.readiness
        if r["comparable"]:
            return f"{r['base_score']} -> {r['current_score']} ({r['delta']:+d}) {r['verdict']}"
        if r["base_score"] is not None or r["current_score"] is not None:
            return f"not comparable: {r['not_comparable']}"
        return None

    def render_text(self) -> str:
        """One line per case that moved, the readiness line, and the summary line."""
        lines = [f"{c.id} {c.probe} {c.verdict} {b} -> {n}" for c, b, n in self.moved()]
        words = self.readiness_words()
        if words is not None:
            lines.append(f"{self.server} readiness {words}")
        s = self.summary
        lines.append(f"{self.server} diff regressed={s['regressed']} fixed={s['fixed']} "
                     f"changed={s['changed']} unchanged={s['unchanged']}")
        return lines_text(lines)

    def render_markdown(self) -> str:
        """The text output's content in its order: a table of the cases that moved, readiness, summary."""
        out = [f"# Probe diff: {self.server}", ""]
        moved = self.moved()
        if moved:
            out += ["| case | probe | verdict | base | current |", "| --- | --- | --- | --- | --- |"]
            out += [f"| {c.id} | {c.probe} | {c.verdict} | {b} | {n} |" for c, b, n in moved]
        else:
            out.append("No case moved.")
        out.append("")
        words = self.readiness_words()
        if words is not None:
            out += [f"**Readiness:** {words}", ""]
        s = self.summary
        out.append(f"**Summary:** {s['regressed']} regressed, {s['fixed']} fixed, {s['changed']} changed, "
                   f"{s['unchanged']} unchanged")
        return "\n".join(out) + "\n"


def _compare_readiness(base: ProbeReport, current: ProbeReport) -> dict[str, Any]:
    b, c = base.readiness, current.readiness
    out: dict[str, Any] = {"base_score": None if b is None else b.score,
                           "base_standard": None if b is None else b.standard,
                           "comparable": False, "current_score": None if c is None else c.score,
                           "current_standard": None if c is None else c.standard, "delta": None,
                           "not_comparable": None, "verdict": None}
    if b is None or c is None:
        out["not_comparable"] = "readiness unavailable"
    elif b.standard != c.standard:
        out["not_comparable"] = "standard changed"
    elif b.measurement_profile is None or c.measurement_profile is None:
        out["not_comparable"] = "measurement profile unavailable"
    elif b.measurement_profile != c.measurement_profile:
        out["not_comparable"] = "measurement profile changed"
    else:
        delta = c.score - b.score
        out.update(comparable=True, delta=delta,
                   verdict="regressed" if delta < 0 else "changed" if delta > 0 else "unchanged")
    return out


def diff_reports(base: ProbeReport, current: ProbeReport) -> ProbeDiff:
    """Diff two reports of the same server.

    Args:
        base: the earlier report. current: the later report.

    Returns:
        The diff (cases in base order, then cases only in current).

    Raises:
        UsageError: the reports name different servers.
    """
    if base.server != current.server:
        raise UsageError("the reports are for different servers")
    current_by_id = {c.id: c for c in current.cases}
    base_ids = {c.id for c in base.cases}
    cases = [CaseDiff(b.id, b.probe, b, current_by_id.get(b.id)) for b in base.cases]
    cases += [CaseDiff(c.id, c.probe, None, c) for c in current.cases if c.id not in base_ids]
    return ProbeDiff(base.server, tuple(cases), _compare_readiness(base, current))


def _junit_case(server: str, c: CaseDiff, fail_on_change: bool) -> JUnitCase:
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


def _junit_readiness(diff: ProbeDiff, fail_on_change: bool) -> JUnitCase | None:
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
    cases = [_junit_case(diff.server, c, fail_on_change) for c in diff.cases]
    readiness = _junit_readiness(diff, fail_on_change)
    cases += [readiness] if readiness is not None else []
    s = diff.summary
    props = (("server", diff.server), *((v, str(s[v])) for v in s))
    return [JUnitSuite(f"{diff.server} diff", tuple(cases), props)]


def _junit(diff: ProbeDiff, options: RenderOptions) -> str:
    return render_junit(diff_junit_suites(diff, fail_on_change=options.fail_on_change),
                        name=f"mcpeval-nb diff {diff.server}")
