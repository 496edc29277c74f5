"""The tests' waits (tests/waiting.py): they go on while the watched work uses CPU, however long, and end
after a window in which it used none."""

from __future__ import annotations

import itertools
import subprocess
import sys
import time

import pytest

from tests import waiting

#: Works in bursts for about 6 s of wall clock (0.6 s of CPU): 12 times 50 ms of CPU, then 0.5 s asleep.
BUSY = """
import time
for _ in range(12):
    end = time.process_time() + 0.05
    while time.process_time() < end:
        pass
    time.sleep(0.5)
print("done")
"""


def test_a_wait_goes_on_past_its_window_while_progress_is_seen() -> None:
    ticks = itertools.count()
    started = time.monotonic()
    assert waiting.until(lambda: time.monotonic() - started > 1.0, stall_s=0.2, progress=lambda: next(ticks))


def test_a_wait_without_progress_gives_up_after_its_window() -> None:
    started = time.monotonic()
    assert waiting.until(lambda: False, stall_s=0.3, progress=lambda: 0) is False
    assert time.monotonic() - started >= 0.3


def test_a_child_that_keeps_using_cpu_is_waited_for_past_its_window() -> None:
    started = time.monotonic()
    done = waiting.run([sys.executable, "-c", BUSY], stall_s=2.0, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == "done\n"
    assert time.monotonic() - started > 2.0  # it outlived one window


def test_an_idle_child_is_killed_after_its_window_without_cpu() -> None:
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        waiting.run([sys.executable, "-c", "import time; time.sleep(600)"], stall_s=1.0, capture_output=True)
    assert time.monotonic() - started < 300


def test_tree_cpu_counts_a_working_child_and_is_zero_once_it_is_gone() -> None:
    proc = subprocess.Popen([sys.executable, "-c", BUSY], stdout=subprocess.DEVNULL)
    assert waiting.until(lambda: waiting.tree_cpu(proc.pid) > 0, stall_s=30.0)
    assert waiting.exited(proc) == 0
    assert waiting.tree_cpu(proc.pid) == 0
