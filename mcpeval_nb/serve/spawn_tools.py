"""serve's process-launching tools (``--allow-spawn`` only): ``run_probe``, ``scaffold``, ``score`` and
``verify_finding`` (SPEC 13.1, 8.6, 12.4).

Each calls the library function its CLI command calls (``run_probes``, ``scaffold_manifest``,
``score_server``, ``verify_finding``) with serve's fixed policy: never ``allow_mutation``, never remote
HTTP, the normal limits, deadlines and budget.  At most one runs at a time (``SpawnSlot``: a second call
answers busy), under a ``CancelScope`` that the listener sets when it stops, which closes the run's
sessions and so terminates and reaps their server processes.  A manifest argument is parsed in memory
for the run and never written or echoed: results carry case ids, reason labels, hints and numbers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import UsageError
from ..privacy.grammar import valid_tool
from ..probe.context import ProbeOptions
from ..probe.plan import make_target
from ..probe.readiness.battery import BatteryOptions, score_server
from ..probe.report import ProbeReport
from ..probe.runner import run_probes
from ..probe.scaffold import scaffold_manifest
from ..transport.cancel import CancelScope
from ..transport.messages import Target
from ..transport.policy import check_endpoint
from ..triage.verify import verify_finding as verify
from .base import ToolContext, ToolFailure, ToolResult

__all__ = ["BUSY_MESSAGE", "DEFAULT_LABEL", "SpawnSlot", "run_probe", "scaffold", "score", "verify_finding"]

BUSY_MESSAGE = "busy: another spawned run is in progress; try again when it ends"
STOPPING_MESSAGE = "serve is stopping; no new runs start"
DEFAULT_LABEL = "probed"
_TARGET_MESSAGE = "give exactly one of command (a non-empty list of strings) or url"
_URL_MESSAGE = ("url must be a credential-free loopback http(s) endpoint without query or fragment "
                "(serve never contacts a remote endpoint)")


class SpawnSlot:
    """One spawned run at a time, each under a ``CancelScope`` that ``stop`` sets."""

    def __init__(self) -> None:
        self._busy = threading.Lock()
        self._guard = threading.Lock()
        self._scope: CancelScope | None = None
        self._stopped = False

    @contextmanager
    def run(self) -> Iterator[CancelScope]:
        """Hold the slot for one run.

        Raises:
            ToolFailure: a run is in progress (busy), or serve is stopping.
        """
        if not self._busy.acquire(blocking=False):
            raise ToolFailure(BUSY_MESSAGE)
        try:
            with self._guard:
                if self._stopped:
                    raise ToolFailure(STOPPING_MESSAGE)
                scope = self._scope = CancelScope()
            yield scope
        finally:
            with self._guard:
                self._scope = None
            self._busy.release()

    def stop(self) -> None:
        """Refuse new runs and cancel the current one (its sessions close, its children are reaped)."""
        with self._guard:
            self._stopped = True
            scope = self._scope
        if scope is not None:
            scope.set()


def _target(args: dict[str, Any]) -> Target:
    command, url = args.get("command"), args.get("url")
    if (command is None) == (url is None):
        raise UsageError(_TARGET_MESSAGE)
    if url is not None:
        try:
            check_endpoint(url, allow_remote_http=False)
        except UsageError:
            raise UsageError(_URL_MESSAGE) from None
        return make_target(url)
    return make_target([str(part) for part in command or ()])


def _report_text(report: ProbeReport) -> str:
    """``<case>: <reason> — <hint>`` per case that did not pass, or ``all cases passed; readiness n/100``."""
    lines = [f"{c.id}: {c.reason or 'failed'} — {c.hint or 'no hint'}" for c in report.cases if not c.passed]
    if report.readiness_error is not None:
        lines.append(f"readiness: {report.readiness_error}")
    if report.cancelled:
        lines.append(f"cancelled: {len(report.not_run)} case(s) not run")
    if lines:
        return "\n".join(lines)
    score = "unavailable" if report.readiness is None else f"{report.readiness.score}/100"
    return f"all cases passed; readiness {score}"


def _counts(report: ProbeReport) -> dict[str, int]:
    return {"cases": len(report.cases), "passed": sum(c.passed for c in report.cases),
            "exit_code": report.exit_code}


def run_probe(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    """Run a manifest (in memory) and the readiness battery, as ``mcpeval-nb probe`` does."""
    target = _target(args)
    options = ProbeOptions(server=args.get("server_label", DEFAULT_LABEL), root=ctx.root,
                           allow_mutation=False, allow_remote_http=False)
    with ctx.slot.run() as cancel:
        report = run_probes(target, manifest=args["manifest"], options=options, cancel=cancel)
    return ToolResult(_report_text(report), report.to_json(), counts=_counts(report))


def score(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    """The readiness battery alone, as ``mcpeval-nb score`` does (its trend point recorded)."""
    target = _target(args)
    label = args.get("server_label", DEFAULT_LABEL)
    with ctx.slot.run() as cancel:
        report = score_server(target, server=label, options=BatteryOptions(root=ctx.root), cancel=cancel)
    return ToolResult(_report_text(report), report.to_json(), counts=_counts(report))


def scaffold(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    """The manifest ``mcpeval-nb init`` would write, returned instead of written."""
    target = _target(args)
    with ctx.slot.run() as cancel:
        built = scaffold_manifest(target, confirm_read_only=bool(args.get("confirm_read_only", False)),
                                  server=args.get("server_label"), cancel=cancel)
    decisions = [{"tool": tool if valid_tool(tool) else "-", "decision": decision}
                 for tool, decision in built.decisions]
    return ToolResult(built.text().rstrip("\n"), {"manifest": built.manifest, "decisions": decisions},
                      counts={"cases": len(built.cases)})


def verify_finding(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    """One case against the fixed server, moving the finding's lifecycle as ``mcpeval-nb verify`` does."""
    target = _target(args)
    with ctx.slot.run() as cancel:
        result = verify(ctx.root, args["finding_id"], case=args["case"], manifest=args["manifest"],
                        target=target, allow_mutation=False, allow_remote_http=False, cancel=cancel)
    structured = {"finding_id": result.finding_id, "case": result.probe_id, "state": result.state,
                  "consecutive_passes": result.consecutive_passes, "passed": result.passed,
                  "errored": result.errored, "reason": result.reason}
    return ToolResult("\n".join(result.lines()), structured,
                      counts={"passed": int(result.passed), "errored": int(result.errored)})
