"""Real external peers: npm ``@modelcontextprotocol/server-everything`` (installed by ``make setup``)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.probe_support import free_port
from tests.processes import stop
from tests.waiting import tree_cpu, until

NODE_DIR = Path(__file__).parent / "node"
EVERYTHING = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
FILESYSTEM = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"


def node_command(script: Path, *args: str) -> list[str]:
    """argv that runs an installed npm server's ``script`` with node.

    In CI (``CI`` set) a missing install is a failure, never a skip.
    """
    node = shutil.which("node")
    if node is None or not script.exists():
        reason = f"{script.parent.parent.name} not installed: run `make setup` (needs node and npm)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return [node, str(script), *args]


def everything_command(mode: str = "stdio") -> list[str]:
    """argv for server-everything in ``stdio`` or ``streamableHttp`` mode."""
    return node_command(EVERYTHING, mode)


@pytest.fixture
def everything_stdio() -> list[str]:
    """argv that starts server-everything on stdio."""
    return everything_command("stdio")


@pytest.fixture
def everything_http() -> Iterator[str]:
    """server-everything in ``streamableHttp`` mode on a free port; yields its loopback endpoint URL."""
    port = free_port()
    proc = subprocess.Popen(everything_command("streamableHttp"), env={**os.environ, "PORT": str(port)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def accepts() -> bool:
            if proc.poll() is not None:
                pytest.fail("server-everything exited before listening")
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return True
            return False

        # given up only after 30 s in which node used no CPU (tests/waiting.py)
        if not until(accepts, stall_s=30.0, progress=lambda: tree_cpu(proc.pid)):
            pytest.fail("server-everything did not start listening")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)
