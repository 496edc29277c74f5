"""Helpers for tests against the era fixture servers (official SDK, both protocol eras; no mocks)."""

from __future__ import annotations

import contextlib
import select
import subprocess
import sys
from collections.abc import Iterator

from mcpeval_nb.transport import HttpTarget, StdioTarget

from .processes import stop

PEERS = "mcpeval_nb.testing.servers.era_peers"


def era_argv(era: str, transport: str = "stdio") -> list[str]:
    """argv of the SDK era fixture: ``era`` is modern, dual or legacy."""
    return [sys.executable, "-m", PEERS, era, transport]


def era_stdio(era: str) -> StdioTarget:
    """A stdio target running the era fixture."""
    return StdioTarget(tuple(era_argv(era)))


@contextlib.contextmanager
def era_http(era: str) -> Iterator[HttpTarget]:
    """Run the era fixture over Streamable HTTP on loopback; yield its target; stop and reap it."""
    proc = subprocess.Popen(era_argv(era, "http"), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 120.0)
        assert ready, "era fixture did not start"
        url = proc.stdout.readline().decode().strip()
        assert url.startswith("http://127.0.0.1:")
        yield HttpTarget(url)
    finally:
        stop(proc)
        if proc.stdout is not None:
            proc.stdout.close()
