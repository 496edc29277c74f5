"""The mock behaves like the recording: over 2,100 calls of a recorded profile at --speed 1, each tool's
outcome shares fall inside the recorded Wilson 95% intervals, and its latency p50 and p95 (measured by
the client, around each HTTP request) inside the recorded bootstrap 95% intervals.

Why this cannot flake.  The recording (``WIDE``: three tools, 200 calls each, log-normal latencies with
medians of 240-360 ms)
is written through the journal writer from a fixed seed, so the recorded intervals are fixed.  The
mock's draws are fixed too: the k-th call of a tool draws from ``(seed, tool, k)`` whatever the
interleaving of the 24 client threads, so every outcome share and every drawn latency below is the
same on every run.  For a *random* seed the chance that a share leaves its interval is about 0.03% per
share (700 mock draws from the recorded shares against an interval of 200 recorded calls: the interval's
half-width is 3.7 standard deviations of the mock's share), and a drawn percentile about as small;
``SEED`` is one such seed and fixed.  The only part that varies between runs is the time the
machine adds to each drawn latency (HTTP on loopback, thread scheduling): with this seed every drawn
percentile lies at least 12 ms below its interval's upper bound (chosen among seeds 0-79 for the most
room; the test prints the room left after the added time), so the test fails only if the time added at
that percentile exceeds 12 ms, which needs a machine so loaded that the median request waits that long
to be scheduled (on the 2-core test machine at load 9 it added 2-4 ms).
"""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import mcpeval_nb as me
from tests.mock_support import SERVER, WIDE, call, mock_process, outcome_of, write_recorded

SEED = 7
CALLS_PER_TOOL = 700
THREADS = 24


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[me.MockProfile, Path]:
    base = tmp_path_factory.mktemp("mock-stats")
    write_recorded(base / "root")
    profile = me.mock_profile(base / "root", server=SERVER)
    return profile, profile.write(base / "p.json")


def _drive(url: str) -> list[tuple[str, tuple[str, int | None, str | None], float]]:
    plan = [(WIDE[i % 3].name, WIDE[i % 3].args[0]) for i in range(3 * CALLS_PER_TOOL)]
    results: list[tuple[str, tuple[str, int | None, str | None], float]] = []
    lock = threading.Lock()
    todo = iter(enumerate(plan))

    def worker() -> None:
        while True:
            with lock:
                item = next(todo, None)
            if item is None:
                return
            index, (tool, args) = item
            answer, elapsed = call(url, tool, args, index)
            with lock:
                results.append((tool, outcome_of(answer), elapsed))

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_outcome_shares_and_latency_percentiles_fall_inside_the_recorded_intervals(
        recorded: tuple[me.MockProfile, Path]) -> None:
    profile, path = recorded
    with mock_process("--from-profile", str(path), "--seed", str(SEED), "--speed", "1") as url:
        results = _drive(url)
    assert len(results) == 3 * CALLS_PER_TOOL
    shares = profile.outcomes.to_pylist()
    for tool in (b.name for b in WIDE):
        mine = [r for r in results if r[0] == tool]
        counted = Counter(outcome for _, outcome, _ in mine)
        for row in (r for r in shares if r["tool"] == tool):
            share = sum(n for (kind, code, template), n in counted.items()
                        if (kind, code) == (row["outcome"], row["code"])
                        and (kind == "ok" or template == row["template_id"])) / len(mine)
            assert row["share_low"] <= share <= row["share_high"], (tool, row, share)
        latencies = np.array([elapsed for *_, elapsed in mine])
        spec = profile.tool(tool)
        assert spec is not None
        for q, interval in ((50, spec.latency.p50), (95, spec.latency.p95)):
            seen = float(np.percentile(latencies, q))
            assert interval.low is not None and interval.high is not None
            print(f"{tool} p{q}: {seen:.1f} ms in [{interval.low:.1f}, {interval.high:.1f}] "
                  f"(room {interval.high - seen:.1f} ms)")
            assert interval.low <= seen <= interval.high, (tool, q, seen, interval)
