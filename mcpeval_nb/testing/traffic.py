"""Recorded traffic for the mock and replay: real calls to a fixture server through the real stdio shim.

``record_traffic`` starts ``mcpeval-nb shim`` in front of a server command, greets it, lists its tools
(the shim writes a catalog record) and makes the given calls, as an agent would; the shim journals
them (shapes, outcomes, codes, template ids, latencies: never a value).  ``behaviour_calls`` is a
realistic mix for the ``behaviour`` fixture server whose arguments carry canary markers.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..transport import McpSession, StdioTarget
from .servers import behaviour

__all__ = ["CANARY_ARGUMENT", "Call", "behaviour_calls", "behaviour_command", "record_traffic",
           "shim_command"]

#: The marker every generated argument value carries.
CANARY_ARGUMENT = "CANARY-argument"
Call = tuple[str, dict[str, Any]]


def behaviour_command(*, seed: int = 0, plants: Iterable[str] = (), speed: float = 1.0) -> list[str]:
    """argv of the ``behaviour`` fixture server (stdio) with a seed, planted regressions and a speed (its
    latencies are divided by it)."""
    argv = [sys.executable, behaviour.__file__, "--seed", str(seed)]
    if speed != 1.0:
        argv += ["--speed", repr(float(speed))]
    for plant in plants:
        argv += ["--plant", plant]
    return argv


def shim_command(root: Path, server: str, command: Sequence[str]) -> list[str]:
    """argv of ``mcpeval-nb shim`` recording ``command`` under ``server`` into ``root``."""
    return [sys.executable, "-m", "mcpeval_nb", "shim", "--server", server, "--root", str(root), "--",
            *command]


def behaviour_calls(n: int, *, seed: int = 0) -> list[Call]:
    """``n`` calls in a fixed mix: ``search`` 50% (a fifth of them ``mode: deep``), ``get_item`` 30%,
    ``status`` 20%; every string argument carries ``CANARY_ARGUMENT``."""
    rng = random.Random(f"behaviour calls {seed}")
    calls: list[Call] = []
    for i in range(n):
        u = rng.random()
        if u < 0.5:
            args: dict[str, Any] = {"query": f"{CANARY_ARGUMENT} query {i}"}
            if rng.random() < 0.2:
                args["mode"] = "deep"
            if rng.random() < 0.5:
                args["limit"] = rng.randint(1, 5)
            calls.append(("search", args))
        elif u < 0.8:
            calls.append(("get_item", {"item_id": f"{CANARY_ARGUMENT}-{i}"}))
        else:
            calls.append(("status", {}))
    return calls


def record_traffic(root: Path, *, server: str, command: Sequence[str], calls: Iterable[Call],
                   sessions: int = 1, timeout: float = 60.0) -> int:
    """Make ``calls`` through the stdio shim (split over ``sessions`` sessions); returns the calls made.

    Raises:
        TransportError: the shim or the server failed to start or answer.
    """
    todo = list(calls)
    per = -(-len(todo) // max(1, sessions)) if todo else 0
    made = 0
    for start in range(0, max(len(todo), 1), max(per, 1)):
        target = StdioTarget(tuple(shim_command(root, server, command)))
        with McpSession.connect(target, timeout=timeout) as session:
            session.initialize(capabilities={})
            session.list_tools()
            for tool, args in todo[start:start + per]:
                session.call_tool(tool, args)
                made += 1
    return made
