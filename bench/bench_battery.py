"""Benchmark: the standard readiness battery's wall time, split into waiting on the server and our own time.

Run ``python -m bench.bench_battery [--rounds N] [--skip-everything]``.  Targets: the ``many_tools`` fixture
(100 tools, answers at once, and again with 5 ms per call) and npm ``server-everything`` (its 10-second
``trigger-long-running-operation`` skipped).  The stdio channel's ``receive`` and its constructor (the
child's spawn) are wrapped with timers in this process only; concurrent waits (the contention case's two
clients) are counted once (the union of intervals).  ``evaluator`` = wall - waiting - spawning: the time
spent in our own code (synthesis, classification, scoring, JSON, threads).  The goal is evaluator < 10 %.

Side by side, a naive client (no limits, no threads: write a line, read a line) makes the same number of
``tools/call`` requests on one connection to the same server: ``battery/naive`` puts the battery's wall
time in proportion (the battery also opens extra connections for negotiation and contention).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcpeval_nb.testing.servers as servers
from mcpeval_nb import BatteryOptions, StdioTarget, score_server
from mcpeval_nb.transport import stdio

EVERYTHING = (Path(__file__).resolve().parent.parent / "tests" / "e2e" / "node" / "node_modules" /
              "@modelcontextprotocol" / "server-everything" / "dist" / "index.js")


class Clock:
    """Union of the intervals during which at least one thread is inside a timed call."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.since = 0.0
        self.total = 0.0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.lock:
                if self.depth == 0:
                    self.since = time.perf_counter()
                self.depth += 1
            try:
                return fn(*args, **kwargs)
            finally:
                with self.lock:
                    self.depth -= 1
                    if self.depth == 0:
                        self.total += time.perf_counter() - self.since
        return timed


def _instrument() -> tuple[Clock, Clock]:
    waiting, spawning = Clock(), Clock()
    cls = stdio.StdioChannel
    cls.receive = waiting.wrap(cls.receive)  # type: ignore[method-assign]
    cls.__init__ = spawning.wrap(cls.__init__)  # type: ignore[method-assign]
    return waiting, spawning


def _naive(argv: list[str], calls: int, skip: tuple[str, ...] = ()) -> float:
    """Wall seconds of ``calls`` sequential tools/call requests from an unbounded line client."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None

    def ask(i: int, method: str, params: dict[str, Any] | None = None) -> Any:
        message = {"jsonrpc": "2.0", "id": i, "method": method, **({"params": params} if params else {})}
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
        while line := proc.stdout.readline():
            answer = json.loads(line)
            if answer.get("id") == i:
                return answer
        raise RuntimeError("server closed")

    try:
        start = time.perf_counter()
        ask(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "naive", "version": "0"}})
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        listed = [t["name"] for t in ask(1, "tools/list")["result"]["tools"] if t["name"] not in skip]
        for i in range(calls):
            ask(i + 2, "tools/call", {"name": listed[i % len(listed)], "arguments": {}})
        return time.perf_counter() - start
    finally:
        proc.kill()
        proc.wait()


def _one(label: str, argv: list[str], options: BatteryOptions, clocks: tuple[Clock, Clock],
         rounds: int) -> dict[str, Any]:
    waiting, spawning = clocks
    rows = []
    for _ in range(rounds):
        w0, s0 = waiting.total, spawning.total
        start = time.perf_counter()
        report = score_server(StdioTarget(tuple(argv)), server="bench", options=options)
        wall = time.perf_counter() - start
        assert report.readiness is not None, report.readiness_error
        calls = report.readiness.area("reliability").measurements
        made = sum(calls[k] for k in ("successful_calls", "tool_errors", "rpc_errors", "rejected_calls"))
        rows.append({"wall": wall, "waiting": waiting.total - w0, "spawning": spawning.total - s0,
                     "naive": _naive(argv, made, options.skip_tools), "calls": made})
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    evaluator = med["wall"] - med["waiting"] - med["spawning"]
    return {"target": label, "rounds": rounds, "tool_calls": int(med["calls"]),
            "wall_s": round(med["wall"], 3), "waiting_s": round(med["waiting"], 3),
            "spawning_s": round(med["spawning"], 3), "evaluator_s": round(evaluator, 3),
            "evaluator_share": round(evaluator / med["wall"], 4),
            "naive_s": round(med["naive"], 3), "battery_over_naive": round(med["wall"] / med["naive"], 2)}


def main(argv: list[str] | None = None) -> None:
    """Run the targets and print one JSON line per target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-everything", action="store_true")
    parser.add_argument("--only", default=None, help="Run only the target with this label.")
    args = parser.parse_args(argv)
    clocks = _instrument()
    many = [sys.executable, str(Path(servers.__file__).with_name("many_tools.py")), "100"]
    targets: list[tuple[str, list[str], BatteryOptions]] = [
        ("many_tools-100", many, BatteryOptions(history=False)),
        ("many_tools-100-5ms", [*many, "--delay-ms", "5"], BatteryOptions(history=False))]
    node = shutil.which("node")
    if node and EVERYTHING.exists() and not args.skip_everything:
        targets.append(("server-everything", [node, str(EVERYTHING), "stdio"],
                        BatteryOptions(skip_tools=("trigger-long-running-operation",), history=False)))
    for label, target_argv, options in targets:
        if args.only is not None and label != args.only:
            continue
        print(json.dumps(_one(label, target_argv, options, clocks, args.rounds)), flush=True)


if __name__ == "__main__":
    main()
