"""The recorded-behaviour mock's answers: the protocol layer's backend over a mock profile (docs/mock.md).

``tools/list`` lists the profile's tools in the recorded order, each with the input schema its skeleton
stands for, the recorded annotation hints, and a fixed placeholder description.

``tools/call`` draws, deterministically: the k-th call of a tool (counted per tool, from 1) uses a
``random.Random`` seeded with ``(seed, tool, k)``, so a seed and a request sequence always give the same
answers, and concurrent clients of different tools do not disturb each other's draws.  From it:

1. the outcome, weighted by the recorded counts: of the call's argument shape when the arguments' shape
   (``privacy.shape`` with the listed enums) equals a recorded shape seen at least ``MIN_SHAPE_CALLS``
   times, else of the tool.  ``ok`` answers text content of a recorded size class (``sizes``), else a
   small fixed text; ``tool-error`` an ``isError`` result; ``rpc-error`` a JSON-RPC error with the
   recorded code (-32603 when none was recorded).  Error text is a placeholder carrying the template id;
2. the latency, by inverse transform sampling of the recorded quantiles (linear between them), divided
   by ``speed``; the answer is sent when that much time has passed since the request arrived.

A tool the profile does not hold is answered as the recorded server answered unknown tools (its
``unknown_tool``), else with -32602.  Every answer's draw is in its ``_meta`` (results) or ``data``
(errors) under ``io.mcpeval-nb/mock``: the call number and the drawn latency, never anything recorded
beyond the profile.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._version import __version__
from ..errors import UsageError
from ..privacy.shape import EnumIndex, sanitize_shape, shape
from ..serve.rpc import RpcFailure
from .profile import MockProfile, OutcomeCount, ShapeProfile, SizeClass, ToolProfile, shape_key
from .schemas import input_schema

__all__ = ["DESCRIPTION", "MIN_SHAPE_CALLS", "MOCK_META", "SERVER_NAME", "Draw", "MockEngine", "check_speed"]

#: A recorded shape's own outcome distribution is used once it was seen this many times.
MIN_SHAPE_CALLS = 10
SERVER_NAME = "mcpeval-nb-mock"
MOCK_META = "io.mcpeval-nb/mock"
#: Every mocked tool's description.
DESCRIPTION = ("Recorded-behaviour mock (mcpeval-nb): outcomes, latencies and result sizes are drawn from "
               "this tool's recorded behaviour; nothing is computed.")
_RESULT_OVERHEAD = len('{"content":[{"type":"text","text":""}]}')
_SMALL_TEXT = "recorded-behaviour mock result"
_UNKNOWN = "\x00unknown"


def check_speed(speed: float) -> float:
    """``--speed``: a positive, finite factor.

    Raises:
        UsageError: ``--speed must be a positive number``.
    """
    number = isinstance(speed, int | float) and not isinstance(speed, bool)
    if not number or not math.isfinite(speed) or speed <= 0:
        raise UsageError("--speed must be a positive number")
    return float(speed)


@dataclass(frozen=True)
class Draw:
    """One call's drawn answer.

    Attributes:
        tool: the called name ('' when it was not a string). call: its number among that tool's calls.
        outcome: the drawn recorded outcome (None: an unknown tool without recorded evidence).
        latency_ms: the drawn latency before ``speed``. size: the drawn result size class, if any.
        shape_matched: the outcome came from the arguments' recorded shape.
    """

    tool: str
    call: int
    outcome: OutcomeCount | None
    latency_ms: float
    size: SizeClass | None = None
    shape_matched: bool = False


def _weighted(u: float, weights: list[int]) -> int:
    """The index ``u`` (uniform in [0, 1)) falls on when the weights are laid end to end."""
    total = sum(weights)
    pick = u * total
    for index, weight in enumerate(weights):
        pick -= weight
        if pick < 0:
            return index
    return len(weights) - 1


def _quantile(quantiles: tuple[float, ...], u: float) -> float:
    if len(quantiles) < 2:
        return 0.0
    x = u * (len(quantiles) - 1)
    low = min(int(x), len(quantiles) - 2)
    return quantiles[low] + (quantiles[low + 1] - quantiles[low]) * (x - low)


class MockEngine:
    """A mock profile as a protocol backend (``serve.rpc.Backend``): deterministic, thread-safe.

    Args:
        profile: what to behave like. seed: the draws' seed. speed: latencies are divided by it.
        sleep: how to wait (tests of the draws may pass a no-op).

    Raises:
        UsageError: a speed that is not a positive number.
    """

    def __init__(self, profile: MockProfile, *, seed: int = 0, speed: float = 1.0,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.profile, self.seed, self.speed = profile, int(seed), check_speed(speed)
        self._sleep = sleep
        self._tools = {t.name: t for t in profile.tools}
        self._listing = [self._entry(t) for t in profile.tools]
        self._enums = EnumIndex()
        for entry in self._listing:
            self._enums.learn(entry["name"], entry["inputSchema"])
        self._calls: dict[str, int] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _entry(tool: ToolProfile) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": tool.name, "description": DESCRIPTION,
                                 "inputSchema": input_schema(tool.skeleton)}
        hints = {k: v for k, v in tool.hints.items() if v is not None}
        if hints:
            entry["annotations"] = hints
        return entry

    def server_info(self) -> dict[str, str]:
        """``mcpeval-nb-mock`` and the package version."""
        return {"name": SERVER_NAME, "version": __version__}

    def list_tools(self) -> list[dict[str, Any]]:
        """The profile's tools in the recorded order."""
        return [dict(entry) for entry in self._listing]

    def _next(self, key: str) -> int:
        with self._lock:
            self._calls[key] = count = self._calls.get(key, 0) + 1
        return count

    def _distribution(self, tool: ToolProfile, arguments: Any) -> tuple[tuple[OutcomeCount, ...], bool]:
        shaped = None if arguments is None else sanitize_shape(shape(arguments, tool.name, self._enums))
        key = shape_key(shaped)
        match: ShapeProfile | None = next((s for s in tool.shapes if s.calls >= MIN_SHAPE_CALLS and shape_key(
            s.shape) == key), None)
        return (match.outcomes, True) if match is not None and match.outcomes else (tool.outcomes, False)

    def draw(self, name: Any, arguments: Any) -> Draw:
        """The next answer for a call of ``name`` with ``arguments`` (advances that tool's count)."""
        label = name if isinstance(name, str) else ""
        tool = self._tools.get(label)
        count = self._next(label if tool is not None else _UNKNOWN)
        rng = random.Random(f"{self.seed}\x00{label if tool is not None else _UNKNOWN}\x00{count}")
        u_outcome, u_latency, u_size = rng.random(), rng.random(), rng.random()
        if tool is None:
            return Draw(label, count, self.profile.unknown_tool, 0.0)
        outcomes, matched = self._distribution(tool, arguments)
        chosen = outcomes[_weighted(u_outcome, [o.count for o in outcomes])] if outcomes else \
            OutcomeCount("ok", 0)
        size = tool.sizes[_weighted(u_size, [s.count for s in tool.sizes])] if tool.sizes else None
        return Draw(label, count, chosen, _quantile(tool.latency.quantiles, u_latency), size, matched)

    def call_tool(self, name: Any, arguments: Any) -> dict[str, Any]:
        """Draw the answer, wait its latency (from the request's arrival), answer.

        Raises:
            RpcFailure: the drawn outcome is a JSON-RPC error (or an unknown tool's).
        """
        arrived = time.monotonic()
        drawn = self.draw(name, arguments)
        wait = drawn.latency_ms / 1000 / self.speed - (time.monotonic() - arrived)
        if wait > 0:
            self._sleep(wait)
        return answer(drawn)


