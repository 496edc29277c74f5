"""Shim lifecycle under stress: frame bounds, duplex volume, and either side going away."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from mcpeval_nb.limits import MAX_FRAME_BYTES
from tests.shim_helpers import CANARY, call, children, gone, journal, run, shim_argv, wait_for


def test_a_frame_of_exactly_four_mib_with_its_newline_is_forwarded(root: Path) -> None:
    frame = b"x" * (MAX_FRAME_BYTES - 1) + b"\n"
    done = run(shim_argv(), frame)
    assert done.returncode == 0
    assert done.stdout == frame  # the echo server echoes unparseable input byte for byte
    assert [r["method"] for r in journal(root)] == ["unparsed/outbound", "unparsed/inbound"]


def test_an_oversized_client_frame_is_refused_without_forwarding_and_both_sides_close(root: Path) -> None:
    oversized = CANARY.encode() * (MAX_FRAME_BYTES // len(CANARY) + 1) + b"\n"
    frames = call(1, "navigate") + oversized + call(2, "x")
    done = run(shim_argv(), frames)
    assert CANARY.encode() not in done.stdout
    assert b'"id": 2' not in done.stdout
    assert b"client frame exceeds 4 MiB" in done.stderr
    assert CANARY.encode() not in done.stderr
    methods = [r["method"] for r in journal(root)]
    assert "unparsed/outbound" in methods
    assert all(CANARY not in json.dumps(r) for r in journal(root))


def test_an_oversized_server_frame_is_refused_and_the_client_sees_end_of_input(root: Path) -> None:
    frames = call(1, "navigate") + call(2, "big", bytes=MAX_FRAME_BYTES)
    done = run(shim_argv(), frames)
    assert done.stdout == b'{"jsonrpc": "2.0", "id": 1, "result": {"echo": true}}\n'
    assert b"server frame exceeds 4 MiB" in done.stderr
    assert [r["method"] for r in journal(root)] == ["tools/call", "unparsed/inbound"]


def test_no_deadlock_when_client_and_server_both_write_large_volumes(root: Path) -> None:
    lines, width, size = 3000, 1000, 2_000_000
    frame = b"y" * (size - 1) + b"\n"
    done = run(shim_argv("--duplex-stress", str(lines), str(width), str(size)), frame, timeout=90)
    assert done.returncode == 0
    out = done.stdout.splitlines()
    assert len(out) == lines + 1
    assert json.loads(out[-1])["result"] == {"read": size}
    assert sum(1 for r in journal(root) if r["method"] == "unparsed/inbound") == lines


def test_client_end_of_input_ends_the_shim_with_the_server_exit_code(root: Path) -> None:
    assert run(shim_argv("--exit-on-eof", "4"), call(1, "navigate")).returncode == 4


def test_a_server_that_ignores_end_of_input_is_terminated_after_the_grace_period(root: Path) -> None:
    done = run(shim_argv("--ignore-eof"), call(1, "navigate"), timeout=30)
    assert done.returncode == 128 + signal.SIGTERM
    assert journal(root)[0]["outcome"] == "ok"


def _started(root: Path) -> tuple[subprocess.Popen[bytes], int]:
    proc = subprocess.Popen(shim_argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(call(1, "navigate"))
    proc.stdin.flush()
    assert proc.stdout.readline().startswith(b'{"jsonrpc"')
    kids = children(proc.pid)
    assert len(kids) == 1
    return proc, kids[0]


def test_killing_the_server_ends_the_shim_promptly_with_128_plus_signal(root: Path) -> None:
    proc, server = _started(root)
    try:
        os.kill(server, signal.SIGKILL)
        assert proc.wait(timeout=20) == 128 + signal.SIGKILL
    finally:
        proc.kill()
        proc.wait()
    assert journal(root)[0]["tool"] == "navigate"


def test_closing_the_client_pipes_ends_the_shim_and_reaps_the_server(root: Path) -> None:
    proc, server = _started(root)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        proc.stdout.close()
        assert proc.wait(timeout=20) == 0
    finally:
        proc.kill()
        proc.wait()
    assert wait_for(lambda: gone(server))


def test_killing_the_client_side_closes_the_server_stdin(root: Path) -> None:
    proc, server = _started(root)
    try:
        proc.send_signal(signal.SIGKILL)  # the shim dies with the client: the server sees end of input
        proc.wait(timeout=20)
        assert wait_for(lambda: gone(server))
    finally:
        proc.kill()
        proc.wait()


def test_sigterm_to_the_shim_is_forwarded_to_the_server(root: Path) -> None:
    proc, server = _started(root)
    try:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 128 + signal.SIGTERM
        assert wait_for(lambda: gone(server))
    finally:
        proc.kill()
        proc.wait()
