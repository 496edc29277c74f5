"""``probe_result_sizes``: make each listed call once, in order, and measure what it returned.

Order: label, manifest, the manifest half of the mutation gate, target (the run plan, ``plan_calls``): all
before a server starts.
Then one connection: initialize, ``tools/list``, the catalog half of the gate (every listed tool declared,
no read-only call of a writer): still before any call.  Then the calls, each once, in manifest order;
nothing is inferred.  An erroring call is an error row and never aborts the rest; a call that loses the
transport is an error row, and the next call reconnects (a reconnect that fails gives every remaining
call that reason).  Every call is journaled as one synthetic record through the normal journal path, and
the run appends one point to ``store/probes/sizes.jsonl``.  Informational: no score, gate or trend point.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ..clock import now_ts
from ..errors import TransportError, describe
from ..probe.context import Link, ProbeOptions, RunContext
from ..probe.eras import DEFAULT_ERA
from ..probe.plan import RunPlan, Work, open_run, plan_run
from ..root import Root, RootLike
from ..transport.messages import Catalog, Target, ToolOutcome
from .gate import check_authority, check_listed
from .history import record_sizes
from .manifest import CallManifest, ListedCall, coerce_manifest
from .measure import CallSize, measure_failure, measure_outcome
from .report import ResultSizes

__all__ = ["CallRun", "SizesOptions", "plan_calls", "probe_result_sizes"]

W = TypeVar("W")

#: ``progress(index, total, row)`` after each call (row holds labels and numbers only).
SizesProgress = Callable[[int, int, CallSize], None]


@dataclass(frozen=True, kw_only=True)
class SizesOptions:
    """How to run a call manifest (``probe_result_sizes``) or a capture manifest (``capture_phases``).

    Attributes:
        server: the label for the report, the journal and the history.
        allow_mutation: the operator's half of the mutation double gate.
        allow_remote_http: permit a non-loopback HTTPS endpoint.
        root: the capture root (default ``$MCPEVAL_HOME``).
        journal: journal each call as a synthetic record.
        history: append the run's sizes point (``probe_result_sizes`` only).
        env: variables laid over the inherited environment of a stdio server.
        timeout_s: per-call deadline (default: the transport's, 30 s stdio / 5 s HTTP).
        protocol: the protocol era (``--protocol``: ``auto``, ``legacy`` or ``2026-07-28``).
    """

    server: str
    allow_mutation: bool = False
    allow_remote_http: bool = False
    root: RootLike = None
    journal: bool = True
    history: bool = True
    env: Mapping[str, str] | None = field(default=None, repr=False)
    timeout_s: float | None = None
    protocol: str = DEFAULT_ERA


def plan_calls(target: Target | str | Sequence[str], options: SizesOptions,
               work: Callable[[], Work[W]]) -> RunPlan[W]:
    """The run plan of a run of listed calls (``sizes``, ``capture-phases``): ``probe.plan.plan_run`` with
    the options of a call run (no battery, no trend point) and the manifest's ``work``."""
    probe = ProbeOptions(
        server=options.server,
        allow_mutation=options.allow_mutation,
        allow_remote_http=options.allow_remote_http,
        root=options.root,
        journal=options.journal,
        env=options.env,
        battery=None,
        history=False,
        protocol=options.protocol,
    )
    return plan_run(target, options=probe, work=work, timeout_s=options.timeout_s)


class CallRun:
    """A run of listed calls, one after another (``sizes``, ``replay``): the current connection, the salt
    and the rows so far.  Each call is made through the run's ``Link`` and journaled as a synthetic record.

    Args:
        ctx: the open run (``open_run``). salt: the root's salt (template ids of error texts).
        check: the catalog half of the run's gate, given the tools listed at the first connection.
    """

    def __init__(self, ctx: RunContext, salt: bytes, check: Callable[[Catalog], None] | None) -> None:
        self.ctx, self.salt = ctx, salt
        self.link = Link(ctx, check=check)
        self.rows: list[CallSize] = []

    def _journal(self, call: ListedCall, outcome: ToolOutcome) -> None:
        if self.ctx.journal is not None:
            self.ctx.journal.record(call.tool, dict(call.args), outcome)

    def one(self, call: ListedCall) -> CallSize:
        """Make one call (connecting when needed) and measure it; a lost transport is a row, and the next
        call reconnects.

        Raises:
            Cancelled: the run was cancelled. UsageError: the catalog check refused the first listing.
        """
        session = self.link.open()
        if session is None:
            assert self.link.lost is not None
            return measure_failure(call.index, call.tool, call.access, self.link.lost, "not connected",
                                   self.salt)
        self.ctx.check_cancel()
        try:
            outcome = session.call_tool(call.tool, dict(call.args))
        except TransportError as exc:
            reason = self.link.fail(exc)
            self._journal(call, ToolOutcome("rpc-error", None, None, {"code": reason}, 0))
            return measure_failure(call.index, call.tool, call.access, reason, str(exc), self.salt)
        self._journal(call, outcome)
        return measure_outcome(call.index, call.tool, call.access, outcome, self.salt)


def probe_result_sizes(
    target: Target | str | Sequence[str],
    *,
    call_manifest: CallManifest | str | Path | bytes | Mapping[str, Any],
    options: SizesOptions,
    progress: SizesProgress | None = None,
    cancel: threading.Event | None = None,
) -> ResultSizes:
    """Make each call of a call manifest once, in order, and measure each result.

    Args:
        target: a ``StdioTarget``/``HttpTarget``, a URL string, or a command argv.
        call_manifest: a validated ``CallManifest``, a YAML/JSON file path, its bytes, or a mapping.
        options: label, mutation flag, root, journal and history switches.
        progress: called after each call with ``(index, total, row)``.
        cancel: when set, the run stops between calls (``Cancelled`` propagates; nothing is recorded).

    Returns:
        The rows, one per listed call; with ``options.history`` its point was appended to
        ``<root>/store/probes/sizes.jsonl``.

    Raises:
        UsageError: an invalid label, manifest (``ManifestError``), target, a mutating call without
            ``allow_mutation``, an unlisted tool or a read-only call of a writer (nothing was called).
        JournalError: the journal or the history could not be written.
    """
    def work() -> Work[ListedCall]:
        loaded: CallManifest = coerce_manifest(call_manifest, CallManifest)
        check_authority(loaded.calls, allow_mutation=options.allow_mutation)
        return Work(items=loaded.calls, manifest_sha256=loaded.sha256)

    plan = plan_calls(target, options, work)
    ctx = open_run(plan, cancel=cancel)
    calls = plan.work.items
    run = CallRun(ctx, Root.of(options.root).salt(), lambda catalog: check_listed(calls, catalog))
    try:
        reached = run.link.open() is not None  # the gate: connect, list the tools, check every call
        for call in plan.work.items:
            run.rows.append(run.one(call))
            if progress is not None:
                progress(call.index, len(plan.work.items), run.rows[-1])
    finally:
        run.link.close()
    sizes = ResultSizes(
        server=options.server,
        manifest_sha256=str(plan.work.manifest_sha256),
        calls=tuple(run.rows),
        ts=now_ts(),
        reached=reached,
        unreached=None if reached or run.link.error is None else describe(run.link.error),
    )
    if options.history:
        record_sizes(sizes, root=options.root)
    return sizes
