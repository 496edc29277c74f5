"""``probe_result_sizes``: make each listed call once, in order, and measure what it returned.

Order: label, manifest, the manifest half of the mutation gate, target: all before a server starts.
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
from typing import Any

from ..errors import TransportError, UsageError, describe
from ..home import load_salt, resolve_root
from ..privacy.grammar import valid_server
from ..privacy.timestamps import now_ts
from ..probe.context import ProbeOptions, RunContext, SyntheticJournal
from ..probe.runner import make_target
from ..transport.budget import BUDGET_EXCEEDED, Budget
from ..transport.messages import Target, ToolOutcome
from ..transport.session import McpSession
from .gate import check_authority, check_listed
from .history import record_sizes
from .manifest import CallManifest, ListedCall, coerce_manifest
from .measure import CallSize, measure_failure, measure_outcome
from .report import ResultSizes

__all__ = ["SizesOptions", "open_gated", "probe_result_sizes", "run_context"]

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
    """

    server: str
    allow_mutation: bool = False
    allow_remote_http: bool = False
    root: str | Path | None = None
    journal: bool = True
    history: bool = True
    env: Mapping[str, str] | None = field(default=None, repr=False)
    timeout_s: float | None = None


def _reason(ctx: RunContext, exc: TransportError) -> str:
    return BUDGET_EXCEEDED if ctx.budget.exhausted else exc.reason


def run_context(
    target: Target | str | Sequence[str], options: SizesOptions, cancel: threading.Event | None
) -> RunContext:
    """The probe runner's context for a call run: target, shared budget, synthetic journal."""
    probe = ProbeOptions(
        server=options.server,
        allow_mutation=options.allow_mutation,
        allow_remote_http=options.allow_remote_http,
        root=options.root,
        journal=options.journal,
        env=options.env,
        battery=None,
        history=False,
    )
    tgt = make_target(target, allow_remote_http=options.allow_remote_http, env=options.env)
    ctx = RunContext(target=tgt, options=probe, budget=Budget(), timeout=options.timeout_s, cancel=cancel)
    if options.journal:
        root = resolve_root(options.root)
        ctx.journal = SyntheticJournal(
            root, server=options.server, salt=load_salt(root), session=ctx.session_id
        )
    return ctx


def open_gated(ctx: RunContext, calls: Sequence[ListedCall], *, where: str = "calls entry") -> McpSession:
    """Connect, list the tools, and check every call against the catalog before any call is made.

    Raises:
        TransportError: the server could not be reached. UsageError: the catalog half of the gate.
    """
    session = ctx.connect()
    try:
        ctx.catalog = session.list_tools()
        ctx.server_capabilities = dict(session.server_capabilities)
        check_listed(calls, ctx.catalog, where=where)
    except BaseException:
        session.close()
        raise
    return session


class _Calls:
    """The run's mutable part: the current connection, the salt and the rows so far."""

    def __init__(self, ctx: RunContext, salt: bytes, session: McpSession | None, lost: str | None) -> None:
        self.ctx, self.salt, self.session, self.lost = ctx, salt, session, lost
        self.rows: list[CallSize] = []

    def _journal(self, call: ListedCall, outcome: ToolOutcome) -> None:
        if self.ctx.journal is not None:
            self.ctx.journal.record(call.tool, dict(call.args), outcome)

    def one(self, call: ListedCall) -> CallSize:
        if self.lost is None and self.session is None:
            try:
                self.session = self.ctx.connect()
            except TransportError as exc:
                self.lost = _reason(self.ctx, exc)
        if self.lost is not None:
            return measure_failure(call.index, call.tool, call.access, self.lost, "not connected", self.salt)
        assert self.session is not None
        self.ctx.check_cancel()
        try:
            outcome = self.session.call_tool(call.tool, dict(call.args))
        except TransportError as exc:
            self.session.close()
            self.session = None
            reason = _reason(self.ctx, exc)
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
    if not valid_server(options.server):
        raise UsageError("server label is invalid")
    loaded: CallManifest = coerce_manifest(call_manifest, CallManifest)
    check_authority(loaded.calls, allow_mutation=options.allow_mutation)
    ctx = run_context(target, options, cancel)
    salt = load_salt(resolve_root(options.root))
    session: McpSession | None = None
    lost: str | None = None
    unreached: str | None = None
    try:
        session = open_gated(ctx, loaded.calls)
    except TransportError as exc:
        lost, unreached = _reason(ctx, exc), describe(exc)
    run = _Calls(ctx, salt, session, lost)
    try:
        for call in loaded.calls:
            run.rows.append(run.one(call))
            if progress is not None:
                progress(call.index, len(loaded.calls), run.rows[-1])
    finally:
        if run.session is not None:
            run.session.close()
    sizes = ResultSizes(
        server=options.server,
        manifest_sha256=loaded.sha256,
        calls=tuple(run.rows),
        ts=now_ts(),
        reached=lost is None,
        unreached=unreached,
    )
    if options.history:
        record_sizes(sizes, root=options.root)
    return sizes
