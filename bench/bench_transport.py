"""Benchmark: the bounded stdio session against a naive unbounded client, side by side.

Run ``python -m bench.bench_transport``.  Both clients talk to the same fixture server
(``transport_fault`` for pings, ``resource_bounds frame N`` for a large answer) in alternating rounds;
the figure that matters is the ratio bounded/naive (the naive client has no limits, deadlines, reader
thread or queue, so it is the floor).  Absolute times depend on the machine and its load.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import mcpeval_nb.testing.servers as servers
from mcpeval_nb.transport import McpSession, StdioTarget

PINGS = 500
ROUNDS = 5
FRAME = 3 * 1024 * 1024


def _argv(name: str, *args: str) -> list[str]:
    return [sys.executable, str(Path(servers.__file__).with_name(f"{name}.py")), *args]


def _naive(argv: list[str], count: int, method: str) -> float:
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    start = time.perf_counter()
    for index in range(count):
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": index, "method": method}).encode() + b"\n")
        proc.stdin.flush()
        json.loads(proc.stdout.readline())
    elapsed = time.perf_counter() - start
    proc.kill()
    proc.wait()
    proc.stdin.close()
    proc.stdout.close()
    return elapsed


def _bounded(argv: list[str], count: int, method: str) -> float:
    with McpSession.connect(StdioTarget(tuple(argv))) as session:
        start = time.perf_counter()
        for _ in range(count):
            session.request(method)
        return time.perf_counter() - start


def _compare(label: str, argv: list[str], count: int, method: str) -> None:
    naive, bounded = [], []
    for _ in range(ROUNDS):
        naive.append(_naive(argv, count, method))
        bounded.append(_bounded(argv, count, method))
    n, b = statistics.median(naive), statistics.median(bounded)
    print(f"{label}: naive {n * 1000:.1f} ms, bounded {b * 1000:.1f} ms, ratio {b / n:.2f}")


def main() -> int:
    """Print the medians and the bounded/naive ratio for each scenario."""
    _compare(f"{PINGS} ping round trips", _argv("transport_fault"), PINGS, "ping")
    _compare("20 answers of 3 MiB", _argv("resource_bounds", "frame", str(FRAME)), 20, "ping")
    return 0


if __name__ == "__main__":
    sys.exit(main())
