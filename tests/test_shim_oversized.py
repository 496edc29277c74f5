"""Frames over 4 MiB through the stdio shim: forwarded unchanged in bounded memory, recorded content-free."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mcpeval_nb.limits import MAX_FRAME_BYTES
from tests.processes import stop
from tests.shim_helpers import (
    CANARY,
    call,
    children,
    echo_argv,
    journal,
    run,
    shim_argv,
    shim_inproc,
    store_bytes,
    wait_for,
)


def test_an_oversized_server_answer_is_forwarded_unchanged_and_recorded_as_its_call(
        root: Path, capfd: pytest.CaptureFixture[str]) -> None:
    frames = (call(1, "navigate") + call(2, "big", bytes=6_000_000) + call(3, "big", bytes=MAX_FRAME_BYTES)
              + call(4, "navigate", note=CANARY))
    direct = run(echo_argv(), frames)
    code, output = shim_inproc(root, frames)
    assert code == 0 and output == direct.stdout
    records = journal(root)
    assert [(r["seq"], r["tool"], r["outcome"], r.get("error")) for r in records] == [
        (1, "navigate", "ok", None),
        (2, "big", "unknown", {"code": "capture-answer-oversized"}),
        (3, "big", "unknown", {"code": "capture-answer-oversized"}),
        (4, "navigate", "ok", None)]
    assert records[1]["args"] == {"bytes": "num:6000000"} and isinstance(records[1]["latency_ms"], int)
    err = capfd.readouterr().err
    assert err.count("exceeds 4 MiB") == 1  # said once
    assert "a server frame exceeds 4 MiB; forwarded unchanged" in err
    assert CANARY not in err and CANARY.encode() not in store_bytes(root)


def test_an_oversized_client_frame_is_forwarded_unchanged_and_recorded_unparsed(
        root: Path, capfd: pytest.CaptureFixture[str]) -> None:
    oversized = CANARY.encode() * (5 * MAX_FRAME_BYTES // 4 // len(CANARY)) + b"\n"
    frames = call(1, "navigate") + oversized + call(2, "navigate")
    code, output = shim_inproc(root, frames)  # the echo fixture echoes unparseable lines back
    assert code == 0 and output == run(echo_argv(), frames).stdout
    records = [(r["method"], r["outcome"]) for r in journal(root)]
    # a call is journaled when its answer comes back, a client frame as it goes out: the two pumps race,
    # so only the server's side has an order (the answer to 1, the echoed frame, the answer to 2)
    assert sorted(records) == sorted([("tools/call", "ok"), ("unparsed/outbound", "unparsed"),
                                      ("unparsed/inbound", "unparsed"), ("tools/call", "ok")])
    assert [r for r in records if r[0] != "unparsed/outbound"] == [
        ("tools/call", "ok"), ("unparsed/inbound", "unparsed"), ("tools/call", "ok")]
    err = capfd.readouterr().err
    assert "a client frame exceeds 4 MiB" in err and CANARY not in err
    assert CANARY.encode() not in store_bytes(root)


def _peak_rss_kib(frame: bytes) -> int:
    """Peak RSS of the shim CLI process (not its server or recorder) while it forwards ``frame`` both ways."""
    proc = subprocess.Popen(shim_argv("--ignore-eof"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    kids: list[int] = []
    try:
        proc.stdin.write(frame)
        proc.stdin.close()
        assert proc.stdout.read(len(frame)) == frame  # echoed back through the shim
        kids = children(proc.pid)  # the server (it ignores end of input) and the recorder
        status = Path(f"/proc/{proc.pid}/status").read_text()
        return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1])
    finally:
        # SIGTERM, which the shim passes to its server: a SIGKILL would orphan a server that ignores
        # end of input, and it would run on after the test.
        stop(proc, timeout=30)
        assert wait_for(lambda: not [k for k in kids if Path(f"/proc/{k}").exists()
                                     and Path(f"/proc/{k}/stat").read_text().split()[2] != "Z"], timeout=30)


def test_forwarding_a_frame_far_over_the_bound_keeps_the_shims_memory_within_the_bound() -> None:
    small = _peak_rss_kib(b"x" * 1000 + b"\n")
    huge = _peak_rss_kib(b"x" * (6 * MAX_FRAME_BYTES) + b"\n")  # 24 MiB each way
    assert huge - small < 3 * MAX_FRAME_BYTES // 1024, (small, huge)


def test_strict_frames_on_the_cli_keeps_the_reference_refusal(root: Path) -> None:
    frames = call(1, "navigate") + call(2, "big", bytes=MAX_FRAME_BYTES) + call(3, "navigate")
    result = run(shim_argv(flags=("--strict-frames",)), frames)
    assert result.stdout == b'{"jsonrpc": "2.0", "id": 1, "result": {"echo": true}}\n'
    assert b"server frame exceeds 4 MiB; not forwarded, closing both sides" in result.stderr
    assert [r["method"] for r in journal(root)] == ["tools/call", "unparsed/inbound"]
    assert json.dumps(journal(root)).count("capture-answer-oversized") == 0
