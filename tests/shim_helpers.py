"""Helpers for the shim tests: run the real CLI as a child process, read the journal, find pids."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mcpeval_nb.testing import server_command

CANARY = "CANARY-7f3a9e"


def shim_argv(*server_args: str, server: str = "demo", fixture: str = "echo") -> list[str]:
    """argv of ``mcpeval-nb shim --server demo -- <fixture server> <args>``."""
    return [sys.executable, "-m", "mcpeval_nb", "shim", "--server", server, "--",
            *server_command(fixture, *server_args)]


def rpc(msg_id: Any, method: str, params: Any = None) -> bytes:
    """One compact JSON-RPC request line."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        msg["params"] = params
    return json.dumps(msg).encode() + b"\n"


def call(msg_id: Any, tool: str, **arguments: Any) -> bytes:
    """One ``tools/call`` request line."""
    return rpc(msg_id, "tools/call", {"name": tool, "arguments": arguments})


def run(argv: list[str], stdin: bytes, *, timeout: float = 60.0,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run argv with all of ``stdin`` as input; bounded."""
    return subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout,
                          env=None if env is None else {**os.environ, **env})


def journal(root: Path) -> list[dict[str, Any]]:
    """Every call record under ``root`` in file order."""
    records: list[dict[str, Any]] = []
    for path in sorted((root / "store").glob("calls-*.jsonl")):
        records += [json.loads(line) for line in path.read_text().splitlines()]
    return records


def store_bytes(root: Path) -> bytes:
    """Every byte under ``<root>/store``."""
    return b"".join(p.read_bytes() for p in sorted((root / "store").rglob("*")) if p.is_file())


def children(pid: int) -> list[int]:
    """Direct children of a process (Linux /proc)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def wait_for(predicate: Any, timeout: float = 20.0) -> bool:
    """Poll ``predicate`` until true or the deadline; returns its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return bool(predicate())


def gone(pid: int) -> bool:
    """True when ``pid`` no longer exists or is a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"
