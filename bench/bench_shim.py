"""Benchmark: round-trip latency the stdio shim adds, against the same client talking to the same server.

Run ``python -m bench.bench_shim [--requests N] [--big-requests N]``.  One client in this process keeps two
connections open side by side: the echo fixture server started directly, and the same server behind
``mcpeval-nb shim`` (the real CLI, journaling to a temporary capture root), plus a third: the same server
behind a bare store-and-forward relay built from the shim's own frame reader (``bench/_relay.py``), which
separates the cost of relaying bounded frames from the cost of recording them.  Requests rotate over the
connections, one at a time, so machine load falls on all alike.  Cases: small ``tools/call`` frames,
a 1 MiB request frame (a 1 MiB string argument, small answer), a 1 MiB answer frame (small request), and
the 2026-07-28 revision's traffic (``bench/_modern.py``): a modern request (per-request ``_meta`` and a
``traceparent``) and a multi round-trip operation (``input_required``, then the retry with its
``requestState``), over stdio and, through ``mcpeval-nb shim-http``, over HTTP against a bare HTTP relay.
Printed: p50/p95 round trips of each connection, the added latency (shim - direct), the recording share (shim
- relay) and the shim's percentiles as ratios to each named baseline of the same run (``x direct`` = shim /
direct, ``x relay`` = shim / bare relay), each goal with ``met`` or ``MISSED``. Goals (issue 3): at most 0.5
ms added at p95 for small frames, 2 ms for 1 MiB frames.

Then the hostile-load cases of issue 15 (``bench/_attacks.py``; ``--no-attacks`` skips them), each
printed with its baseline and the ratio: unanswered requests (recorder RSS, stdio and shim-http), a
notification burst (records per second sustained, records lost) and idle event streams (shim-http ping
latency with 0, 8 and 32 streams open, against the server directly).
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

from . import _modern

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


def run_case(conns: dict[str, Connection], sample: Callable[[Connection], float], n: int,
             warmup: int) -> dict[str, float]:
    """Rotate ``n`` samples over the connections (after ``warmup`` each); percentiles in ms."""
    times: dict[str, list[float]] = {name: [] for name in conns}
    names = list(conns)
    for i in range(warmup + n):
        for name in names[i % len(names):] + names[: i % len(names)]:
            elapsed = sample(conns[name])
            if i >= warmup:
                times[name].append(elapsed)
    out: dict[str, float] = {}
    for name, values in times.items():
        out[f"{name}_p50"] = _pct(values, 0.50)
        out[f"{name}_p95"] = _pct(values, 0.95)
    for q in ("p50", "p95"):
        out[f"added_{q}"] = out[f"shim_{q}"] - out[f"direct_{q}"]
        out[f"recording_{q}"] = out[f"shim_{q}"] - out[f"relay_{q}"]
    return out


def _round_trip(frame_for: Callable[[int], bytes]) -> Callable[[Connection], float]:
    return lambda conn: conn.round_trip(frame_for)


def _print_rows(rows: list[tuple[str, int, dict[str, float]]]) -> None:
    print(f"{'case':<17} {'n':>4} {'direct p50/p95':>15} {'relay p50/p95':>15} {'shim p50/p95':>15} "
          f"{'added p50/p95':>15} {'recording p50/p95':>18} {'x direct':>11} {'x relay':>11} "
          f"{'goal p95':>12}")
    for name, n, r in rows:
        cells = [f"{r[k + '_p50']:.3f}/{r[k + '_p95']:.3f}" for k in ("direct", "relay", "shim", "added",
                                                                     "recording")]
        ratios = [f"{_ratio(r, 'p50', base)}/{_ratio(r, 'p95', base)}" for base in ("direct", "relay")]
        print(f"{name:<17} {n:>4} {cells[0]:>15} {cells[1]:>15} {cells[2]:>15} {cells[3]:>15} {cells[4]:>18} "
              f"{ratios[0]:>11} {ratios[1]:>11} {_goal(name, r):>12}")


def _ratio(r: dict[str, float], q: str, base: str) -> str:
    """The shim's percentile as a multiple of the named baseline's, from the same run."""
    return f"{r[f'shim_{q}'] / r[f'{base}_{q}']:.2f}" if r[f"{base}_{q}"] > 0 else "-"


def _goal(name: str, r: dict[str, float]) -> str:
    """The case's p95 goal on the added latency and whether this run met it (``-`` without a goal)."""
    if name not in GOALS_MS:
        return "-"
    return f"{GOALS_MS[name]:.1f} {'met' if r['added_p95'] <= GOALS_MS[name] else 'MISSED'}"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500, help="small-frame round trips per side")
    parser.add_argument("--big-requests", type=int, default=200, help="1 MiB round trips per side and case")
    parser.add_argument("--http-requests", type=int, default=300,
                        help="shim-http samples per endpoint and case")
    parser.add_argument("--burst", type=int, default=500_000, help="notifications in the burst case")
    parser.add_argument("--no-attacks", action="store_true", help="skip the hostile-load cases")
    args, _unknown = parser.parse_known_args(argv)  # `python -m bench shim` leaves "shim" in sys.argv
    server = [sys.executable, echo.__file__]
    with tempfile.TemporaryDirectory(prefix="bench-shim-") as home:
        env = {**os.environ, "MCPEVAL_HOME": home, "MCPEVAL_SESSION": "bench"}
        shim = [sys.executable, "-m", "mcpeval_nb", "shim", "--server", "bench", "--", *server]
        relay = [sys.executable, str(Path(__file__).with_name("_relay.py")), *server]
        conns = {"direct": Connection(server, env), "relay": Connection(relay, env),
                 "shim": Connection(shim, env)}
        cases: list[tuple[str, Callable[[Connection], float], int, int]] = [
            ("small tools/call",
             _round_trip(_call("navigate", {"url": "https://example.com/a", "waitUntil": "commit"})),
             args.requests, 50),
            ("1 MiB request", _round_trip(_call("navigate", {"blob": "x" * MIB})), args.big_requests, 10),
            ("1 MiB response", _round_trip(_call("big", {"bytes": MIB})), args.big_requests, 10),
            *((name, sample, args.requests, 50) for name, sample in _modern.STDIO_CASES),
        ]
        rows = []
        try:
            for name, sample, n, warmup in cases:
                print(f"bench_shim: {name}: {n} samples per connection ...", file=sys.stderr, flush=True)
                rows.append((name, n, run_case(conns, sample, n, warmup)))
        finally:
            for conn in conns.values():
                conn.close()
        journals = list(Path(home, "store").glob("calls-*.jsonl"))
        selfs = [json.loads(line)["shim_self_us"] for p in journals for line in p.read_text().splitlines()]
    print("stdio: round trips in ms (an MRTR operation: both of its round trips); added = shim - direct; "
          "recording = shim - relay")
    _print_rows(rows)
    print(f"records journaled: {len(selfs)}; median shim_self_us: {statistics.median(selfs) if selfs else 0}")
    print("\nshim-http: round trips in ms, one POST per connection (an MRTR operation: both POSTs); "
          "relay = a bare HTTP relay")
    _print_rows(_modern.http_rows(args.http_requests, 20, _pct))
    if not args.no_attacks:
        attacks_report(args.burst)
    return 0


