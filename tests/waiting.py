"""Waiting in tests on progress, never on a fixed wall-clock budget a loaded machine can miss.

A wait gives up only after a whole window (``stall_s``) in which nothing it watches made progress: by
default the CPU time of this process's other threads and of every process it started (the code under
test, in-process or in a child).  A loaded machine is slow, never stuck: while the work gets CPU, the wait
goes on.  The last hang guard is pytest-timeout (pyproject.toml), for a peer that spins without end.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

POLL_S = 0.02


def _ticks(stat: str) -> int:
    """utime + stime + cutime + cstime from a /proc stat line (reaped children count too)."""
    fields = stat[stat.rindex(")") + 2:].split()
    return sum(int(f) for f in fields[11:15])


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError, ValueError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def tree_cpu(pid: int) -> int:
    """CPU ticks used so far by ``pid`` and its live descendants (0 once it is gone)."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        with contextlib.suppress(OSError, ValueError):
            total += _ticks(Path(f"/proc/{current}/stat").read_text())
            todo += _children(current)
    return total


def busy() -> int:
    """CPU ticks of this process's threads other than the caller's, and of every process it started."""
    me, mine = os.getpid(), threading.get_native_id()
    total = 0
    for task in Path(f"/proc/{me}/task").glob("*"):
        if task.name != str(mine):
            with contextlib.suppress(OSError, ValueError):
                total += _ticks((task / "stat").read_text())
    return total + sum(tree_cpu(child) for child in _children(me))


def until(predicate: Callable[[], Any], *, stall_s: float = 60.0,
          progress: Callable[[], Any] = busy) -> bool:
    """Poll ``predicate`` until it holds; give up only after ``stall_s`` seconds in which ``progress()``
    did not change (default: ``busy()``).  Returns the predicate's last value, as a bool."""
    mark, window = progress(), time.monotonic() + stall_s
    while not predicate():
        time.sleep(POLL_S)
        if time.monotonic() >= window:
            now = progress()
            if now == mark:
                return bool(predicate())
            mark, window = now, time.monotonic() + stall_s
    return True


def settled(panel: Any, *, stall_s: float = 60.0) -> bool:
    """A widget panel's job has finished (``panel.wait``), however long it takes while it works."""
    return until(lambda: panel.wait(0.05), stall_s=stall_s)


def exited(proc: subprocess.Popen[Any], *, stall_s: float = 60.0) -> int | None:
    """``proc``'s exit status once it ends, waited for while it or its children use CPU; None after a
    stall (the caller asserts on it)."""
    until(lambda: proc.poll() is not None, stall_s=stall_s, progress=lambda: tree_cpu(proc.pid))
    return proc.poll()


def run(argv: Sequence[str], *, stall_s: float = 120.0, check: bool = False, input: Any = None,
        **popen: Any) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run`` that waits for as long as the child (or its children) keeps using CPU: it is
    killed, and TimeoutExpired raised, only after ``stall_s`` seconds without any."""
    if popen.pop("capture_output", False):
        popen.setdefault("stdout", subprocess.PIPE)
        popen.setdefault("stderr", subprocess.PIPE)
    if input is not None:
        popen.setdefault("stdin", subprocess.PIPE)
    with subprocess.Popen(argv, **popen) as proc:
        mark = tree_cpu(proc.pid)
        while True:
            try:
                out, err = proc.communicate(input, timeout=stall_s)
                break
            except subprocess.TimeoutExpired:
                now = tree_cpu(proc.pid)
                if now == mark:
                    proc.kill()
                    proc.communicate()
                    raise
                mark = now
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    if check:
        done.check_returncode()
    return done
