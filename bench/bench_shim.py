"""Benchmark: round-trip latency the stdio shim adds, against the same client talking to the same server.

Run ``python -m bench.bench_shim [--requests N] [--big-requests N]``.  One client in this process keeps two
connections open side by side: the echo fixture server started directly, and the same server behind
``mcpeval-nb shim`` (the real CLI, journaling to a temporary capture root).  Requests alternate between the
two connections, one at a time, so machine load falls on both alike.  Cases: small ``tools/call`` frames,
a 1 MiB request frame (a 1 MiB string argument, small answer) and a 1 MiB answer frame (small request).
Printed: p50/p95 round trips direct and through the shim, and the added latency (shim - direct) at each
percentile.  Goals (issue 3): at most 0.5 ms added at p95 for small frames, 2 ms for 1 MiB frames.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from mcpeval_nb.testing.servers import echo

MIB = 1024 * 1024
GOALS_MS = {"small tools/call": 0.5, "1 MiB request": 2.0, "1 MiB response": 2.0}


class Connection:
    """A naive line client over a child's stdin/stdout."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin: IO[bytes] = self.proc.stdin
        self.stdout: IO[bytes] = self.proc.stdout
        self.next_id = 0

    def round_trip(self, frame_for: Callable[[int], bytes]) -> float:
        """Send one request, read its answer line; returns the seconds elapsed."""
        self.next_id += 1
        frame = frame_for(self.next_id)
        start = time.perf_counter()
        self.stdin.write(frame)
        self.stdin.flush()
        line = self.stdout.readline()
        elapsed = time.perf_counter() - start
        if not line.startswith(b'{"jsonrpc"'):
            raise RuntimeError("unexpected answer from the server")
        return elapsed

    def close(self) -> int:
        """Close stdin and reap the process."""
        self.stdin.close()
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def _call(tool: str, arguments: dict[str, Any]) -> Callable[[int], bytes]:
    def frame(msg_id: int) -> bytes:
        msg = {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call",
               "params": {"name": tool, "arguments": arguments}}
        return json.dumps(msg).encode() + b"\n"
    return frame


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000.0


def run_case(direct: Connection, shimmed: Connection, frame_for: Callable[[int], bytes], n: int,
             warmup: int) -> dict[str, float]:
    """Alternate ``n`` round trips on both connections (after ``warmup`` each); percentiles in ms."""
    times: dict[str, list[float]] = {"direct": [], "shim": []}
    for i in range(warmup + n):
        pair = (("direct", direct), ("shim", shimmed))
        order = pair if i % 2 == 0 else pair[::-1]
        for name, conn in order:
            elapsed = conn.round_trip(frame_for)
            if i >= warmup:
                times[name].append(elapsed)
    out: dict[str, float] = {}
    for name, values in times.items():
        out[f"{name}_p50"] = _pct(values, 0.50)
        out[f"{name}_p95"] = _pct(values, 0.95)
    out["added_p50"] = out["shim_p50"] - out["direct_p50"]
    out["added_p95"] = out["shim_p95"] - out["direct_p95"]
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500, help="small-frame round trips per side")
    parser.add_argument("--big-requests", type=int, default=200, help="1 MiB round trips per side and case")
    args, _unknown = parser.parse_known_args(argv)  # `python -m bench shim` leaves "shim" in sys.argv
    server = [sys.executable, echo.__file__]
    with tempfile.TemporaryDirectory(prefix="bench-shim-") as home:
        env = {**os.environ, "MCPEVAL_HOME": home, "MCPEVAL_SESSION": "bench"}
        direct = Connection(server, env)
        shim = [sys.executable, "-m", "mcpeval_nb", "shim", "--server", "bench", "--", *server]
        shimmed = Connection(shim, env)
        cases = [
            ("small tools/call", _call("navigate", {"url": "https://example.com/a", "waitUntil": "commit"}),
             args.requests, 50),
            ("1 MiB request", _call("navigate", {"blob": "x" * MIB}), args.big_requests, 10),
            ("1 MiB response", _call("big", {"bytes": MIB}), args.big_requests, 10),
        ]
        rows = []
        try:
            for name, frame_for, n, warmup in cases:
                print(f"bench_shim: {name}: {n} round trips per side ...", file=sys.stderr, flush=True)
                rows.append((name, n, run_case(direct, shimmed, frame_for, n, warmup)))
        finally:
            direct.close()
            shimmed.close()
        records = sum(len(p.read_text().splitlines()) for p in Path(home, "store").glob("calls-*.jsonl"))
        selfs = [json.loads(line)["shim_self_us"] for p in Path(home, "store").glob("calls-*.jsonl")
                 for line in p.read_text().splitlines()]
    print(f"{'case':<18} {'n':>5} {'direct p50':>11} {'p95':>8} {'shim p50':>9} {'p95':>8} "
          f"{'added p50':>10} {'p95':>8} {'goal p95':>9}")
    for name, n, r in rows:
        print(f"{name:<18} {n:>5} {r['direct_p50']:>9.3f}ms {r['direct_p95']:>6.3f}ms "
              f"{r['shim_p50']:>7.3f}ms {r['shim_p95']:>6.3f}ms "
              f"{r['added_p50']:>8.3f}ms {r['added_p95']:>6.3f}ms {GOALS_MS[name]:>7.1f}ms")
    print(f"records journaled: {records}; median shim_self_us: {statistics.median(selfs) if selfs else 0}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
