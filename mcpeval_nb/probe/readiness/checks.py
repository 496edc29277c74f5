"""The standard battery's shared cases and protocol checks (SPEC 8.4), reduced to labels.

Contention, pagination, surface listing and negotiation reuse the probe kinds on a run context with
journaling switched off (the battery never journals); each result is reduced to a pass/fail flag or a
readiness reason.  A transport failure inside a protocol check costs that check
(``protocol-call-failed``) and the next check reconnects; an exhausted budget ends the battery.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

from ...errors import TransportError
from ...limits import BATTERY_PAYLOAD_BYTES, MAX_SERVER_REQUESTS, MAX_TOOL_PAGES
from ...transport.budget import BUDGET_EXCEEDED
from ...transport.modern import Observed
from ...transport.session import McpSession
from ..cases import CaseResult, ProbeCase
from ..context import RunContext
from ..kinds import CaseContext
from ..kinds.catalog import pagination, protocol_negotiation, surface_listing
from ..kinds.sessions import contention

__all__ = ["BOGUS_VERSION", "UNKNOWN_METHOD", "UNKNOWN_TOOL", "Connection", "protocol_checks",
           "run_contention", "run_payload", "run_protocol_checks", "shared_checks"]

BOGUS_VERSION = "2000-01-01"
UNKNOWN_METHOD = "mcpeval/unknown"
UNKNOWN_TOOL = "mcpeval-unknown-tool"

_NEGOTIATION = {"negotiation-echoed-unknown": "protocol-negotiation-echoed-unknown",
                "negotiation-invalid-version": "protocol-negotiation-invalid-version",
                "negotiation-inconsistent-support": "protocol-negotiation-inconsistent-support"}


class Connection:
    """The battery's current connection: opened on demand, dropped after a transport failure.

    It also sums what its modern sessions observed (``transport.modern.Observed``) for the
    ``mcpeval-modern/1`` checks.
    """

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self._session: McpSession | None = None
        self._seen = Observed()
        self._caps: dict[str, Any] = {}

    def declare(self, capabilities: dict[str, Any]) -> None:
        """Send ``capabilities`` with every later modern request of the battery (the tasks extension)."""
        self._caps = dict(capabilities)
        if self._session is not None and not self._session.closed:
            self._session.declare(self._caps)

    def absorb(self, session: McpSession) -> None:
        """Close another session of the battery and add what it observed."""
        session.close()
        self._seen.add(session.observed)

    def observed(self) -> Observed:
        """What every session of the battery observed so far (the current one included)."""
        total = Observed()
        total.add(self._seen)
        if self._session is not None:
            total.add(self._session.observed)
        return total

    @property
    def modern(self) -> bool:
        """The battery's connections speak the 2026-07-28 era."""
        return self.session.modern

    def alive(self, *, timeout: float | None = None) -> None:
        """One request any server must answer: ``ping`` (legacy), a ``tools/list`` page (modern, which
        removed ``ping``).

        Raises:
            TransportError: no answer.
        """
        session = self.session
        if session.modern:
            session.request("tools/list", timeout=timeout)
        else:
            session.ping(timeout=timeout)

    @property
    def session(self) -> McpSession:
        """An open, initialized session (reconnects when the last one was lost).

        Raises:
            TransportError: the connection or handshake failed.
        """
        if self._session is None or self._session.closed:
            self._session = self.ctx.connect(capabilities=self._caps or None)
        return self._session

    def drop(self) -> None:
        """Close the current session (a transport failure left it unusable)."""
        if self._session is not None:
            self.absorb(self._session)
            self._session = None

    def lost(self, exc: TransportError) -> None:
        """Handle a transport failure: re-raise an exhausted budget, else drop the session."""
        if exc.reason == BUDGET_EXCEEDED or self.ctx.budget.exhausted:
            raise exc
        self.drop()


def _case(probe: str, **fields: Any) -> ProbeCase:
    return ProbeCase(id=f"battery-{probe}", probe=probe, access="read_only", sandbox=None, index=0,
                     fields=fields)


