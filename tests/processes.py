"""Ending the processes a test started: SIGTERM first, SIGKILL after a grace period, always reaped."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import threading
import urllib.parse
from collections.abc import Iterator
from typing import IO, Any

from tests.waiting import until


def stop(proc: subprocess.Popen[Any], timeout: float = 10.0) -> None:
    """Terminate ``proc`` (its own handler may pass the signal on to its children, which SIGKILL would
    orphan), kill it if it has not ended within ``timeout`` seconds, and wait for it."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def first_line(stream: IO[bytes], timeout: float = 90.0) -> str:
    """The first line a child process writes to ``stream`` (a URL it announces), waited for on a thread."""
    line: list[bytes] = []
    reader = threading.Thread(target=lambda: line.append(stream.readline()), daemon=True)
    reader.start()
    until(lambda: not reader.is_alive(), stall_s=timeout)  # while the machine works on it, however slowly
    assert line and line[0], "the process printed no first line"
    return line[0].decode().strip()


def listening(url: str, timeout: float = 60.0) -> str:
    """``url`` once its loopback port accepts connections (a server may print its URL before its HTTP
    server has bound: a client that connects at once may be refused).  Given up (the last refusal raised)
    only after ``timeout`` seconds in which no process this test started used CPU."""
    parsed = urllib.parse.urlsplit(url)

    def accepts() -> bool:
        with contextlib.suppress(OSError):
            socket.create_connection((parsed.hostname, parsed.port), timeout=1).close()
            return True
        return False

    if not until(accepts, stall_s=timeout):
        socket.create_connection((parsed.hostname, parsed.port), timeout=1).close()
    return url


def cli_listening(argv: list[str]) -> tuple[subprocess.Popen[str], int]:
    """``python -m mcpeval_nb <argv> --listen 127.0.0.1:0`` (serve, mock, shim-http) once it announced its
    URL on stderr; returns the process and its port."""
    import sys
    proc = subprocess.Popen([sys.executable, "-m", "mcpeval_nb", *argv, "--listen", "127.0.0.1:0"],
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert "listening on " in line, line
    return proc, int(line.rsplit(":", 1)[1].split("/")[0])


@contextlib.contextmanager
def killed_after(proc: subprocess.Popen[Any]) -> Iterator[subprocess.Popen[Any]]:
    """``proc`` for the block; killed and reaped after it when still running (a check failed first)."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def signal_a_worker_thread(pid: int, signum: int) -> int:
    """Send ``signum`` to one of ``pid``'s threads other than its main thread (``tgkill``): what the kernel
    may do with any signal sent to the process while its main thread is busy.  Returns the thread's id."""
    import ctypes
    import os
    tids = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid)
    assert tids, f"process {pid} runs no thread besides its main one"
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.tgkill(pid, tids[-1], signum) != 0:
        raise OSError(ctypes.get_errno(), f"tgkill {pid}/{tids[-1]} failed")
    return tids[-1]
