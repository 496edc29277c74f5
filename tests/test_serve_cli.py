"""``mcpeval-nb serve`` on the command line: --print-config, the loopback rule, a bound port, and a
clean stop on SIGINT with a spawned run in flight (its server reaped)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from mcpeval_nb.testing import server_command
from tests import waiting
from tests.serve_support import call, children
from tests.waiting import until

SERVE = [sys.executable, "-m", "mcpeval_nb", "serve"]


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return waiting.run([*SERVE, *args], capture_output=True, text=True, stall_s=60, env=env)


def test_print_config_names_the_address_root_salt_and_tools(root: Path) -> None:
    done = _run("--listen", "127.0.0.1:8940", "--print-config")
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.splitlines() == [
        "listen 127.0.0.1:8940",
        f"root {root} (from $MCPEVAL_HOME)",
        f"salt {root / '.salt'} (the fingerprint secret: never share or commit it)",
        "tools list_findings, get_finding, get_readiness_trends, record_annotation, get_catalog_status",
        "spawn tools disabled: run_probe, scaffold, score, verify_finding (they launch server processes; "
        "pass --allow-spawn)",
        "retention unset: nothing is ever deleted",
    ]
    assert not root.exists()  # nothing created, nothing bound


def test_print_config_with_allow_spawn_and_root(tmp_path: Path) -> None:
    done = _run("--listen", "[::1]:0", "--allow-spawn", "--print-config", "--root", str(tmp_path))
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and lines[0] == "listen [::1]:0"
    assert lines[1] == f"root {tmp_path} (from --root)"
    assert lines[3] == ("tools list_findings, get_finding, get_readiness_trends, run_probe, scaffold, score, "
                        "verify_finding, record_annotation, get_catalog_status")
    assert lines[4].startswith("spawn tools enabled by --allow-spawn: run_probe, scaffold, score, "
                               "verify_finding")


def test_a_non_loopback_listen_address_is_a_usage_error(root: Path) -> None:
    for address in ("0.0.0.0:8940", "10.1.2.3:80", "[::]:80"):
        done = _run("--listen", address)
        assert (done.returncode, done.stderr) == (2, "mcpeval-nb: findings servers must use a loopback "
                                                     "address\n")
    done = _run("--listen", "localhost:8940")
    assert done.returncode == 2 and "socket address" in done.stderr


def test_a_port_in_use_is_a_usage_error(root: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        done = _run("--listen", f"127.0.0.1:{taken.getsockname()[1]}")
    assert done.returncode == 2
    assert done.stderr.startswith("mcpeval-nb: cannot listen on the --listen address")


def test_sigint_stops_serve_cleanly_and_reaps_a_running_probe(root: Path) -> None:
    proc = subprocess.Popen([*SERVE, "--listen", "127.0.0.1:0", "--allow-spawn"], stderr=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stderr is not None
        address = ("127.0.0.1", int(proc.stderr.readline().rsplit(":", 1)[1].split("/")[0]))
        slow = {"version": 1, "sandboxes": {}, "probes": [
            {"id": "slow-read", "probe": "degradation-over-n", "access": "read_only", "tool": "slow",
             "arguments": {"ms": 30000}, "max_attempts": 2}]}
        replies: list[dict[str, Any]] = []
        caller = threading.Thread(target=lambda: replies.append(call(address, "run_probe", {
            "manifest": slow, "command": server_command("transport_fault")})))
        caller.start()
        assert until(lambda: bool(children(proc.pid))), "the run never started its server"
        pids = sorted(children(proc.pid))
        proc.send_signal(signal.SIGINT)
        assert waiting.exited(proc, stall_s=20) == 0
        until(lambda: not caller.is_alive(), stall_s=20)
        assert replies and replies[0]["result"]["content"][0]["text"] == "cancelled: 1 case(s) not run"
        for pid in pids:
            stat = Path(f"/proc/{pid}/stat")
            assert not stat.exists() or stat.read_text().split()[2] == "Z"  # reaped (or reaping)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