def _meta(drawn: Draw) -> dict[str, Any]:
    return {MOCK_META: {"call": drawn.call, "latency_ms": round(drawn.latency_ms, 3)}}


def _placeholder(what: str, template: str | None) -> str:
    return f"recorded {what}, template {template} (mcpeval-nb mock)" if template else \
        f"recorded {what} (mcpeval-nb mock)"


def _text_of(size: SizeClass | None) -> str:
    if size is None:
        return _SMALL_TEXT
    return _SMALL_TEXT + " " + "x" * max(0, size.bytes - _RESULT_OVERHEAD - len(_SMALL_TEXT) - 1)


def answer(drawn: Draw) -> dict[str, Any]:
    """The result object of a draw.

    Raises:
        RpcFailure: the draw is a JSON-RPC error (an unknown tool without evidence: -32602).
    """
    outcome = drawn.outcome
    if outcome is None:
        raise RpcFailure(-32602, "unknown tool (mcpeval-nb mock)", data=_meta(drawn))
    if outcome.outcome == "rpc-error":
        data = {**_meta(drawn), "template_id": outcome.template_id}
        raise RpcFailure(-32603 if outcome.code is None else outcome.code,
                         _placeholder("error", outcome.template_id), data=data)
    if outcome.outcome == "tool-error":
        return {"content": [{"type": "text", "text": _placeholder("tool error", outcome.template_id)}],
                "isError": True, "_meta": _meta(drawn)}
    return {"content": [{"type": "text", "text": _text_of(drawn.size)}], "_meta": _meta(drawn)}
