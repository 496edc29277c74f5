"""The standard battery against real-world servers: npm server-everything and PyPI mcp-server-time.

Real servers change between releases, so these tests assert structure and stability across two runs
(same areas, weights, surface and lost checks; latency bands may move), not exact scores.
"""

from __future__ import annotations

import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema
import pytest

import mcpeval_nb
from mcpeval_nb import BatteryOptions, Readiness, StdioTarget, parse_readiness, score_server
from mcpeval_nb.probe.readiness.score import round_half_away

pytestmark = pytest.mark.e2e

AREAS = [("protocol", 15), ("catalog", 20), ("context", 15), ("error-honesty", 15), ("reliability", 20),
         ("coverage", 15)]


def battery(argv: list[str], **options: object) -> Readiness:
    opts = BatteryOptions(**{"history": False, **options})  # type: ignore[arg-type]
    report = score_server(StdioTarget(tuple(argv)), server="real", options=opts)
    assert report.readiness_error is None and report.readiness is not None
    jsonschema.validate(report.to_json(), mcpeval_nb.report_schema())
    return parse_readiness(report.to_json()["readiness"])


def twice(argv: list[str], **options: object) -> tuple[Readiness, Readiness]:
    """Two independent runs, side by side (each has its own processes and budget)."""
    with ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(battery, argv, **options) for _ in range(2)]
        return runs[0].result(timeout=300), runs[1].result(timeout=300)


def stable_view(r: Readiness) -> tuple[object, ...]:
    """Everything but latency-dependent parts: area scores (reliability aside), surface, lost checks."""
    scores = tuple((a.name, a.weight, a.score) for a in r.areas if a.name != "reliability")
    checks = tuple((c.id, c.tool, c.reason) for a in r.areas for c in a.checks
                   if c.id != "reliability.latency")
    return scores, checks, r.surface, r.measurement_profile


def assert_structure(r: Readiness) -> None:
    assert [(a.name, a.weight) for a in r.areas] == AREAS
    assert 0 <= r.score <= 100 and all(0 <= a.score <= 100 for a in r.areas)
    assert r.score == round_half_away(sum(a.weight * a.score for a in r.areas) / 100)
    assert r.surface.read_only == r.surface.tools - r.surface.writers
    assert r.measurement_profile is not None and r.measurement_profile.repeats == 3


def test_server_everything_scores_with_stable_structure(root: Path, everything_stdio: list[str]) -> None:
    # its trigger-long-running-operation sleeps 10 s per call by default: skip it to keep the test short
    skip = ("trigger-long-running-operation",)
    first, second = twice(everything_stdio, skip_tools=skip)
    for r in (first, second):
        assert_structure(r)
        assert r.surface.tools >= 10 and r.surface.writers >= 1
        assert r.area("protocol").score == 100
        assert ("reliability.skipped", skip[0], "coverage-skipped") in [
            (c.id, c.tool, c.reason) for c in r.area("reliability").checks]
    assert stable_view(first) == stable_view(second)
    assert not (root / "store").exists()


def test_mcp_server_time_scores_with_stable_structure(root: Path) -> None:
    exe = shutil.which("mcp-server-time", path=str(Path(sys.executable).parent))
    argv = [exe] if exe else [sys.executable, "-m", "mcp_server_time"]
    first, second = twice(argv)
    for r in (first, second):
        assert_structure(r)
        assert (r.surface.tools, r.surface.writers) == (2, 0)
        # both tools require an IANA timezone; the synthesized "mcpeval" is refused with an isError result
        assert r.area("error-honesty").score == 100 and r.area("protocol").score == 100
    assert stable_view(first) == stable_view(second)


class _ProxyTrap:
    """A loopback listener standing in for an HTTP proxy: it counts connection attempts and closes them,
    so a server that tries to reach the internet through it reaches nothing."""

    def __init__(self) -> None:
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        self.sock.close()


def test_the_battery_never_calls_mcp_server_fetch_unless_open_world_is_allowed() -> None:
    trap = _ProxyTrap()
    proxy = f"http://127.0.0.1:{trap.port}"
    env = {key: proxy for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                                  "all_proxy")}
    target = StdioTarget((sys.executable, "-m", "mcp_server_fetch"), env={**env, "NO_PROXY": ""})
    try:
        plain = score_server(target, server="fetch", options=BatteryOptions(history=False))
        assert trap.connections == 0
        assert plain.readiness is not None
        reasons = {(c.tool, c.reason) for a in plain.readiness.areas for c in a.checks}
        assert ("fetch", "coverage-open-world") in reasons
        allowed = score_server(target, server="fetch",
                               options=BatteryOptions(history=False, allow_open_world=True))
        assert allowed.readiness is not None
        assert trap.connections >= 1  # the fetch calls really tried to go out (and hit the trap)
    finally:
        trap.close()
