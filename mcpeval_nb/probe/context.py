"""What a probe run shares with its cases and with the readiness battery: options, budget, journal.

``RunContext`` is what the cases and the battery (``readiness.battery.run_battery``) run in; it is
opened once per run by ``plan.open_run`` from a validated ``RunPlan``.  It opens fresh connections to the
same target in the plan's protocol era under the run's shared budget and cancel scope, holds the gate
catalog, and checks cancellation; ``Link`` is the current connection of a run that goes case by case (or
call by call).  The battery never journals; cases journal every tool call as a synthetic record
(SPEC 2.7) through ``SyntheticJournal``.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..clock import now_ts
from ..errors import Cancelled, TransportError
from ..journal.append import append_record
from ..limits import MAX_EVAL_REQUESTS, MAX_EVAL_SECONDS
from ..privacy.errorinfo import error_info, tool_error_info
from ..privacy.records import CallRecord
from ..root import RootLike
from ..transport.budget import BUDGET_EXCEEDED, Budget
from ..transport.cancel import watch
from ..transport.era import Negotiated
from ..transport.messages import Catalog, Target, ToolOutcome
from ..transport.session import McpSession
from .eras import DEFAULT_ERA, ERAS

__all__ = [
    "BATTERIES",
    "Link",
    "ProbeOptions",
    "ProgressEvent",
    "RunContext",
    "SyntheticJournal",
]


@dataclass(frozen=True)
class ProgressEvent:
    """One progress step of a probe run; carries labels and numbers only, never payload text.

    Attributes:
        index: 0-based position of the case among the selected cases (``total`` for the battery).
        total: number of selected cases.
        case_id: the case id, or None for run-level events.
        probe: the case's kind, or None.
        phase: ``start``, ``done``, ``diagnostic`` (a case or the first connection lost its transport),
            ``battery-start``, ``battery-done`` or ``cancelled``.
        verdict: ``pass``, ``fail`` or ``error`` once a case is done, else None.
        reason: the case's reason label when it failed or errored.
        diagnostic: for errored cases, ``<case id> <reason>: <transport message>`` (content-free).
    """

    index: int
    total: int
    case_id: str | None
    probe: str | None
    phase: str
    verdict: str | None = None
    reason: str | None = None
    diagnostic: str | None = None


#: The values ``ProbeOptions.battery`` may take: the standard battery, or None for none.
BATTERIES: tuple[str | None, ...] = ("standard", None)


@dataclass(frozen=True, kw_only=True)
class ProbeOptions:
    """How to run a manifest against a server.

    Attributes:
        server: the server label written in the report and the journal.
        probe: run only cases of this kind (``--probe``); a selected run never runs the battery.
        case_id: run only this case (``--case``); also a selected run.
        allow_mutation: the operator's ``--allow-mutation`` (the second half of the double gate).
        allow_remote_http: permit a non-loopback HTTPS endpoint.
        root: capture root for the synthetic journal and the trend history (default ``$MCPEVAL_HOME``).
        journal: journal every tool call as a synthetic record (SPEC 2.7).
        env: environment variables laid over the inherited ones for a stdio server.
        battery: the readiness battery a full run ends with: ``"standard"`` (``mcpeval-standard/2``), or
            None for the manifest only (``--gate-only``).  A battery that loses its transport leaves
            ``readiness_error`` set instead of readiness.
        history: a full run that produced readiness appends one trend point under ``root``
            (``--no-history`` turns it off).
        confirm_read_only: attestation passed through to the battery.
        allow_open_world: let the battery call tools annotated ``openWorldHint: true``.
        skip_tools: tool names the battery must skip.
        max_requests / max_seconds: the shared evaluation budget (SPEC 8.4: 4096 and 300 s).
        protocol: the protocol era (``--protocol``): ``auto`` (negotiate), ``legacy`` or ``2026-07-28``;
            the plan's era (``plan.plan_run``).
    """

    server: str
    probe: str | None = None
    case_id: str | None = None
    allow_mutation: bool = False
    allow_remote_http: bool = False
    root: RootLike = None
    journal: bool = True
    env: Mapping[str, str] | None = field(default=None, repr=False)
    battery: Literal["standard"] | None = "standard"
    protocol: str = DEFAULT_ERA
    history: bool = True
    confirm_read_only: bool = False
    allow_open_world: bool = False
    skip_tools: tuple[str, ...] = ()
    max_requests: int = MAX_EVAL_REQUESTS
    max_seconds: float = MAX_EVAL_SECONDS


class SyntheticJournal:
    """Journals each case's tool calls as ``kind="synthetic"`` call records (SPEC 2.7).

    Args:
        root: the capture root. server: the server label. salt: the root's salt.
        session: the run's raw session value (a fresh uuid4 string; stored only as its opaque token).
    """

    def __init__(self, root: Path, *, server: str, salt: bytes, session: str) -> None:
        self.root = root
        self.server = server
        self._salt = salt
        self._session = session
        self._seq = 0
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        """Records written so far."""
        return self._seq

    def record(self, tool: str, arguments: Any, outcome: ToolOutcome) -> None:
        """Append one synthetic record: args are the raw arguments through the store-side sanitizer only.

        Raises:
            JournalError: the store is not writable (the run cannot complete).
        """
        if outcome.kind == "rpc-error":
            error: dict[str, Any] | None = error_info(outcome.payload or {}, self._salt)
        elif outcome.kind == "tool-error":
            error = tool_error_info(outcome.result, self._salt)
        else:
            error = None
        with self._lock:
            self._seq += 1
            record = CallRecord(
                ts=now_ts(), session=self._session, seq=self._seq, server=self.server, method="tools/call",
                tool=tool, args=arguments, latency_ms=outcome.latency_ms,
                outcome="ok" if outcome.ok else "error", error=error, shim_self_us=0, kind="synthetic")
            append_record(self.root, record)


@dataclass
class RunContext:
    """The state of one open run, shared by its cases and the battery (``plan.open_run`` opens it).

    Attributes:
        target: the server target. options: the run's options. budget: the shared budget.
        timeout: per-request timeout in seconds (the plan's limits), or None for the transport default.
        era: the protocol era choice every connection of the run is opened with (``eras.ERAS``).
        negotiated: the era and version the run's first connection found (kept for every later one).
        catalog: the gate catalog (tools listed at the first connection), or None when it failed.
        server_capabilities: the capabilities the server declared at the first handshake.
        journal: the synthetic journal, or None when journaling is off.
        cancel: set to stop the run between cases and calls.
        session_id: the run's raw uuid4 session value (never printed).
    """

    target: Target
    options: ProbeOptions
    budget: Budget
    timeout: float | None
    era: str = DEFAULT_ERA
    negotiated: Negotiated | None = None
    catalog: Catalog | None = None
    server_capabilities: dict[str, Any] = field(default_factory=dict)
    journal: SyntheticJournal | None = None
    cancel: threading.Event | None = None
    session_id: str = field(default_factory=lambda: str(uuid.uuid4()))

    def check_cancel(self) -> None:
        """Raise ``Cancelled`` when the run's cancel event is set."""
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()

    def reason(self, exc: TransportError) -> str:
        """The reason label a transport failure is reported with (the budget's once it is spent)."""
        return BUDGET_EXCEEDED if self.budget.exhausted else exc.reason

    def connect(self, *, capabilities: dict[str, Any] | None = None, initialize: bool = True,
                timeout: float | None = None) -> McpSession:
        """Open a fresh connection to the target in the run's era, under the shared budget.

        Args:
            capabilities: client capabilities offered in the handshake ({} by default).
            initialize: greet the server in the run's era (negotiated on the run's first connection)
                before returning; False opens the channel only (the negotiation kind greets it itself).
            timeout: per-request timeout (default: the run's).

        Returns:
            The open session (the caller closes it).

        Raises:
            TransportError: the connection or handshake failed (the session is closed).
            ProtocolMismatch: the server does not serve the era the run asked for.
        """
        self.check_cancel()
        era = ERAS[self.era]

        def fresh() -> McpSession:
            opened = era.connect(self.target, timeout=self.timeout if timeout is None else timeout,
                                 budget=self.budget)
            watch(self.cancel, opened)  # a CancelScope closes it (and reaps a stdio child) when set
            return opened

        if not initialize:
            return fresh()
        session = era.open(fresh, capabilities or {}, self.negotiated)
        if self.negotiated is None:
            self.negotiated = session.negotiated
        return session

    def open_gate(self, check: Callable[[Catalog], None] | None = None) -> McpSession:
        """Connect; on the run's first connection also list the tools (the gate catalog, the server's
        capabilities) and pass the catalog to ``check`` (the catalog half of the run's gate).

        Raises:
            TransportError: the connection, handshake or listing failed. UsageError: ``check`` refused
                the catalog. The session is closed in both cases.
        """
        session = self.connect()
        try:
            if self.catalog is None:
                self.catalog = session.list_tools()
                self.server_capabilities = dict(session.server_capabilities)
                if check is not None:
                    check(self.catalog)
        except BaseException:
            session.close()
            raise
        return session


class Link:
    """The current connection of a run that makes its cases or calls one after another.

    It connects on demand (the first time through ``RunContext.open_gate``), is closed after a transport
    failure so that the next use reconnects, and once a connection cannot be made it stays lost: every
    later use gets that reason (``lost``) without another attempt.

    Args:
        ctx: the open run. check: the catalog half of the run's gate (see ``open_gate``).
    """

    def __init__(self, ctx: RunContext, check: Callable[[Catalog], None] | None = None) -> None:
        self.ctx, self.check = ctx, check
        self.session: McpSession | None = None
        self.lost: str | None = None
        self.error: TransportError | None = None

    def open(self) -> McpSession | None:
        """The open session, connecting when there is none; None once the run lost its server.

        Raises:
            UsageError: the gate refused the catalog. Cancelled: the run was cancelled.
        """
        if self.lost is None and self.session is None:
            try:
                self.session = self.ctx.open_gate(self.check)
            except TransportError as exc:
                self.lost, self.error = self.ctx.reason(exc), exc
        return None if self.lost is not None else self.session

    def fail(self, exc: TransportError) -> str:
        """Close the session a transport failure left unusable; the reason to report."""
        self.close()
        return self.ctx.reason(exc)

    def close(self) -> None:
        """Close the current session, if any (the next ``open`` reconnects)."""
        if self.session is not None:
            self.session.close()
            self.session = None
