"""``run_probes``: one probe run, from the options to the report and its trend point (SPEC 8.2, 7.1).

Order: every usage check (label, battery choice, manifest, selection, mutation gate, target: the run
plan, ``plan.plan_probes``) before any server starts; then the run context is opened once
(``plan.open_run``) and one connection: initialize, the gate catalog, the declared-tool checks; then the
cases in manifest order on that connection.  A case that loses its transport is reported with the
transport reason and the next case reconnects; if reconnecting fails every remaining case gets that
reason.  The gate connection is closed before the readiness battery runs on connections of its own.

Whether the battery runs is decided in one place, the plan (``RunPlan.runs_battery``):
``options.battery`` names it (``"standard"``), and a selected run (``probe`` or ``case_id``) never runs
it.  A full run that produced readiness appends one trend point when ``options.history`` is set
(``history.record_report_trend``'s rule).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import Cancelled, TransportError, UsageError, describe
from ..transport.messages import Catalog, Target
from .cases import CaseResult, ProbeCase
from .context import Link, ProbeOptions, ProgressEvent, RunContext
from .history import record_report_trend
from .kinds import KIND_TABLE, CaseContext, access_refusal, undeclared_words
from .manifest import Manifest
from .plan import RunPlan, Work, open_run, plan_probes
from .readiness.battery import run_battery
from .readiness.model import Readiness
from .report import ProbeReport

__all__ = ["run_plan", "run_probes"]

Progress = Callable[[ProgressEvent], None]


def _errored(case: ProbeCase, reason: str, calls: int = 0) -> CaseResult:
    return CaseResult(id=case.id, probe=case.probe, passed=False, attempts=calls,
                      first_failure=calls or None, reason=reason, tool=case.primary_tool)


def _check_declared(cases: Sequence[ProbeCase], catalog: Catalog) -> None:
    """Every tool a case names is in the gate catalog, and a read-only case names no writer.

    Mutation needs two independent controls (a mutating case with a declared sandbox, and
    ``allow_mutation``), so a case declared ``read_only`` that names a tool the server annotates
    ``readOnlyHint: false`` or ``destructiveHint: true`` is refused before any call, in every kind.
    The reference refuses this only for stepped kinds (workflow); docs/probe.md says so.
    """
    for case in cases:
        stepped = KIND_TABLE[case.probe].steps
        for tool in case.tools:
            refusal = access_refusal(catalog.get(tool), case.access)
            if refusal == "undeclared":
                kind = case.probe if stepped else "probe"
                raise UsageError(f"probe case {case.id}: {kind} tool was not declared by the server: "
                                 f"{undeclared_words(tool, catalog)}")
            if refusal == "writer":
                what = case.probe if stepped else "a read-only case"
                raise UsageError(f"probe case {case.id}: {what} refuses a tool annotated as a writer "
                                 "(declare access mutating with a sandbox, and pass --allow-mutation)")


class _Run:
    """The mutable part of one run: the current connection and the results so far."""

    def __init__(self, ctx: RunContext, cases: Sequence[ProbeCase], progress: Progress | None) -> None:
        self.ctx, self.cases, self.progress = ctx, cases, progress
        self.link = Link(ctx, check=lambda catalog: _check_declared(cases, catalog))
        self.results: list[CaseResult] = []
        self.not_run: list[str] = []

    def emit(self, index: int, case: ProbeCase | None, phase: str, **extra: Any) -> None:
        if self.progress is not None:
            self.progress(ProgressEvent(index=index, total=len(self.cases),
                                        case_id=None if case is None else case.id,
                                        probe=None if case is None else case.probe, phase=phase, **extra))

    def run_case(self, index: int, case: ProbeCase) -> CaseResult:
        session = self.link.open()
        if session is None:
            assert self.link.lost is not None
            return _errored(case, self.link.lost)
        cctx = CaseContext(run=self.ctx, session=session, case=case)
        try:
            result = KIND_TABLE[case.probe].run(cctx)
        except TransportError as exc:
            reason = self.link.fail(exc)
            self.emit(index, case, "diagnostic", reason=reason,
                      diagnostic=f"{case.id} {reason}: {describe(exc)}")
            return _errored(case, reason, cctx.calls)
        if cctx.needs_reconnect or session.closed:
            self.link.close()
        return result

    def run(self) -> None:
        for index, case in enumerate(self.cases):
            if self.ctx.cancel is not None and self.ctx.cancel.is_set():
                self.not_run = [c.id for c in self.cases[index:]]
                break
            self.emit(index, case, "start")
            try:
                result = self.run_case(index, case)
            except Cancelled:
                self.link.close()
                self.not_run = [c.id for c in self.cases[index:]]
                break
            self.results.append(result)
            verdict = "pass" if result.passed else ("error" if result.errored else "fail")
            self.emit(index, case, "done", verdict=verdict, reason=result.reason)
        if self.not_run:
            self.emit(len(self.results), None, "cancelled")
        self.link.close()


def _battery(ctx: RunContext, run: _Run) -> tuple[Readiness | None, str | None]:
    run.emit(len(run.cases), None, "battery-start")
    try:
        readiness = run_battery(ctx)
    except TransportError as exc:
        reason = ctx.reason(exc)
        run.emit(len(run.cases), None, "battery-done", verdict="error", reason=reason,
                 diagnostic=f"readiness {reason}: {describe(exc)}")
        return None, reason
    except Cancelled:
        run.emit(len(run.cases), None, "cancelled")
        return None, None
    run.emit(len(run.cases), None, "battery-done")
    return readiness, None


def _gate(run: _Run) -> None:
    """Open the gate connection (the catalog, the declared-tool checks), then run the cases."""
    try:
        if run.link.open() is None:
            run.emit(0, None, "diagnostic", reason=run.link.lost,
                     diagnostic=f"connect {run.link.lost}: {describe(run.link.error or Exception())}")
    except Cancelled:
        run.not_run = [c.id for c in run.cases]
    if not run.not_run:
        run.run()


def run_plan(plan: RunPlan[ProbeCase], *, progress: Progress | None = None,
             cancel: threading.Event | None = None) -> ProbeReport:
    """Run a probe plan (``plan.plan_probes``): open its run, the cases, the battery, the trend point.

    Args:
        plan: the validated plan. progress / cancel: as ``run_probes`` takes them.

    Returns:
        The report (see ``run_probes``).

    Raises:
        UsageError: a tool the server did not declare, or an undeclared ``skip_tools`` name.
        JournalError, ProfileError: the synthetic journal or the trend point could not be written.
    """
    ctx = open_run(plan, cancel=cancel)
    run = _Run(ctx, plan.work.items, progress)
    _gate(run)
    if run.not_run or not plan.runs_battery:
        readiness, readiness_error = None, None
    elif ctx.catalog is None and run.link.lost is not None:  # the server never answered: reported once
        readiness, readiness_error = None, run.link.lost
    else:
        readiness, readiness_error = _battery(ctx, run)
    report = ProbeReport(server=plan.server, cases=tuple(run.results),
                         manifest_sha256=plan.work.manifest_sha256, readiness=readiness,
                         readiness_error=readiness_error, cancelled=bool(run.not_run),
                         not_run=tuple(run.not_run), protocol=ctx.negotiated)
    if plan.options.history:
        record_report_trend(report, root=plan.options.root)
    return report


def run_probes(target: Target | str | Sequence[str], *,
               manifest: Manifest | str | Path | bytes | Mapping[str, Any] | Work[ProbeCase],
               options: ProbeOptions, progress: Progress | None = None,
               cancel: threading.Event | None = None) -> ProbeReport:
    """Run a manifest against one server: the selected cases, the readiness battery, the trend point.

    Args:
        target: a ``StdioTarget``/``HttpTarget``, a URL string, or a command argv.
        manifest: a validated ``Manifest``, a path, manifest bytes, or a parsed manifest object.
        options: the run's options (label, selection, mutation flag, journal, battery, history).
        progress: called with a ``ProgressEvent`` at each case's start and end (never payload text).
        cancel: when set, the run stops between cases and calls; the remaining cases are not run and
            the report says so (``cancelled``, ``not_run``).

    Returns:
        The report; ``report.exit_code`` gives the SPEC 9.4 code.  With ``options.history`` a full run
        that produced readiness has appended its trend point to ``<root>/store/probes/history.jsonl``.

    Raises:
        UsageError: invalid label, battery, manifest, selection, mutation without ``allow_mutation``,
            target, a tool the server did not declare, or an undeclared ``skip_tools`` name (nothing was
            evaluated beyond the gate handshake).
        JournalError, ProfileError: the synthetic journal or the trend point could not be written.
    """
    plan = plan_probes(target, manifest=manifest, options=options)
    return run_plan(plan, progress=progress, cancel=cancel)
