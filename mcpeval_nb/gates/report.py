"""``GateReport``: the verdict of ``mcpeval-nb gate`` per check, in text, markdown, JSON and JUnit.

A check is one limit of one (server, tool) — ``p95_ms``, ``p99_ms`` or ``max_error_rate`` — or the
one ``no_new_templates`` rule.  Its status is ``pass``, ``fail``, ``warn`` (the error rate's Wilson
interval straddles the budget: too few calls to tell) or ``not-judged`` (fewer calls than
``min_calls``).  Only labels (server, tool, template ids), numbers and fixed hints are printed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..htmltext import lines_html
from ..junit import JUnitCase, JUnitSuite, render_junit
from ..probe.render import Format, FormatSet, json_text, lines_text, render
from ..tables.load import SkippedLine

__all__ = ["GATE_FORMATS", "GATE_REASONS", "GATE_SCHEMA", "GateCheck", "GateReport", "NewTemplate"]

GATE_SCHEMA = "mcpeval-nb.gate-report/v1"
#: Reason label -> remediation hint, for checks that did not pass.
GATE_REASONS = {
    "gate-p95-exceeded": "The 95th latency percentile of real traffic is over its budget: profile the "
                         "tool's slow path or raise p95_ms if the budget was too tight.",
    "gate-p99-exceeded": "The 99th latency percentile of real traffic is over its budget: look for the "
                         "tail (timeouts, retries, cold caches) or raise p99_ms.",
    "gate-error-rate-exceeded": "Even the lower bound of the error rate's 95% interval is over "
                                "max_error_rate: the tool fails more often than budgeted; see `mcpeval-nb "
                                "summary` for its error templates.",
    "gate-error-rate-uncertain": "The error rate's 95% interval straddles max_error_rate: not enough calls "
                                 "to tell; a warning, not a failure.",
    "gate-too-few-calls": "Fewer calls than min_calls: the tool is not judged until it has more traffic.",
    "gate-new-error-template": "Error templates that the baseline never saw: a new failure mode; review "
                               "them with `mcpeval-nb summary` before accepting the baseline.",
    "gate-catalog-unapproved": "The server's tool catalog changed since it was pinned, has no pin, or "
                               "carries a signal flag its pin does not hold: review it with `mcpeval-nb "
                               "catalog`, then `mcpeval-nb catalog pin` to approve it.",
}
_STATUS_REASON = {("p95_ms", "fail"): "gate-p95-exceeded", ("p99_ms", "fail"): "gate-p99-exceeded",
                  ("max_error_rate", "fail"): "gate-error-rate-exceeded",
                  ("max_error_rate", "warn"): "gate-error-rate-uncertain",
                  ("no_new_templates", "fail"): "gate-new-error-template",
                  ("catalog", "fail"): "gate-catalog-unapproved"}


@dataclass(frozen=True)
class NewTemplate:
    """An error template absent from the baseline: its salted id, how often, and which tools hit it."""

    template_id: str
    count: int
    tools: tuple[str, ...]


@dataclass(frozen=True)
class GateCheck:
    """One limit judged against the traffic of one (server, tool).

    Attributes:
        server / tool: the traffic judged (``*`` for the template rule).
        limit_name: ``p95_ms``, ``p99_ms``, ``max_error_rate`` or ``no_new_templates``.
        status: ``pass``, ``fail``, ``warn`` or ``not-judged``.
        limit: the budget. observed: the measured value (None when not judged).
        calls: calls judged. low / high: the error rate's Wilson 95% interval.
        budget: the index of the budgets entry that set the limit (None for the template rule).
        new_templates: the templates the baseline did not have (template rule only).
        details: the catalog rule's findings (``drift renamed remove_item``, ``flag hidden-text on t``).
    """

    server: str
    tool: str
    limit_name: str
    status: str
    limit: float
    observed: float | None
    calls: int
    low: float | None = None
    high: float | None = None
    budget: int | None = None
    new_templates: tuple[NewTemplate, ...] = ()
    details: tuple[str, ...] = ()

    @property
    def reason(self) -> str | None:
        """The reason label of a check that did not pass, else None."""
        if self.status == "not-judged":
            return "gate-too-few-calls"
        return _STATUS_REASON.get((self.limit_name, self.status))

    @property
    def hint(self) -> str | None:
        """The remediation hint of the reason, or None."""
        return None if self.reason is None else GATE_REASONS[self.reason]

    def numbers(self) -> str:
        """``calls=40 observed=480 limit=500`` and, for error rates, ``low=... high=...``."""
        if self.limit_name == "no_new_templates":
            return f"new={len(self.new_templates)} limit=0"
        if self.limit_name == "catalog":
            return f"findings={len(self.details)} limit=0"
        observed = "-" if self.observed is None else _num(self.observed)
        text = f"calls={self.calls} observed={observed} limit={_num(self.limit)}"
        if self.low is not None and self.high is not None:
            text += f" low={self.low:.4f} high={self.high:.4f}"
        return text

    def to_json(self) -> dict[str, Any]:
        """Sorted keys as the document prints them."""
        return {"budget": self.budget, "calls": self.calls, "details": list(self.details), "high": self.high,
                "hint": self.hint,
                "limit": self.limit, "limit_name": self.limit_name, "low": self.low,
                "new_templates": [{"count": t.count, "template_id": t.template_id, "tools": list(t.tools)}
                                  for t in self.new_templates],
                "observed": self.observed, "reason": self.reason, "server": self.server,
                "status": self.status, "tool": self.tool}


def _num(value: float) -> str:
    return f"{value:.4f}" if 0 < abs(value) < 1 else f"{value:g}"


@dataclass(frozen=True)
class GateReport:
    """Every check, in (server, tool, limit) order, then the template rule; and what was judged."""

    #: The gate report's format table.
    FORMATS: ClassVar[FormatSet[GateReport]] = FormatSet(
        (Format("text", lambda r, _: r.render_text()), Format("markdown", lambda r, _: r.render_markdown()),
         Format("json", lambda r, _: json_text(r.to_json())),
         Format("junit", lambda r, _: render_junit(r.junit_suites(), name="mcpeval-nb gate"))),
        unknown="unknown gate format; use text, markdown, json or junit")

    checks: tuple[GateCheck, ...]
    calls: int
    since: str | None = None
    baseline: str | None = None
    #: Journal lines the store read went past (not usable records; ``SkippedLine``), not judged.
    skipped_lines: tuple[SkippedLine, ...] = ()

    def count(self, status: str) -> int:
        """How many checks have ``status``."""
        return sum(c.status == status for c in self.checks)

    @property
    def passed(self) -> bool:
        """No check failed (warnings and not-judged checks do not fail the gate)."""
        return self.count("fail") == 0

    @property
    def exit_code(self) -> int:
        """0 when no check failed, else 1."""
        return 0 if self.passed else 1

    def summary_words(self) -> str:
        """``passed=3 failed=1 warned=1 not_judged=2``."""
        return (f"passed={self.count('pass')} failed={self.count('fail')} warned={self.count('warn')} "
                f"not_judged={self.count('not-judged')}")

    def to_json(self) -> dict[str, Any]:
        """The ``mcpeval-nb.gate-report/v1`` object."""
        return {"baseline": self.baseline is not None, "calls": self.calls,
                "checks": [c.to_json() for c in self.checks], "passed": self.passed, "schema": GATE_SCHEMA,
                "since": self.since, "summary": {s.replace("-", "_"): self.count(s)
                                                 for s in ("pass", "fail", "warn", "not-judged")}}

    def render(self, fmt: str = "text") -> str:
        """``text``, ``markdown``, ``json`` or ``junit``; every format ends with a newline.

        Raises:
            UsageError: an unknown format.
        """
        return render(self, fmt)

    def _scope(self) -> str:
        return f"{self.calls} calls" + (f" since {self.since}" if self.since else "")

    def render_text(self) -> str:
        """One line per check (``hint:`` and new templates under it), then the summary line."""
        lines: list[str] = []
        for c in self.checks:
            lines.append(f"{c.server} {c.tool} {c.limit_name} {c.status} {c.numbers()}")
            lines += [f"  new template {t.template_id} count={t.count} tools={','.join(t.tools) or '-'}"
                      for t in c.new_templates]
            lines += [f"  {detail}" for detail in c.details]
            if c.hint is not None:
                lines.append(f"  hint: {c.hint}")
        lines.append(f"gate {'passed' if self.passed else 'failed'} {self.summary_words()} "
                     f"({self._scope()})")
        return lines_text(lines)

    def render_markdown(self) -> str:
        """The text output's content in its order: a table of checks, new templates, hints, summary."""
        out = ["# Traffic gate", "", "| server | tool | limit | status | calls | observed | budget |",
               "| --- | --- | --- | --- | --- | --- | --- |"]
        for c in self.checks:
            observed = "-" if c.observed is None else _num(c.observed)
            out.append(f"| {c.server} | {c.tool} | {c.limit_name} | {c.status} | {c.calls} | {observed} | "
                       f"{_num(c.limit)} |")
        new = [t for c in self.checks for t in c.new_templates]
        if new:
            out += ["", "## New error templates", ""]
            out += [f"- `{t.template_id}`: {t.count} call(s), tools {', '.join(t.tools) or '-'}" for t in new]
        hints = {c.reason: c.hint for c in self.checks if c.reason is not None}
        if hints:
            out += ["", "## Hints", ""] + [f"- **{reason}**: {hint}" for reason, hint in hints.items()]
        out += ["", f"**Gate:** {'passed' if self.passed else 'failed'} ({self.summary_words()}; "
                    f"{self._scope()})"]
        return "\n".join(out) + "\n"

    def junit_suites(self) -> list[JUnitSuite]:
        """One suite ``gate``: a test case per check, named ``<server> <tool> <limit>``."""
        cases = []
        for c in self.checks:
            name, classname = f"{c.server} {c.tool} {c.limit_name}", f"mcpeval.gate.{c.server}"
            body = "\n".join(x for x in (c.hint, c.numbers(), *(
                f"new template {t.template_id} count={t.count}" for t in c.new_templates), *c.details) if x)
            if c.status in ("pass", "warn"):  # a warning passes: its interval cannot tell yet
                note = None if c.status == "pass" else f"warning {c.reason}: {c.hint}\n{c.numbers()}"
                cases.append(JUnitCase(name, classname, output=note))
            elif c.status == "not-judged":
                cases.append(JUnitCase(name, classname, "skipped", message=f"not judged: {c.numbers()}"))
            else:
                cases.append(JUnitCase(name, classname, "failure", message=c.reason, type=c.reason,
                                       text=body))
        props = (("calls", str(self.calls)), ("since", self.since or "-"),
                 ("warned", str(self.count("warn"))))
        return [JUnitSuite("gate", tuple(cases), props)]

    def _repr_html_(self) -> str:
        """How a notebook cell shows it (the same lines as the CLI prints)."""
        return lines_html("traffic gate", self.render_text().splitlines())


#: What ``GateReport.render`` writes, in ``--format`` order.
GATE_FORMATS = GateReport.FORMATS.names