def _run_kind(conn: Connection, kind: Callable[[CaseContext], CaseResult], case: ProbeCase) -> CaseResult:
    quiet = dataclasses.replace(conn.ctx, journal=None)
    cctx = CaseContext(run=quiet, session=conn.session, case=case)
    result = kind(cctx)
    if cctx.needs_reconnect:
        conn.drop()
    return result


def run_contention(conn: Connection, tool: str, arguments: dict[str, Any]) -> bool:
    """Two clients call ``tool`` at the same moment; True when both succeed."""
    try:
        return _run_kind(conn, contention, _case("contention", tool=tool, arguments=arguments)).passed
    except TransportError as exc:
        conn.lost(exc)
        return False


def run_payload(conn: Connection, tool: str, arguments: dict[str, Any], field: str, *,
                timeout: float) -> bool:
    """One call with ``field`` set to 1,000,000 bytes; False only when the transport broke."""
    big = copy.deepcopy(arguments)
    big[field] = "a" * BATTERY_PAYLOAD_BYTES
    conn.ctx.check_cancel()
    try:
        conn.session.call_tool(tool, big, timeout=timeout, max_server_requests=MAX_SERVER_REQUESTS)
    except TransportError as exc:
        conn.lost(exc)
        return False
    return True


def _unknown_method(conn: Connection) -> str | None:
    response = conn.session.request(UNKNOWN_METHOD)
    ok = response.error is not None and response.error.code == -32601
    return None if ok else "protocol-unknown-method-answered"


def _ping(conn: Connection) -> str | None:
    return None if isinstance(conn.session.ping().result, dict) else "protocol-ping-failed"


def _unknown_tool(conn: Connection) -> str | None:
    outcome = conn.session.call_tool(UNKNOWN_TOOL, {}, max_server_requests=MAX_SERVER_REQUESTS)
    return "protocol-unknown-tool-accepted" if outcome.ok else None


def _pagination(conn: Connection) -> str | None:
    result = _run_kind(conn, pagination, _case("pagination", max_pages=MAX_TOOL_PAGES))
    return None if result.passed else "protocol-pagination-invalid"


def _surfaces(conn: Connection) -> str | None:
    result = _run_kind(conn, surface_listing, _case("surface-listing", max_pages=MAX_TOOL_PAGES))
    return None if result.passed else "protocol-surface-invalid"


def _negotiation(conn: Connection) -> str | None:
    result = _run_kind(conn, protocol_negotiation, _case("protocol-negotiation", bogus_version=BOGUS_VERSION))
    if result.passed:
        return None
    return _NEGOTIATION.get(result.reason or "", "protocol-negotiation-invalid-version")


Check = tuple[str, Callable[[Connection], str | None]]


def shared_checks(*, surfaces_declared: bool) -> list[Check]:
    """The protocol checks both standards share: unknown method and tool, pagination, surfaces."""
    checks: list[Check] = [("protocol.unknown-method", _unknown_method),
                           ("protocol.unknown-tool", _unknown_tool), ("protocol.pagination", _pagination)]
    if surfaces_declared:
        checks.append(("protocol.surfaces", _surfaces))
    return checks


def protocol_checks(conn: Connection, *, surfaces_declared: bool) -> tuple[tuple[str, str | None], ...]:
    """Run the ``mcpeval-standard/2`` protocol checks in order; (check id, reason or None) for each
    applicable one.

    Raises:
        TransportError: only ``evaluation-budget-exceeded``.
    """
    shared = shared_checks(surfaces_declared=surfaces_declared)
    checks = [shared[0], ("protocol.ping", _ping), *shared[1:], ("protocol.negotiation", _negotiation)]
    return run_protocol_checks(conn, checks)


def run_protocol_checks(conn: Connection, checks: list[Check]) -> tuple[tuple[str, str | None], ...]:
    """Run ``checks`` in order; a transport failure costs that check (``protocol-call-failed``).

    Raises:
        TransportError: only ``evaluation-budget-exceeded``.
    """
    out: list[tuple[str, str | None]] = []
    for check_id, check in checks:
        conn.ctx.check_cancel()
        try:
            out.append((check_id, check(conn)))
        except TransportError as exc:
            conn.lost(exc)
            out.append((check_id, "protocol-call-failed"))
    return tuple(out)
