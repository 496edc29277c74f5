"""Benchmark: the recorded-behaviour mock's throughput against the fixture server it mocks, in one run.

Run ``python -m bench.bench_mock [--record N] [--calls N] [--no-http]``.  The ``behaviour`` fixture server
is recorded through the real stdio shim (``--record`` calls of ``behaviour_calls``), its mock profile
built, and then two servers answer the same ``--calls`` calls (another seed of the same mix) with their
latencies removed: the **baseline**, the fixture server itself at ``--speed 1e6`` (its sleeps divided
away, so what is left is its own work), and the **mock**, ``mcpeval-nb mock --from-profile P --speed
1e6``.  One client in this process (the package's ``McpSession``) keeps both connections open and makes
each call on one, then the other (the order alternating), so machine load falls on both alike.  Over
stdio and over loopback Streamable HTTP (the fixture's ``http`` mode, the mock's ``--listen``).

Printed per transport: calls per second of each (calls over the summed round trips), p50/p95 round trip,
and the ratio ``mock / baseline`` of the throughputs.  Goal (issue 31): the mock is not the slow part of
a test that uses it in place of the server: at least ``GOAL_RATIO`` of the baseline's throughput.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO

import mcpeval_nb as me
from mcpeval_nb.testing.traffic import Call, behaviour_calls, behaviour_command, record_traffic
from mcpeval_nb.transport import HttpTarget, McpSession, StdioTarget

GOAL_RATIO = 0.5
SPEED = 1e6
SERVER = "behaviour"


def _mock_argv(profile: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "mcpeval_nb", "mock", "--from-profile", str(profile), "--speed", str(SPEED),
            *extra]


def _session(target: StdioTarget | HttpTarget) -> McpSession:
    session = McpSession.connect(target, timeout=60)
    session.initialize(capabilities={})
    session.list_tools()
    return session


def _url_line(stream: IO[str] | None, marker: str) -> str:
    assert stream is not None
    line = stream.readline()  # waits for the announced endpoint (or the end of a failed start)
    if marker not in line:
        raise RuntimeError("the server did not announce its endpoint")
    return line.strip().rsplit(" ", 1)[-1]


@contextmanager
def _process(argv: list[str], *, url_on: str) -> Iterator[str]:
    """A server process that prints its endpoint URL on stdout or stderr; yields the URL."""
    pipe = {"stdout": subprocess.PIPE} if url_on == "stdout" else {"stderr": subprocess.PIPE}
    proc = subprocess.Popen(argv, text=True, stdin=subprocess.DEVNULL, **pipe)  # type: ignore[call-overload]
    try:
        yield _url_line(proc.stdout if url_on == "stdout" else proc.stderr, "http://")
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def _sessions(stack: ExitStack, transport: str, profile: Path) -> dict[str, McpSession]:
    fixture = behaviour_command(seed=2, speed=SPEED)
    if transport == "stdio":
        targets = {"baseline": StdioTarget(tuple(fixture)), "mock": StdioTarget(tuple(_mock_argv(profile)))}
    else:
        base = stack.enter_context(_process([*fixture, "http"], url_on="stdout"))
        mock = stack.enter_context(_process(_mock_argv(profile, "--listen", "127.0.0.1:0"), url_on="stderr"))
        targets = {"baseline": HttpTarget(base), "mock": HttpTarget(mock)}
    return {name: stack.enter_context(_session(t)) for name, t in targets.items()}


def _round_trips(sessions: dict[str, McpSession], calls: Sequence[Call]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in sessions}
    order = list(sessions)
    for i, (tool, args) in enumerate(calls):
        for name in order if i % 2 == 0 else order[::-1]:
            started = time.perf_counter()
            sessions[name].call_tool(tool, args)
            times[name].append(time.perf_counter() - started)
    return times


def _p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1] * 1000


def _report(transport: str, times: dict[str, list[float]]) -> float:
    rate = {name: len(t) / sum(t) for name, t in times.items()}
    for name, t in times.items():
        print(f"{transport:<6} {name:<9} {len(t):>6} calls {rate[name]:>9.0f} calls/s   "
              f"p50 {_p(t, 50):6.2f} ms   p95 {_p(t, 95):6.2f} ms")
    ratio = rate["mock"] / rate["baseline"]
    print(f"{transport:<6} ratio mock/baseline throughput {ratio:.2f} (goal >= {GOAL_RATIO})")
    return ratio


def _profile(home: Path, record: int) -> Path:
    root = home / "root"
    print(f"bench_mock: recording {record} calls of the behaviour fixture through the shim ...",
          file=sys.stderr, flush=True)
    record_traffic(root, server=SERVER, command=behaviour_command(seed=1),
                   calls=behaviour_calls(record, seed=1))
    profile = me.mock_profile(root, server=SERVER)
    print(f"bench_mock: {profile!r}", file=sys.stderr, flush=True)
    return profile.write(home / "behaviour.mock.json")


def _run(transport: str, profile: Path, calls: list[Call],
         warm: Callable[[dict[str, McpSession]], None]) -> float:
    print(f"bench_mock: {transport}: {len(calls)} calls per server ...", file=sys.stderr, flush=True)
    with ExitStack() as stack:
        sessions = _sessions(stack, transport, profile)
        warm(sessions)
        return _report(transport, _round_trips(sessions, calls))


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the table; exit 1 when a transport misses the goal."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--record", type=int, default=300, help="calls recorded to build the profile")
    parser.add_argument("--calls", type=int, default=2000, help="calls each server answers per transport")
    parser.add_argument("--no-http", action="store_true", help="stdio only")
    args, _unknown = parser.parse_known_args(argv)
    calls = behaviour_calls(args.calls, seed=2)
    warmup = behaviour_calls(50, seed=3)
    failed = []
    with tempfile.TemporaryDirectory(prefix="bench-mock-") as home:
        profile = _profile(Path(home), args.record)
        for transport in ("stdio",) if args.no_http else ("stdio", "http"):
            ratio = _run(transport, profile, calls, lambda s: _round_trips(s, warmup) and None)
            if ratio < GOAL_RATIO:
                failed.append(f"{transport}: ratio {ratio:.2f} < {GOAL_RATIO}")
    for line in failed:
        print(f"goal missed: {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
