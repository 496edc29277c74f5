"""``run_probes``: one probe run, from the options to the report and its trend point (SPEC 8.2, 7.1).

Order: every usage check (label, battery choice, manifest, selection, mutation gate, target) before any
server starts; then one connection: initialize, the gate catalog, the declared-tool checks; then the
cases in manifest order on that connection.  A case that loses its transport is reported with the
transport reason and the next case reconnects; if reconnecting fails every remaining case gets that
reason.  The gate connection is closed before the readiness battery runs on connections of its own.

Whether the battery runs is decided here only: ``options.battery`` names it (``"standard"``), and a
selected run (``probe`` or ``case_id``) never runs it.  A full run that produced readiness appends one
trend point when ``options.history`` is set (``history.record_report_trend``'s rule).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import Cancelled, TransportError, UsageError, describe
from ..home import load_salt, resolve_root
from ..privacy.grammar import valid_server
from ..transport.budget import BUDGET_EXCEEDED, Budget
from ..transport.messages import HttpTarget, StdioTarget, Target
from ..transport.session import McpSession
from .cases import CaseResult, ProbeCase
from .context import BATTERIES, ProbeOptions, ProgressEvent, RunContext, SyntheticJournal
from .history import record_report_trend
from .kinds import KIND_TABLE, CaseContext, access_refusal, undeclared_words
from .manifest import Manifest, load_manifest, parse_manifest, select_cases
from .readiness.battery import run_battery
from .readiness.model import Readiness
from .report import ProbeReport

__all__ = ["make_target", "run_probes"]

Progress = Callable[[ProgressEvent], None]


def make_target(target: Target | str | Sequence[str], *, allow_remote_http: bool = False,
                env: Mapping[str, str] | None = None) -> Target:
    """Normalise a target: a URL string becomes an ``HttpTarget``, an argv sequence a ``StdioTarget``.

    Raises:
        UsageError: an empty command or a non-HTTP string.
    """
    if isinstance(target, StdioTarget | HttpTarget):
        return target
    if isinstance(target, str):
        if not target.startswith(("http://", "https://")):
            raise UsageError("a target string must be an http:// or https:// URL; pass a command as a list")
        return HttpTarget(target, allow_remote_http=allow_remote_http)
    argv = tuple(str(part) for part in target)
    if not argv:
        raise UsageError("an HTTP endpoint or stdio command is required")
    return StdioTarget(argv, env=env)


def _manifest(manifest: Manifest | str | Path | bytes | Mapping[str, Any]) -> Manifest:
    if isinstance(manifest, Manifest):
        return manifest
    if isinstance(manifest, str | Path):
        return load_manifest(manifest)
    return parse_manifest(manifest)


def _errored(case: ProbeCase, reason: str, calls: int = 0) -> CaseResult:
    return CaseResult(id=case.id, probe=case.probe, passed=False, attempts=calls,
                      first_failure=calls or None, reason=reason, tool=case.primary_tool)


def _reason(ctx: RunContext, exc: TransportError) -> str:
    return BUDGET_EXCEEDED if ctx.budget.exhausted else exc.reason


def _open(ctx: RunContext) -> McpSession:
    session = ctx.connect()
    try:
        if ctx.catalog is None:
            ctx.catalog = session.list_tools()
            ctx.server_capabilities = dict(session.server_capabilities)
    except BaseException:
        session.close()
        raise
    return session


def _check_declared(cases: Sequence[ProbeCase], ctx: RunContext) -> None:
    """Every tool a case names is in the gate catalog, and a read-only case names no writer.

    Mutation needs two independent controls (a mutating case with a declared sandbox, and
    ``allow_mutation``), so a case declared ``read_only`` that names a tool the server annotates
    ``readOnlyHint: false`` or ``destructiveHint: true`` is refused before any call, in every kind.
    The reference refuses this only for stepped kinds (workflow); docs/probe.md says so.
    """
    assert ctx.catalog is not None
    for case in cases:
        stepped = KIND_TABLE[case.probe].steps
        for tool in case.tools:
            refusal = access_refusal(ctx.catalog.get(tool), case.access)
            if refusal == "undeclared":
                kind = case.probe if stepped else "probe"
                raise UsageError(f"probe case {case.id}: {kind} tool was not declared by the server: "
                                 f"{undeclared_words(tool, ctx.catalog)}")
            if refusal == "writer":
                what = case.probe if stepped else "a read-only case"
                raise UsageError(f"probe case {case.id}: {what} refuses a tool annotated as a writer "
                                 "(declare access mutating with a sandbox, and pass --allow-mutation)")


class _Run:
    """The mutable part of one run: the current connection and the results so far."""

    def __init__(self, ctx: RunContext, cases: Sequence[ProbeCase], progress: Progress | None) -> None:
        self.ctx, self.cases, self.progress = ctx, cases, progress
        self.session: McpSession | None = None
        self.results: list[CaseResult] = []
        self.not_run: list[str] = []
        self.lost: str | None = None

    def emit(self, index: int, case: ProbeCase | None, phase: str, **extra: Any) -> None:
        if self.progress is not None:
            self.progress(ProgressEvent(index=index, total=len(self.cases),
                                        case_id=None if case is None else case.id,
                                        probe=None if case is None else case.probe, phase=phase, **extra))

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None

    def run_case(self, index: int, case: ProbeCase) -> CaseResult:
        if self.lost is None and self.session is None:
            try:
                self.session = _open(self.ctx)
            except TransportError as exc:
                self.lost = _reason(self.ctx, exc)
        if self.lost is not None:
            return _errored(case, self.lost)
        assert self.session is not None
        cctx = CaseContext(run=self.ctx, session=self.session, case=case)
        try:
            result = KIND_TABLE[case.probe].run(cctx)
        except TransportError as exc:
            self.close()
            reason = _reason(self.ctx, exc)
            self.emit(index, case, "diagnostic", reason=reason,
                      diagnostic=f"{case.id} {reason}: {describe(exc)}")
            return _errored(case, reason, cctx.calls)
        if cctx.needs_reconnect or self.session.closed:
            self.close()
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
                self.close()
                self.not_run = [c.id for c in self.cases[index:]]
                break
            self.results.append(result)
            verdict = "pass" if result.passed else ("error" if result.errored else "fail")
            self.emit(index, case, "done", verdict=verdict, reason=result.reason)
        if self.not_run:
            self.emit(len(self.results), None, "cancelled")
        self.close()


def _battery(ctx: RunContext, run: _Run) -> tuple[Readiness | None, str | None]:
    run.emit(len(run.cases), None, "battery-start")
    try:
        readiness = run_battery(ctx)
    except TransportError as exc:
        reason = _reason(ctx, exc)
        run.emit(len(run.cases), None, "battery-done", verdict="error", reason=reason,
                 diagnostic=f"readiness {reason}: {describe(exc)}")
        return None, reason
    except Cancelled:
        run.emit(len(run.cases), None, "cancelled")
        return None, None
    run.emit(len(run.cases), None, "battery-done")
    return readiness, None


def _context(target: Target | str | Sequence[str], loaded: Manifest, options: ProbeOptions,
             cancel: threading.Event | None) -> RunContext:
    tgt = make_target(target, allow_remote_http=options.allow_remote_http, env=options.env)
    ctx = RunContext(target=tgt, options=options, timeout=None if loaded.timeout_ms is None
                     else loaded.timeout_ms / 1000,
                     budget=Budget(max_requests=options.max_requests, max_seconds=options.max_seconds),
                     cancel=cancel)
    if options.journal:
        root = resolve_root(options.root)
        ctx.journal = SyntheticJournal(root, server=options.server, salt=load_salt(root),
                                       session=ctx.session_id)
    return ctx


def _gate(run: _Run) -> None:
    """Open the gate connection, check the declared tools, then run the cases."""
    try:
        run.session = _open(run.ctx)
    except TransportError as exc:
        run.lost = _reason(run.ctx, exc)
        run.emit(0, None, "diagnostic", reason=run.lost, diagnostic=f"connect {run.lost}: {describe(exc)}")
    except Cancelled:
        run.not_run = [c.id for c in run.cases]
    if run.ctx.catalog is not None:
        try:
            _check_declared(run.cases, run.ctx)
        except UsageError:
            run.close()
            raise
    if not run.not_run:
        run.run()


def _full_run(options: ProbeOptions) -> bool:
    """A run of the whole manifest (no ``probe`` or ``case_id`` selection) with a battery named."""
    return options.battery is not None and options.probe is None and options.case_id is None


def run_probes(target: Target | str | Sequence[str], *,
               manifest: Manifest | str | Path | bytes | Mapping[str, Any], options: ProbeOptions,
               progress: Progress | None = None, cancel: threading.Event | None = None) -> ProbeReport:
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
    if not valid_server(options.server):
        raise UsageError("server label is invalid")
    if options.battery not in BATTERIES:
        raise UsageError('battery must be "standard" or None')
    loaded = _manifest(manifest)
    cases = select_cases(loaded, probe=options.probe, case_id=options.case_id,
                         allow_mutation=options.allow_mutation)
    ctx = _context(target, loaded, options, cancel)
    run = _Run(ctx, cases, progress)
    _gate(run)
    if run.not_run or not _full_run(options):
        readiness, readiness_error = None, None
    elif ctx.catalog is None and run.lost is not None:  # the server never answered: reported once
        readiness, readiness_error = None, run.lost
    else:
        readiness, readiness_error = _battery(ctx, run)
    report = ProbeReport(server=options.server, cases=tuple(run.results), manifest_sha256=loaded.sha256,
                         readiness=readiness, readiness_error=readiness_error, cancelled=bool(run.not_run),
                         not_run=tuple(run.not_run))
    if options.history:
        record_report_trend(report, root=options.root)
    return report
