"""Test and demo helpers shipped with the package: fixture MCP servers, synthetic stores, canaries.

Fixture servers live in ``mcpeval_nb.testing.servers`` and run as ``python -m
mcpeval_nb.testing.servers.<name> [mode]``; ``server_command(name, *args)`` builds that argv.
"""

from __future__ import annotations

import sys

# --- tables (issue 4): synthetic capture roots and canary journals ---------------------------------
from .canary import CanaryStore, canary_store
from .synthetic import SyntheticStore, synthetic_store

__all__ = ["CanaryStore", "SyntheticStore", "canary_store", "server_command", "synthetic_store"]


def server_command(name: str, *args: str) -> list[str]:
    """The argv that starts fixture server ``name`` with this interpreter."""
    return [sys.executable, "-m", f"mcpeval_nb.testing.servers.{name}", *args]
