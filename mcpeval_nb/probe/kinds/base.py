"""The case context kinds run in, and the helpers that build their verdicts."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...privacy.grammar import valid_tool
from ...transport.messages import Catalog, ServerRequestHandler, ToolOutcome
from ...transport.session import McpSession
from ..cases import CaseResult, Detail, ProbeCase
from ..context import RunContext

__all__ = ["CaseContext", "KindFn", "access_refusal", "failed", "is_writer", "passed"]


@dataclass
class CaseContext:
    """One case's view of the run: the current connection and a journaling ``call``.

    Attributes:
        run: the run context. session: the run's current connection. case: the case being run.
        needs_reconnect: set by a kind whose connection may be unusable after it (payload-bounds).
        calls: tool calls started so far (an errored case reports them as its attempts).
    """

    run: RunContext
    session: McpSession
    case: ProbeCase
    needs_reconnect: bool = False
    calls: int = 0

    @property
    def fields(self) -> Any:
        """The case's manifest fields (in memory only)."""
        return self.case.fields

    def entry(self, tool: str) -> dict[str, Any] | None:
        """The gate catalog's raw entry for ``tool``, or None."""
        return None if self.run.catalog is None else self.run.catalog.get(tool)

    def call(self, tool: str, arguments: dict[str, Any], *, session: McpSession | None = None,
             timeout: float | None = None, on_server_request: ServerRequestHandler | None = None,
             max_server_requests: int | None = None, journal: bool = True) -> ToolOutcome:
        """Call a tool (after a cancellation check) and journal it as a synthetic record.

        Args:
            tool: the tool name. arguments: the raw arguments (never printed; journaled only as shapes).
            session: the connection to use (default: the case's).
            timeout: per-call timeout. on_server_request / max_server_requests: passed to the session.
            journal: False for calls that must not be journaled (a failing payload-bounds call).

        Raises:
            TransportError: the call could not complete. Cancelled: the run was cancelled.
        """
        self.run.check_cancel()
        self.calls += 1
        outcome = (session or self.session).call_tool(
            tool, arguments, timeout=timeout, on_server_request=on_server_request,
            max_server_requests=max_server_requests)
        if journal:
            self.record(tool, arguments, outcome)
        return outcome

    def record(self, tool: str, arguments: Any, outcome: ToolOutcome) -> None:
        """Journal one completed call (no-op when journaling is off)."""
        if self.run.journal is not None:
            self.run.journal.record(tool, arguments, outcome)


KindFn = Callable[[CaseContext], CaseResult]


def passed(case: ProbeCase, attempts: int, **measurements: Any) -> CaseResult:
    """A passing verdict for ``case`` after ``attempts`` calls or steps."""
    return CaseResult(id=case.id, probe=case.probe, passed=True, attempts=attempts, tool=case.primary_tool,
                      measurements=measurements)


def failed(case: ProbeCase, reason: str, attempts: int, first_failure: int | None, *,
           detail: Detail | None = None, call: int | None = None, **measurements: Any) -> CaseResult:
    """A failing verdict with its fixed reason label and the attempt of the first failure."""
    return CaseResult(id=case.id, probe=case.probe, passed=False, attempts=attempts,
                      first_failure=first_failure, reason=reason, tool=case.primary_tool,
                      measurements=measurements, detail=detail, call=call)


def is_writer(entry: dict[str, Any] | None) -> bool:
    """A tool annotated as a writer: ``readOnlyHint: false`` or ``destructiveHint: true``."""
    notes = entry.get("annotations") if isinstance(entry, dict) else None
    if not isinstance(notes, dict):
        return False
    return notes.get("readOnlyHint") is False or notes.get("destructiveHint") is True


def undeclared_words(tool: str, catalog: Catalog) -> str:
    """Name an undeclared tool and the nearest tool the server did list (tool names pass the tool
    grammar before they are printed, as they do before they are journaled).

    Args:
        tool: the tool the manifest named. catalog: what the server listed.

    Returns:
        ``"`tool` (the server lists 3 tools; nearest: `get_time`)"``-style words.
    """
    listed = [n for n in catalog.names if valid_tool(n)]
    name = f"`{tool}`" if valid_tool(tool) else "a tool outside the tool grammar"
    close = difflib.get_close_matches(tool, listed, n=1)
    nearest = f"; nearest: `{close[0]}`" if close else ""
    return f"{name} (the server lists {len(catalog.names)} tool(s){nearest})"


def access_refusal(entry: dict[str, Any] | None, access: str) -> str | None:
    """Why a call of a tool may not be made, before any call: the first half of the writer gate.

    Args:
        entry: the tool's raw catalog entry, or None when the server did not list it.
        access: the access the manifest declared for the call (``read_only`` or ``mutating``).

    Returns:
        ``undeclared`` (the server did not list the tool), ``writer`` (a read-only call names a tool
        annotated ``readOnlyHint: false`` or ``destructiveHint: true``), or None when it may be called.
        Mutation authority itself (a sandbox and ``--allow-mutation``) is ``manifest.require_mutation``'s.
    """
    if entry is None:
        return "undeclared"
    if access != "mutating" and is_writer(entry):
        return "writer"
    return None
