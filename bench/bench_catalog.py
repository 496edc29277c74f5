"""Benchmark: what catalog capture adds to a 500-tool ``tools/list`` and to ordinary calls.

Run ``python -m bench.bench_catalog [--lists N] [--calls N] [--tools N]``.  The ``many_tools`` fixture
serves 500 described tools.  On stdio, one client in this process keeps three connections open side by
side: the server directly, behind ``mcpeval-nb shim`` (catalog capture on, the default) and behind
``mcpeval-nb shim --no-catalog``; requests rotate over them one at a time, so machine load falls on all
alike.  Over HTTP the same three against the server's Streamable HTTP mode and two ``shim-http`` CLIs.
Cases: ``tools/list`` (the 500-tool answer, ~150 KB) and a small ``tools/call``.

Printed per transport and case: p50/p95 round trips, the ratio ``catalog / no-catalog`` of the round
trips, and the added latency (round trip minus direct) with and without catalog capture.  Goals (issue
30): the 500-tool ``tools/list`` through the shim with catalog capture at most 1.5x the same answer
through the shim without it, and ordinary calls' per-frame latency unchanged (ratio near 1.0).  The
catalog records are built on the recorder (a forked process behind the stdio shim, a thread behind
shim-http), after the answer is forwarded.  Then each capture root is checked: one catalog record per
listing with every tool, none without catalog capture.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from mcpeval_nb.testing.servers import many_tools

GOAL_LIST_RATIO = 1.5
LIST_WARMUP = 5


def _frame(msg_id: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        msg["params"] = params
    return json.dumps(msg).encode()


class Stdio:
    """A naive line client over a child's stdin/stdout."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin: IO[bytes] = self.proc.stdin
        self.stdout: IO[bytes] = self.proc.stdout

    def round_trip(self, body: bytes) -> float:
        start = time.perf_counter()
        self.stdin.write(body + b"\n")
        self.stdin.flush()
        line = self.stdout.readline()
        elapsed = time.perf_counter() - start
        if not line.startswith(b'{"jsonrpc"'):
            raise RuntimeError("unexpected answer from the server")
        return elapsed

    def close(self) -> None:
        self.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Http:
    """POSTs JSON-RPC bodies to an endpoint (one connection per request, as shim-http closes them)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def round_trip(self, body: bytes) -> float:
        request = urllib.request.Request(self.url, data=body, method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        start = time.perf_counter()
        with urllib.request.urlopen(request, timeout=60) as answer:
            data = answer.read()
        elapsed = time.perf_counter() - start
        if b'"jsonrpc"' not in data:
            raise RuntimeError("unexpected answer from the server")
        return elapsed

    def close(self) -> None:
        return None


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000.0


Client = Stdio | Http


Rows = list[tuple[str, int, dict[str, float]]]


def run_case(conns: dict[str, Client], body_for: Callable[[int], bytes], n: int,
             warmup: int) -> dict[str, float]:
    """Rotate ``n`` round trips over the connections (after ``warmup`` each); percentiles in ms."""
    times: dict[str, list[float]] = {name: [] for name in conns}
    names = list(conns)
    for i in range(warmup + n):
        for name in names[i % len(names):] + names[: i % len(names)]:
            elapsed = conns[name].round_trip(body_for(i + 1))
            if i >= warmup:
                times[name].append(elapsed)
    out = {f"{name}_{q}": _pct(values, p) for name, values in times.items()
           for q, p in (("p50", .5), ("p95", .95))}
    for q in ("p50", "p95"):
        out[f"ratio_{q}"] = out[f"catalog_{q}"] / out[f"plain_{q}"]
        out[f"added_catalog_{q}"] = out[f"catalog_{q}"] - out[f"direct_{q}"]
        out[f"added_plain_{q}"] = out[f"plain_{q}"] - out[f"direct_{q}"]
    return out


def _first_line(stream: IO[bytes]) -> str:
    return stream.readline().decode().strip()


def _http_conns(server: list[str], env: dict[str, str],
                procs: list[subprocess.Popen[bytes]]) -> dict[str, Client]:
    upstream = subprocess.Popen([*server, "--http"], stdout=subprocess.PIPE, env=env)
    procs.append(upstream)
    assert upstream.stdout is not None
    url = _first_line(upstream.stdout)
    time.sleep(0.5)
    conns: dict[str, Client] = {"direct": Http(url)}
    for name, flags in (("catalog", []), ("plain", ["--no-catalog"])):
        argv = [sys.executable, "-m", "mcpeval_nb", "shim-http", "--server", f"bench-{name}", "--listen",
                "127.0.0.1:0", "--upstream", url, *flags]
        shim = subprocess.Popen(argv, stderr=subprocess.PIPE, env=env)
        procs.append(shim)
        assert shim.stderr is not None
        conns[name] = Http(_first_line(shim.stderr).rsplit(" ", 1)[1])
    return conns


def _report(transport: str, rows: Rows) -> list[str]:
    failed = []
    print(f"\n{transport}: round trips in ms; ratio = catalog / no-catalog; added = minus direct")
    print(f"{'case':<18} {'n':>4} {'direct p50/p95':>16} {'no-catalog':>16} {'catalog':>16} "
          f"{'ratio p50/p95':>14} {'added no-cat/cat p50':>21}")
    for name, n, r in rows:
        cells = [f"{r[k + '_p50']:.2f}/{r[k + '_p95']:.2f}" for k in ("direct", "plain", "catalog")]
        added = f"{r['added_plain_p50']:>9.2f}/{r['added_catalog_p50']:<9.2f}"
        print(f"{name:<18} {n:>4} {cells[0]:>16} {cells[1]:>16} {cells[2]:>16} "
              f"{r['ratio_p50']:>6.2f}/{r['ratio_p95']:<6.2f} {added}")
        if name.startswith("tools/list") and r["ratio_p50"] > GOAL_LIST_RATIO:
            failed.append(f"{transport} {name}: ratio {r['ratio_p50']:.2f} > {GOAL_LIST_RATIO}")
    return failed


def _check_records(home: str, *, listings: int, tools: int) -> list[str]:
    """The capture roots hold one complete catalog record of every tool per listing through a shim with
    catalog capture, and none through ``--no-catalog``; returns what is wrong."""
    journals = sorted(Path(home, "store").glob("catalogs-*.jsonl"))
    records = [json.loads(line) for p in journals for line in p.read_text().splitlines()]
    by_server: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_server.setdefault(record["server"], []).append(record)
    catalog = by_server.pop("bench-catalog", [])
    print(f"\ncatalog records: {len(catalog)} through the shims with catalog capture (expected {listings}), "
          f"{sum(map(len, by_server.values()))} through --no-catalog (expected 0)")
    wrong = [f"{len(catalog)} catalog records, expected {listings}"] if len(catalog) != listings else []
    wrong += [f"a record of {len(r['tools'])} tools (complete={r['complete']}), expected {tools}"
              for r in catalog if len(r["tools"]) != tools or not r["complete"]][:3]
    wrong += [f"{len(rs)} catalog records from {name} (catalog capture off)"
              for name, rs in by_server.items()]
    return wrong


def _transport(name: str, conns: dict[str, Client], args: argparse.Namespace) -> Rows:
    call = {"name": "tool_001", "arguments": {"query": "a short query"}}
    cases = [(f"tools/list {args.tools}", lambda i: _frame(i, "tools/list"), args.lists, LIST_WARMUP),
             ("small tools/call", lambda i: _frame(i, "tools/call", call), args.calls, 20)]
    rows = []
    for case, body_for, n, warmup in cases:
        print(f"bench_catalog: {name} {case}: {n} round trips per connection ...", file=sys.stderr,
              flush=True)
        rows.append((case, n, run_case(conns, body_for, n, warmup)))
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the tables; exit 1 when the tools/list goal is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lists", type=int, default=60, help="tools/list round trips per connection")
    parser.add_argument("--calls", type=int, default=300, help="small tools/call round trips per connection")
    parser.add_argument("--tools", type=int, default=500, help="tools the server lists")
    parser.add_argument("--no-http", action="store_true", help="stdio only")
    args, _unknown = parser.parse_known_args(argv)
    server = [sys.executable, many_tools.__file__, str(args.tools)]
    failed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-catalog-") as home:
        env = {**os.environ, "MCPEVAL_HOME": home, "MCPEVAL_SESSION": "bench"}
        stdio: dict[str, Client] = {
            "direct": Stdio(server, env),
            "catalog": Stdio([sys.executable, "-m", "mcpeval_nb", "shim", "--server", "bench-catalog", "--",
                              *server], env),
            "plain": Stdio([sys.executable, "-m", "mcpeval_nb", "shim", "--server", "bench-plain",
                            "--no-catalog", "--", *server], env)}
        try:
            failed += _report("stdio", _transport("stdio", stdio, args))
        finally:
            for conn in stdio.values():
                conn.close()
        if not args.no_http:
            procs: list[subprocess.Popen[bytes]] = []
            try:
                failed += _report("http", _transport("http", _http_conns(server, env, procs), args))
            finally:
                for proc in reversed(procs):
                    proc.terminate()
                    proc.wait(timeout=60)
        per_transport = args.lists + LIST_WARMUP
        failed += _check_records(home, listings=per_transport * (1 if args.no_http else 2), tools=args.tools)
    print(f"goal: tools/list ratio <= {GOAL_LIST_RATIO}, small calls unchanged")
    for line in failed:
        print(f"failed: {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
