"""The protocol eras a run plan may name, each with the one way to open a session in it.

A protocol era is a property of the run plan (``RunPlan.era``), never a branch in a probe kind: every
connection a run opens goes through ``RunContext.connect``, which asks the plan's era for a session.
An era opens a channel to the target (``connect``), then runs its handshake (``handshake``); between the
two the run context puts the session under its cancel scope, so a run cancelled during the handshake
closes it at once.

Today one era exists: ``2025-06-18``, the ``initialize`` / ``notifications/initialized`` handshake of
``transport.session``.  A new revision (or a negotiating ``auto``) is one more row of ``ERAS``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import UsageError
from ..transport.budget import Budget
from ..transport.messages import Target
from ..transport.session import PROTOCOL_VERSION, McpSession

__all__ = ["ERAS", "LEGACY_ERA", "Connect", "Era", "check_era"]

#: The era of the 2025-06-18 handshake (``initialize`` with ``protocolVersion 2025-06-18``).
LEGACY_ERA = PROTOCOL_VERSION


class Connect(Protocol):
    """Open a channel to ``target`` under the run's budget (no MCP message is exchanged yet)."""

    def __call__(self, target: Target, *, timeout: float | None, budget: Budget) -> McpSession: ...


def _connect(target: Target, *, timeout: float | None, budget: Budget) -> McpSession:
    return McpSession.connect(target, timeout=timeout, budget=budget)


def _initialize(session: McpSession, capabilities: dict[str, Any]) -> None:
    session.initialize(capabilities=capabilities)


@dataclass(frozen=True)
class Era:
    """One protocol era: how a run opens a channel and how it greets the server on it.

    Attributes:
        name: the era's value in a run plan (a protocol revision date).
        connect: opens a channel to the target under the run's budget (no MCP message yet).
        handshake: greets the server on a fresh session, offering these client capabilities.
    """

    name: str
    connect: Connect
    handshake: Callable[[McpSession, dict[str, Any]], None]


#: Every era a run plan may name, by name.
ERAS: dict[str, Era] = {LEGACY_ERA: Era(LEGACY_ERA, _connect, _initialize)}


def check_era(era: str) -> Era:
    """The era a plan names.

    Raises:
        UsageError: an era this package does not speak.
    """
    found = ERAS.get(era)
    if found is None:
        raise UsageError(f"unknown protocol era; use one of {', '.join(ERAS)}")
    return found
