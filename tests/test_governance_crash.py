"""SIGKILL during an erase: at each named point and at random delays, with and without records appended
after the kill; the next command finishes the erase and no record that was not erased is lost."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from mcpeval_nb import append_records
from mcpeval_nb.governance.rewrite import KILL_ENV

from .governance_support import calls, census, cli, seed, token

DAYS = ("2026-08-01", "2026-08-02")
POINTS = ("after-copy", "after-pad", "after-write", "after-swap", "between-files")


def _expected(root: Path, victim: str) -> Counter[tuple[str, str, int]]:
    return Counter({k: n for k, n in census(root).items() if k[1] != token(victim)})


def _late(root: Path) -> list[tuple[str, str, int]]:
    """Records appended after the kill, before the next command: they must survive the roll-forward."""
    append_records(root, calls("late", "k", 25, day=DAYS[1]))
    return [("call", token("late"), i) for i in range(1, 26)]


def _finished_cleanly(root: Path) -> None:
    assert not (root / ".erase-intent.json").exists()
    assert not (root / ".erase-work").exists()


@pytest.mark.parametrize("appended", [False, True], ids=["quiet", "appended-after-kill"])
@pytest.mark.parametrize("point", POINTS)
def test_sigkill_at_a_named_point_is_finished_by_the_next_command(tmp_path: Path, point: str,
                                                                   appended: bool) -> None:
    seed(tmp_path, {"victim": "v", "keep-1": "k", "keep-2": "k"}, 300, days=DAYS)
    expected = _expected(tmp_path, "victim")
    killed = cli("erase", "--session", "victim", "--root", str(tmp_path), env={KILL_ENV: point})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert (tmp_path / ".erase-intent.json").exists()
    if appended:
        expected.update(_late(tmp_path))
    nxt = cli("config", "--root", str(tmp_path))  # any command with --root
    assert nxt.returncode == 0, nxt.stderr
    assert "finished an interrupted erase" in nxt.stderr
    assert census(tmp_path) == expected  # erased fully, every other record exactly once, no blank line
    _finished_cleanly(tmp_path)


def _erase_argv(root: Path) -> list[str]:
    return [sys.executable, "-m", "mcpeval_nb", "erase", "--session", "victim", "--root", str(root)]


def test_sigkill_at_random_delays_leaves_every_journal_as_it_was_or_erased(tmp_path: Path) -> None:
    seed(tmp_path / "calibrate", {"victim": "v", "keep-1": "k", "keep-2": "w"}, 12000, days=DAYS)
    started = time.perf_counter()
    subprocess.run(_erase_argv(tmp_path / "calibrate"), check=True, capture_output=True)
    whole = time.perf_counter() - started  # start-up and the erase: kills land anywhere in it
    rng = random.Random(16)
    interrupted = attempt = 0
    while attempt < 5 or (not interrupted and attempt < 20):  # until a kill has landed inside an erase
        root = tmp_path / f"r{attempt}"
        seed(root, {"victim": "v", "keep-1": "k", "keep-2": "w"}, 12000, days=DAYS)
        expected = _expected(root, "victim")
        victims = sum(n for k, n in census(root).items() if k[1] == token("victim"))
        proc = subprocess.Popen(_erase_argv(root), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 1.0) * whole)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        interrupted += (root / ".erase-intent.json").exists()
        expected.update(_late(root))
        assert cli("index", "--root", str(root)).returncode == 0
        after = census(root)
        left = sum(n for k, n in after.items() if k[1] == token("victim"))
        assert left in (0, victims), f"attempt {attempt}: {left} of {victims} victim records left"
        assert Counter({k: n for k, n in after.items() if k[1] != token("victim")}) == expected
        _finished_cleanly(root)
        attempt += 1
    print(f"{interrupted} of {attempt} kills landed inside an erase")
    assert interrupted, "no kill landed inside the erase: the test proved nothing"