def attacks_report(burst_n: int) -> None:
    """Run and print the hostile-load cases, each with its baseline and the ratio."""
    from . import _attacks

    print("\nunanswered requests: RSS in MiB after the first and after all requests (baseline: answered)")
    for case, result in (("stdio, 12,000 x 3 KB", _attacks.unanswered()),
                         ("shim-http, 30 x 0.8 MB", _attacks.unanswered_http())):
        (a0, a1), (u0, u1) = result["answered"], result["unanswered"]
        print(f"  {case:<24} answered {a0:6.1f} -> {a1:6.1f}   unanswered {u0:6.1f} -> {u1:6.1f}   "
              f"ratio unanswered/answered at the end {u1 / a1:.2f}")
    b = _attacks.burst(burst_n)
    print(f"\nnotification burst: {burst_n} notifications (baseline: the server writing to a pipe directly)")
    ratio = b["shim_s"] / b["direct_s"]
    print(f"  direct {b['direct_s']:.2f} s; through shim {b['shim_s']:.2f} s (ratio {ratio:.1f}); "
          f"records {b['records']:.0f}, lost {b['lost']:.0f}; {b['records_per_s']:.0f} records/s sustained")
    s = _attacks.streams()
    d50, d95, dmax = s["direct"]
    print("\nevent streams: ping round trips in ms, p50/p95/max (baseline: the SDK server directly)")
    for name, (p50, p95, top) in s.items():
        print(f"  {name:<20} {p50:7.2f}/{p95:7.2f}/{top:8.2f}   ratio to direct "
              f"{p50 / d50:5.1f}/{p95 / d95:5.1f}/{top / dmax:6.1f}")


if __name__ == "__main__":
    sys.exit(main())
