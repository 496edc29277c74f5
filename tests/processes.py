"""Ending the processes a test started: SIGTERM first, SIGKILL after a grace period, always reaped."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
import urllib.parse
from typing import IO, Any


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
    reader.join(timeout)
    assert line and line[0], "the process printed no first line"
    return line[0].decode().strip()


def listening(url: str, timeout: float = 60.0) -> str:
    """``url`` once its loopback port accepts connections (a server may print its URL before its HTTP
    server has bound: a client that connects at once may be refused)."""
    parsed = urllib.parse.urlsplit(url)
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((parsed.hostname, parsed.port), timeout=1).close()
            return url
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
