"""Helpers for the shim tests: run the real CLI as a child process, read the journal, find pids."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from mcpeval_nb import ShimOptions, run_shim
from mcpeval_nb.capture.frames import write_all
from mcpeval_nb.testing.servers import echo
from tests import waiting
from tests.processes import listening
from tests.waiting import until

CANARY = "CANARY-7f3a9e"


def echo_argv(*args: str) -> list[str]:
    """The echo fixture run as a script: it needs only the standard library, so it starts fast."""
    return [sys.executable, echo.__file__, *args]


def shim_argv(*server_args: str, server: str = "demo", flags: tuple[str, ...] = ()) -> list[str]:
    """argv of ``mcpeval-nb shim --server demo [flags] -- <echo fixture> <args>`` (the real CLI)."""
    return [sys.executable, "-m", "mcpeval_nb", "shim", "--server", server, *flags, "--",
            *echo_argv(*server_args)]


def shim_inproc(root: Path, stdin: bytes, *server_args: str, session: str | None = None,
                command: list[str] | None = None, on_start: Any = None,
                strict_frames: bool = False) -> tuple[int, bytes]:
    """Run the shim in this process on real pipes against the echo fixture; returns (exit code, output)."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    output: list[bytes] = []

    def feed() -> None:
        with contextlib.suppress(OSError):
            write_all(in_w, stdin)
        os.close(in_w)

    def drain() -> None:
        with open(out_r, "rb") as fh:
            output.append(fh.read())

    threads = [threading.Thread(target=feed, daemon=True), threading.Thread(target=drain, daemon=True)]
    for thread in threads:
        thread.start()
    try:
        options = ShimOptions(server="demo", command=command or echo_argv(*server_args), root=root,
                              session=session, stdin_fd=in_r, stdout_fd=out_w, strict_frames=strict_frames)
        code = run_shim(options, on_start=on_start)
    finally:
        os.close(in_r)
        os.close(out_w)  # the shim pointed it at /dev/null when the server's output ended
    until(lambda: not any(thread.is_alive() for thread in threads))
    return code, output[0] if output else b""


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
    """Run argv with all of ``stdin`` as input; given up only after ``timeout`` seconds in which neither it
    nor its children used any CPU (tests/waiting.py)."""
    return waiting.run(argv, input=stdin, capture_output=True, stall_s=timeout,
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
    """Poll ``predicate`` until true; give up only after ``timeout`` seconds in which neither this process's
    other threads nor any process it started used CPU (tests/waiting.py).  Returns its last value."""
    return until(predicate, stall_s=timeout)


def wait_progressing(value: Any, done: Any, *, stall_s: float = 60.0) -> bool:
    """Poll ``value()`` until ``done(value)``, for as long as the value keeps changing: give up only after
    ``stall_s`` without a change, however long the whole wait lasts (a loaded machine is slow, never
    stuck).  Returns whether it got done."""
    last, since = value(), time.monotonic()
    while not done(last):
        time.sleep(0.02)
        now = value()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since > stall_s:
            return bool(done(value()))
    return True


def gone(pid: int) -> bool:
    """True when ``pid`` no longer exists or is a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


def wait_listening(url: str, timeout: float = 30.0) -> None:
    """Wait until a printed endpoint URL accepts connections (servers print it just before listening)."""
    listening(url, timeout)
