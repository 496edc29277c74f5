"""Test and demo helpers shipped with the package: fixture MCP servers, synthetic stores, canaries.

Fixture servers live in ``mcpeval_nb.testing.servers`` and run as ``python -m
mcpeval_nb.testing.servers.<name> [mode]``; ``server_command(name, *args)`` builds that argv.
"""

from __future__ import annotations

import sys

__all__ = ["server_command"]


def server_command(name: str, *args: str) -> list[str]:
    """The argv that starts fixture server ``name`` with this interpreter."""
    return [sys.executable, "-m", f"mcpeval_nb.testing.servers.{name}", *args]
