"""The protocol eras a run plan may name, each with the one way to open a session in it.

A protocol era is a property of the run plan (``RunPlan.era``), never a branch in a probe kind: every
connection a run opens goes through ``RunContext.connect``, which asks the plan's era for a session.
The plan's era is the operator's ``--protocol`` choice (``transport.era``'s one rule):

- ``auto`` (the default): the first connection probes with ``server/discover`` and falls back to the
  ``initialize`` handshake on a legacy server; the era it finds (``Negotiated``) is kept on the run
  context and every later connection of the run opens in it without probing again;
- ``legacy``: the 2025-06-18 ``initialize`` / ``notifications/initialized`` handshake only;
- ``2026-07-28``: the stateless revision only (``server/discover``, per-request ``_meta``).

A server in the other era is a ``ProtocolMismatch`` that names the fix.  Between opening the channel and
greeting the server, the run context puts the session under its cancel scope, so a run cancelled during
the handshake closes it at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import UsageError
from ..transport.budget import Budget
from ..transport.era import AUTO, LEGACY, MODERN_VERSION, PROTOCOL_CHOICES, Negotiated
from ..transport.messages import Target
from ..transport.negotiate import open_session
from ..transport.session import McpSession

__all__ = ["DEFAULT_ERA", "ERAS", "LEGACY_ERA", "MODERN_ERA", "Connect", "Era", "check_era"]

#: The era of the 2025-06-18 handshake, the modern revision, and the default (negotiate).
LEGACY_ERA = LEGACY
MODERN_ERA = MODERN_VERSION
DEFAULT_ERA = AUTO


class Connect(Protocol):
    """Open a channel to ``target`` under the run's budget (no MCP message is exchanged yet)."""

    def __call__(self, target: Target, *, timeout: float | None, budget: Budget) -> McpSession: ...


def _connect(target: Target, *, timeout: float | None, budget: Budget) -> McpSession:
    return McpSession.connect(target, timeout=timeout, budget=budget)


#: ``open(fresh_session, capabilities, known) -> session``: greet the server in the era (probing when
#: ``known`` is None and the era negotiates).
Opener = Callable[[Callable[[], McpSession], dict[str, Any], Negotiated | None], McpSession]


def _opener(choice: str) -> Opener:
    def open_in(fresh: Callable[[], McpSession], capabilities: dict[str, Any],
                known: Negotiated | None) -> McpSession:
        return open_session(fresh, protocol=choice, known=known, capabilities=capabilities)
    return open_in


@dataclass(frozen=True)
class Era:
    """One protocol era choice: how a run opens a channel and how it greets the server on it.

    Attributes:
        name: the era's value in a run plan (``--protocol``: ``auto``, ``legacy``, ``2026-07-28``).
        connect: opens a channel to the target under the run's budget (no MCP message yet).
        open: greets the server (``transport.negotiate.open_session``): a fresh channel maker, the client
            capabilities, and the era a run already found (None on its first connection).
    """

    name: str
    connect: Connect
    open: Opener


#: Every era a run plan may name, by name.
ERAS: dict[str, Era] = {name: Era(name, _connect, _opener(name)) for name in PROTOCOL_CHOICES}


def check_era(era: str) -> Era:
    """The era a plan names.

    Raises:
        UsageError: an era this package does not speak (the message lists the choices).
    """
    found = ERAS.get(era)
    if found is None:
        raise UsageError("--protocol must be auto, legacy or 2026-07-28")
    return found
