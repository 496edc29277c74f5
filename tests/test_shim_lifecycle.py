"""Shim lifecycle under stress: frame bounds, duplex volume, and either side going away."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from mcpeval_nb.limits import MAX_FRAME_BYTES
from tests import waiting
from tests.shim_helpers import CANARY, call, children, gone, journal, shim_argv, shim_inproc, wait_for


def test_a_frame_of_exactly_four_mib_with_its_newline_is_forwarded(root: Path) -> None:
    frame = b"x" * (MAX_FRAME_BYTES - 1) + b"\n"
    assert shim_inproc(root, frame) == (0, frame)  # the echo server echoes unparseable input as is
    assert [r["method"] for r in journal(root)] == ["unparsed/outbound", "unparsed/inbound"]


def test_with_strict_frames_an_oversized_client_frame_is_refused_and_both_sides_close(
        root: Path, capfd: pytest.CaptureFixture[str]) -> None:
    oversized = CANARY.encode() * (MAX_FRAME_BYTES // len(CANARY) + 1) + b"\n"
    frames = call(1, "navigate") + oversized + call(2, "x")
    code, output = shim_inproc(root, frames, strict_frames=True)
    assert code == 0
    assert CANARY.encode() not in output
    assert b'"id": 2' not in output
    err = capfd.readouterr().err
    assert "client frame exceeds 4 MiB" in err
    assert CANARY not in err
    methods = [r["method"] for r in journal(root)]
    assert "unparsed/outbound" in methods
    assert all(CANARY not in json.dumps(r) for r in journal(root))


def test_with_strict_frames_an_oversized_server_frame_is_refused_and_the_client_sees_end_of_input(
        root: Path, capfd: pytest.CaptureFixture[str]) -> None:
    frames = call(1, "navigate") + call(2, "big", bytes=MAX_FRAME_BYTES)
    _, output = shim_inproc(root, frames, strict_frames=True)
    assert output == b'{"jsonrpc": "2.0", "id": 1, "result": {"echo": true}}\n'
    assert "server frame exceeds 4 MiB" in capfd.readouterr().err
    assert [r["method"] for r in journal(root)] == ["tools/call", "unparsed/inbound"]


def test_no_deadlock_when_client_and_server_both_write_large_volumes(root: Path) -> None:
    lines, width, size = 3000, 1000, 2_000_000
    frame = b"y" * (size - 1) + b"\n"
    code, output = shim_inproc(root, frame, "--duplex-stress", str(lines), str(width), str(size))
    assert code == 0
    out = output.splitlines()
    assert len(out) == lines + 1
    assert json.loads(out[-1])["result"] == {"read": size}
    assert sum(1 for r in journal(root) if r["method"] == "unparsed/inbound") == lines


def test_client_end_of_input_ends_the_shim_with_the_server_exit_code(root: Path) -> None:
    assert shim_inproc(root, call(1, "navigate"), "--exit-on-eof", "4")[0] == 4


def test_a_server_that_ignores_end_of_input_keeps_running_while_the_client_reads(root: Path) -> None:
    proc = subprocess.Popen(shim_argv("--ignore-eof"), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(call(1, "navigate"))
        proc.stdin.close()
        assert proc.stdout.readline().startswith(b'{"jsonrpc"')
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=3)  # the client still holds our output: nothing is killed
        proc.stdout.close()  # now the client is gone: grace period, then SIGTERM
        assert waiting.exited(proc, stall_s=30) == 128 + signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()
    assert journal(root)[0]["outcome"] == "ok"


def _started(root: Path) -> tuple[subprocess.Popen[bytes], int, int]:
    """A CLI shim with one answered call; returns it, the server's pid and the recorder child's pid."""
    proc = subprocess.Popen(shim_argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(call(1, "navigate"))
    proc.stdin.flush()
    assert proc.stdout.readline().startswith(b'{"jsonrpc"')
    kids = children(proc.pid)
    argvs = {k: Path(f"/proc/{k}/cmdline").read_bytes().split(b"\0") for k in kids}
    servers = [k for k, argv in argvs.items() if argv[1].endswith(b"echo.py")]
    assert len(kids) == 2 and len(servers) == 1
    return proc, servers[0], next(k for k in kids if k != servers[0])


def test_killing_the_server_ends_the_shim_promptly_with_128_plus_signal(root: Path) -> None:
    def kill_after_first_record(pid: int) -> None:
        def kill() -> None:
            wait_for(lambda: len(journal(root)) == 1 if (root / "store").exists() else False)
            os.kill(pid, signal.SIGKILL)

        threading.Thread(target=kill, daemon=True).start()

    code, output = shim_inproc(root, call(1, "navigate"), "--ignore-eof", on_start=kill_after_first_record)
    assert code == 128 + signal.SIGKILL
    assert output.startswith(b'{"jsonrpc"')
    assert journal(root)[0]["tool"] == "navigate"


def test_closing_the_client_pipes_ends_the_shim_and_reaps_the_server(root: Path) -> None:
    proc, server, recorder = _started(root)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        proc.stdout.close()
        assert waiting.exited(proc, stall_s=20) == 0
    finally:
        proc.kill()
        proc.wait()
    assert wait_for(lambda: gone(server) and gone(recorder))
    assert journal(root)[0]["tool"] == "navigate"


def test_killing_the_client_side_closes_the_server_stdin(root: Path) -> None:
    proc, server, recorder = _started(root)
    try:
        proc.send_signal(signal.SIGKILL)  # the shim dies with the client: the server sees end of input
        proc.wait(timeout=20)
        assert wait_for(lambda: gone(server) and gone(recorder))
    finally:
        proc.kill()
        proc.wait()


def test_sigterm_to_the_shim_is_forwarded_to_the_server(root: Path) -> None:
    proc, server, recorder = _started(root)
    try:
        proc.send_signal(signal.SIGTERM)
        assert waiting.exited(proc, stall_s=20) == 128 + signal.SIGTERM
        assert wait_for(lambda: gone(server) and gone(recorder))
    finally:
        proc.kill()
        proc.wait()


def test_an_unwritable_journal_is_reported_without_content_and_forwarding_continues(
        root: Path, capfd: pytest.CaptureFixture[str]) -> None:
    root.mkdir(parents=True)
    (root / "store").write_text("not a directory")
    frames = b"".join(call(i, "navigate", secret=CANARY) for i in range(1, 9))
    code, output = shim_inproc(root, frames)
    assert code == 0
    assert output.count(b'"echo": true') == 8
    err = capfd.readouterr().err
    assert re.search(r"records? seq 1(-\d+)? (was|were) not journaled", err)  # batches vary with timing
    assert "8 records were not journaled (8 calls, 0 notifications, 0 unparsed)" in err
    assert CANARY not in err


def test_a_server_that_closes_its_output_but_lives_on_is_terminated_after_a_grace_period(root: Path) -> None:
    code, output = shim_inproc(root, call(1, "navigate") + call(2, "navigate"), "--close-stdout")
    assert code == 128 + signal.SIGTERM
    assert output == b'{"jsonrpc": "2.0", "id": 1, "result": {"echo": true}}\n'
    assert [r["seq"] for r in journal(root)] == [1]
