"""Shutdown never loses records silently: recorders drain while they progress, and count what they lose."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mcpeval_nb.capture.correlate import Correlator
from mcpeval_nb.capture.recorder import Frame, Recorder
from mcpeval_nb.capture.recorder_fork import ForkedRecorder
from mcpeval_nb.clock import now_ts
from mcpeval_nb.root import load_salt
from mcpeval_nb.root.layout import calls_path
from tests import waiting
from tests.shim_helpers import CANARY, call, journal, run, shim_argv, wait_for, wait_progressing
from tests.shim_http_upstream import upstream

NOTE = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"n"}}\n'


def _correlator(root: Path) -> Correlator:
    return Correlator(server="demo", session="s", salt=load_salt(root))


def test_a_notification_burst_through_the_shim_is_recorded_completely(root: Path) -> None:
    result = run(shim_argv("--notify-burst", "50000"), b"", timeout=120)
    assert result.returncode == 0 and result.stdout.count(b"\n") == 50000
    records = journal(root)
    assert len(records) == 50000 and {r["method"] for r in records} == {"notifications/message"}
    assert [r["seq"] for r in records[:3]] == [1, 2, 3] and records[-1]["seq"] == 50000
    assert b"not recorded" not in result.stderr and b"not journaled" not in result.stderr


def test_an_exited_server_s_last_frames_reach_a_slow_client(root: Path) -> None:
    """The server writes its notifications and exits while up to two pipes' worth are still on the way;
    the client reads slowly.  Every frame reaches it: the shim forwards until the server's output ends,
    and only an idle output (never a slow reader or a slow machine) would end that wait.  (It waited a
    fixed second, then dropped what was left: 40,932 of 50,000 lines once under load.)"""
    lines = 30000
    proc = subprocess.Popen(shim_argv("--notify-burst", str(lines)), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    received = bytearray()
    while chunk := proc.stdout.read1(4096):
        received += chunk
        time.sleep(0.01)  # a slow reader: about 400 KB/s, so the last MiBs take seconds after the exit
    assert waiting.exited(proc, stall_s=120) == 0
    assert received.count(b"\n") == lines and bytes(received) == NOTE * lines
    assert len(journal(root)) == lines


@pytest.mark.parametrize("cls", [ForkedRecorder, Recorder])
def test_a_recorder_that_keeps_making_progress_is_drained_past_any_fixed_deadline(
        root: Path, cls: type[Recorder | ForkedRecorder]) -> None:
    """The journal lock is held six times for 1 s, each time given back only until the recorder has
    written another seventh of the records: the drain lasts at least 6 s, longer than its 5 s stall
    window, and every record is written, so only the recorder's progress can have kept the drain going
    (no race with the clock: the lower bound is the holds').  After each hold the recorder has 4 s to
    show progress again: the forked child runs at nice 10, and a loaded machine may not run it at once."""
    holds, hold_s, stall_s, frames = 6, 1.0, 5.0, 100000
    path = calls_path(root, now_ts()[:10])
    path.parent.mkdir(parents=True, exist_ok=True)
    recorder = ForkedRecorder(root=root, correlator=lambda: _correlator(root)) if cls is ForkedRecorder \
        else Recorder(root=root, correlator=_correlator(root))
    with open(path, "ab") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        _feed(recorder, [Frame("inbound", NOTE) for _ in range(frames)])

        def interrupt() -> None:
            for i in range(1, holds + 1):
                time.sleep(hold_s)
                fcntl.flock(held, fcntl.LOCK_UN)
                if i < holds:  # however slow the machine: as long as the recorder writes
                    assert wait_progressing(lambda: path.read_bytes().count(b"\n"),
                                            lambda lines, n=i * frames // (holds + 1): lines >= n)
                    fcntl.flock(held, fcntl.LOCK_EX)

        gate = threading.Thread(target=interrupt)
        started = time.monotonic()
        gate.start()
        drained = recorder.close(stall_s=stall_s)
        elapsed = time.monotonic() - started
        gate.join()
    assert drained
    assert elapsed >= holds * hold_s > stall_s
    assert len(journal(root)) == frames


def test_a_forked_recorder_shows_progress_with_every_frame_not_every_read(root: Path) -> None:
    """The child used to publish progress once per MiB it read (about 9,000 notifications), so on a
    loaded machine a child still working looked stalled and was killed (issue 29: 490,700 of 500,000
    notifications lost at load 16).  Watched while it drains 60,000 frames (7 reads of the pipe), its
    heartbeat moves far more often than once per read."""
    frames = 60000
    recorder = ForkedRecorder(root=root, correlator=lambda: _correlator(root))
    _feed(recorder, [Frame("inbound", NOTE) for _ in range(frames)])
    seen: set[int] = set()
    closing = threading.Thread(target=lambda: seen.add(-1 if recorder.close() else -2))
    closing.start()
    while closing.is_alive():
        seen.add(recorder.taken_in())
        time.sleep(0.002)
    closing.join()
    assert -1 in seen  # drained
    assert len(seen) > 40, len(seen)  # once per read would be at most 8 values
    assert len(journal(root)) == frames


def test_a_forked_recorder_stopped_mid_read_reports_exactly_the_frames_it_lost(
        root: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """The journal lock is taken once a few batches are written, in the middle of the child's first
    read: the child stalls, is stopped, and the frames reported lost are exactly those not in the journal
    (it used to count only whole reads, so the batches written from the read in progress were reported
    lost too)."""
    frames = 60000
    path = calls_path(root, now_ts()[:10])
    recorder = ForkedRecorder(root=root, correlator=lambda: _correlator(root))
    _feed(recorder, [Frame("inbound", NOTE) for _ in range(frames)])
    assert wait_progressing(lambda: path.exists() and path.read_bytes().count(b"\n"),
                            lambda lines: lines >= 3 * 512)
    with open(path, "ab") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # waits for the write under way: lines are whole from here
        written = path.read_bytes().count(b"\n")
        assert written < frames // 2
        assert not recorder.close(stall_s=1.5)
        fcntl.flock(held, fcntl.LOCK_UN)
    err = capfd.readouterr().err
    assert f"{frames - written} frames were not recorded ({frames - written} from the server)" in err
    assert len(journal(root)) == written


def _feed(recorder: Recorder | ForkedRecorder, frames: list[Frame]) -> None:
    """Hand frames over as the forwarders do: submitted, then forwarded."""
    for frame in frames:
        recorder.submit(frame)
        frame.forwarded()


@contextmanager
def _journal_locked(root: Path) -> Iterator[None]:
    path = calls_path(root, now_ts()[:10])
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)


def test_a_stalled_forked_recorder_is_stopped_and_every_frame_it_never_recorded_is_counted(
        root: Path, capfd: pytest.CaptureFixture[str]) -> None:
    recorder = ForkedRecorder(root=root, correlator=lambda: _correlator(root))
    with _journal_locked(root):
        _feed(recorder, [Frame("inbound", NOTE) if i < 100 else Frame("outbound", call(i, "t", note=CANARY))
                         for i in range(150)])
        assert not recorder.close(stall_s=1.0)
    err = capfd.readouterr().err
    assert "the recorder process made no progress for 1 s and was stopped" in err
    assert "150 frames were not recorded (100 from the server, 50 from the client)" in err
    assert CANARY not in err


def test_a_stalled_recorder_thread_counts_the_records_it_could_not_journal_by_kind(
        root: Path, capfd: pytest.CaptureFixture[str]) -> None:
    recorder = Recorder(root=root, correlator=_correlator(root))
    with _journal_locked(root):
        junk = b"not json " + CANARY.encode()
        _feed(recorder, [Frame("inbound", NOTE if i % 3 else junk) for i in range(30)])
        assert not recorder.close(stall_s=1.0)
        err = capfd.readouterr().err
    assert "the recorder made no progress for 1 s and was abandoned" in err
    assert "30 records were not journaled (0 calls, 20 notifications, 10 unparsed)" in err
    assert CANARY not in err


def test_shim_http_drains_its_recorder_on_sigterm(root: Path) -> None:
    import json
    import socket

    with upstream() as up:
        argv = [sys.executable, "-m", "mcpeval_nb", "shim-http", "--server", "demo",
                "--listen", "127.0.0.1:0",
                "--upstream", up.url]
        proc = subprocess.Popen(argv, stderr=subprocess.PIPE)
        assert proc.stderr is not None
        url = proc.stderr.readline().decode().rsplit(" ", 1)[-1].strip()
        port = int(url.split(":")[2].split("/")[0])
        arguments = {f"k{i:05d}": i for i in range(20000)}  # ~250 KB of keys: shaping takes a while
        for i in range(40):
            body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                               "params": {"name": "ok", "arguments": arguments}}).encode()
            with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
                head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                        f"Content-Length: {len(body)}\r\n\r\n")
                sock.sendall(head.encode() + body)
                while sock.recv(65536):
                    pass
        proc.send_signal(signal.SIGTERM)
        assert waiting.exited(proc, stall_s=60) == 0
        err = proc.stderr.read()
    assert b"not recorded" not in err and b"not journaled" not in err
    assert wait_for(lambda: len(journal(root)) == 40, timeout=1)
    assert [r["tool"] for r in journal(root)] == ["ok"] * 40
    assert os.path.getsize(next((root / "store").glob("calls-*.jsonl"))) > 0


_SILENT = """
import sys, time
from pathlib import Path
from mcpeval_nb.capture.recorder_fork import ForkedRecorder
def never_ready():  # the child's correlator: its warm-up never ends
    time.sleep(3600)
recorder = ForkedRecorder(root=Path(sys.argv[1]), correlator=never_ready)
print(recorder.close(stall_s=3600.0), flush=True)
"""


def test_a_forked_recorder_with_no_frame_to_record_is_not_waited_for(root: Path) -> None:
    # A server that exits without a word: the shim ends at once rather than after the child's warm-up (a
    # fresh interpreter, so the correlator is made in the child as in the shim; before, close waited for
    # the warm-up while it progressed, here never: the hang guard below would fire).
    done = subprocess.run([sys.executable, "-c", _SILENT, str(root)], capture_output=True, text=True,
                          timeout=600, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "True\n", "")
