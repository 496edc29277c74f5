"""Real external peers: npm ``@modelcontextprotocol/server-everything`` (installed by ``make setup``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

NODE_DIR = Path(__file__).parent / "node"
EVERYTHING = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


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
