"""Kinds that need more than one request in flight or a connection of their own: contention,
cancellation, workflow (SPEC 8.3)."""

from __future__ import annotations

import threading
import time
from typing import Any

from ...errors import TransportError
from ...limits import MAX_SERVER_REQUESTS
from ...transport.budget import BUDGET_EXCEEDED
from ...transport.classify import classify_tool_response
from ...transport.messages import ToolOutcome
from ...transport.session import McpSession
from ..cases import CaseResult
from .base import CaseContext, failed, is_writer, passed
from .expect import check_expectation

__all__ = ["RENDEZVOUS_SECONDS", "cancellation", "contention", "workflow"]

#: Bounded waits of the contention rendezvous.
RENDEZVOUS_SECONDS = 30.0


def _contend(ctx: CaseContext, sessions: list[McpSession]) -> list[ToolOutcome | BaseException | None]:
    f = ctx.fields
    barrier = threading.Barrier(len(sessions), timeout=RENDEZVOUS_SECONDS)
    outcomes: list[ToolOutcome | BaseException | None] = [None] * len(sessions)

    def work(index: int) -> None:
        try:
            barrier.wait()
            outcomes[index] = ctx.call(f["tool"], f["arguments"], session=sessions[index],
                                       max_server_requests=MAX_SERVER_REQUESTS)
        except BaseException as exc:  # handed back to the case thread
            outcomes[index] = exc

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(len(sessions))]
    for thread in threads:
        thread.start()
    limit = time.monotonic() + RENDEZVOUS_SECONDS + sessions[0].timeout + 5
    for thread in threads:
        thread.join(max(0.0, limit - time.monotonic()))
    if any(thread.is_alive() for thread in threads):
        for session in sessions:
            session.close()
        for thread in threads:
            thread.join(5)
    return outcomes


def contention(ctx: CaseContext) -> CaseResult:
    """A second client lists the tool, then both clients call it at the same moment."""
    tool = ctx.fields["tool"]
    second = ctx.run.connect()
    try:
        if second.list_tools().get(tool) is None:
            return failed(ctx.case, "contended-client-failed", 0, 2)
        outcomes = _contend(ctx, [ctx.session, second])
    finally:
        second.close()
    for item in outcomes:
        if isinstance(item, TransportError):
            if item.reason == BUDGET_EXCEEDED:
                raise item  # a spent budget ends the case
        elif isinstance(item, BaseException):
            raise item  # a cancelled run or a local failure (the journal) is not the server's verdict
    if not isinstance(outcomes[0], ToolOutcome):
        ctx.needs_reconnect = True
    if not all(isinstance(item, ToolOutcome) and item.ok for item in outcomes):
        # which of two simultaneous calls loses is a race: the failure is the concurrent pair, attempt 2
        return failed(ctx.case, "contended-client-failed", 2, 2)
    return passed(ctx.case, 2)


def cancellation(ctx: CaseContext) -> CaseResult:
    """A preflight call, then a call cancelled at once; honored means silence or -32800 within the grace."""
    f = ctx.fields
    if not ctx.call(f["tool"], f["arguments"]).ok:
        return failed(ctx.case, "unexpected-outcome", 1, 1)
    ctx.run.check_cancel()
    pending = ctx.session.start_call(f["tool"], f["arguments"])
    response = ctx.session.cancel(pending, reason=f["reason"], grace_seconds=float(f["grace_seconds"]))
    if response is None:
        return passed(ctx.case, 2)
    latency = int((time.monotonic() - pending.started) * 1000)
    ctx.record(f["tool"], f["arguments"], classify_tool_response(response, latency_ms=latency))
    if response.error is None:
        return failed(ctx.case, "cancellation-ignored", 2, 2)
    if response.error.code == -32800:
        return passed(ctx.case, 2)
    return failed(ctx.case, "cancellation-errored", 2, 2)


def _check_catalog(session: McpSession, steps: list[dict[str, Any]]) -> None:
    catalog = session.list_tools()
    for step in steps:
        entry = catalog.get(step["tool"])
        if entry is None or is_writer(entry):
            raise TransportError("workflow tools changed between connections", reason="transport-error")


def workflow(ctx: CaseContext) -> CaseResult:
    """``repetitions`` x ``steps`` calls on a fresh connection, each checked with its expectation."""
    f = ctx.fields
    steps = f["steps"]
    session = ctx.run.connect()
    try:
        _check_catalog(session, steps)
        number = 0
        for _ in range(f["repetitions"]):
            for step in steps:
                number += 1
                reason = check_expectation(ctx.call(step["tool"], step["arguments"], session=session),
                                           step["expect"])
                if reason is not None:
                    return failed(ctx.case, reason, number, number, call=number)
        return passed(ctx.case, number)
    finally:
        session.close()
