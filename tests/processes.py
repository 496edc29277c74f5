"""Ending the processes a test started: SIGTERM first, SIGKILL after a grace period, always reaped."""

from __future__ import annotations

import subprocess
from typing import Any


def stop(proc: subprocess.Popen[Any], timeout: float = 10.0) -> None:
    """Terminate ``proc`` (its own handler may pass the signal on to its children, which SIGKILL would
    orphan), kill it if it has not ended within ``timeout`` seconds, and wait for it."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
