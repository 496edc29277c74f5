"""A stop signal taken by a thread other than the main one still stops each long-running command.

The kernel hands a signal sent to a process to any thread that does not block it (on a loaded machine,
often not the main one); Python runs the handler on the main thread, and only once that thread runs again.
These tests send the signal straight to a worker thread (``tgkill``), which is what happened now and then
under load: ``serve`` stayed in ``select`` with a run in flight, and the stdio shim never passed SIGTERM on
to its server.  The mock's HTTP server has the same test in ``test_mock_serve.py``.
"""

from __future__ import annotations

import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

from mcpeval_nb.testing import server_command
from tests import waiting
from tests.processes import cli_listening, killed_after, signal_a_worker_thread
from tests.serve_support import call
from tests.shim_helpers import call as frame
from tests.shim_helpers import children, gone, shim_argv, wait_for


def test_serve_stops_on_a_sigint_taken_by_a_worker_thread_with_a_run_in_flight(root: Path) -> None:
    proc, port = cli_listening(["serve", "--allow-spawn"])
    with killed_after(proc):
        slow = {"version": 1, "sandboxes": {}, "probes": [
            {"id": "slow-read", "probe": "degradation-over-n", "access": "read_only", "tool": "slow",
             "arguments": {"ms": 30000}, "max_attempts": 2}]}
        replies: list[dict[str, Any]] = []
        caller = threading.Thread(target=lambda: replies.append(call(("127.0.0.1", port), "run_probe", {
            "manifest": slow, "command": server_command("transport_fault")})), daemon=True)
        caller.start()
        waiting.until(lambda: bool(children(proc.pid) or replies))
        assert children(proc.pid), replies  # the run started its server (no early refusal)
        signal_a_worker_thread(proc.pid, signal.SIGINT)
        assert waiting.exited(proc, stall_s=20) == 0
        waiting.until(lambda: not caller.is_alive(), stall_s=20)
        assert replies and replies[0]["result"]["content"][0]["text"] == "cancelled: 1 case(s) not run"


def test_shim_http_stops_on_a_sigterm_taken_by_a_worker_thread(root: Path) -> None:
    # no request is sent, so the upstream is never contacted
    proc, _port = cli_listening(["shim-http", "--server", "demo", "--upstream", "http://127.0.0.1:9/mcp"])
    with killed_after(proc):
        signal_a_worker_thread(proc.pid, signal.SIGTERM)
        assert waiting.exited(proc, stall_s=20) == 0


def test_the_stdio_shim_forwards_a_sigterm_taken_by_a_worker_thread(root: Path) -> None:
    with killed_after(subprocess.Popen(shim_argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE)) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(frame(1, "navigate"))
        proc.stdin.flush()
        assert proc.stdout.readline().startswith(b'{"jsonrpc"')
        kids = children(proc.pid)
        signal_a_worker_thread(proc.pid, signal.SIGTERM)
        assert waiting.exited(proc, stall_s=20) == 128 + signal.SIGTERM  # the server died of it
        assert wait_for(lambda: all(gone(k) for k in kids))


def test_a_sigterm_before_the_shim_has_a_session_still_reaches_the_server(root: Path) -> None:
    """The server's first act signals the shim, before any frame and likely before the session's threads
    exist: the signal is held and passed on to the server once it runs, never the shim's own death."""
    argv = shim_argv()
    server = argv[argv.index("--") + 1:]
    racing = [*argv[:argv.index("--") + 1], "sh", "-c", 'kill -TERM "$PPID"; exec "$@"', "sh", *server]
    for _ in range(5):
        with killed_after(subprocess.Popen(racing, stdin=subprocess.PIPE, stdout=subprocess.PIPE)) as proc:
            assert waiting.exited(proc, stall_s=20) == 128 + signal.SIGTERM  # the server died of it
