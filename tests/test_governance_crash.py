"""SIGKILL during an erase: at each named point and at random delays, with and without records appended
after the kill; the next writer (erase, retention, index, share) finishes the erase first and no record
that was not erased is lost; a read-only command changes no byte under the root.

An erase stops at a named step through the checkpoint it is given (``erase(..., _checkpoint=...)``): the
test runs it in a forked child whose checkpoint SIGKILLs the child there.  Production code has no switch.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

import mcpeval_nb
from mcpeval_nb import append_records, erase

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


def _killed_at(point: str, root: Path) -> None:
    """Erase the victim in a forked child that SIGKILLs itself when the erase reaches ``point``."""
    def checkpoint(name: str) -> None:
        if name == point:
            os.kill(os.getpid(), signal.SIGKILL)

    pid = os.fork()
    if pid == 0:  # the child: the package is imported already, so it starts at once
        try:
            erase(root, session="victim", _checkpoint=checkpoint)
        finally:
            os._exit(0)  # reached only when the point was never hit
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, f"{point} was never reached"
    assert (root / ".erase-intent.json").exists()


#: Each writer, as the CLI runs it: it finishes the interrupted erase first, and says so.
WRITERS = {
    "erase": ["erase", "--session", "nobody"],
    "retention": ["retention", "--days", "3650"],
    "index": ["index"],
    "promote": ["promote"],
    "share": ["share", "--dir", "{envelope}"],
    "export-parquet": ["export-parquet", "--dest", "{envelope}"],
}


@pytest.mark.parametrize("appended", [False, True], ids=["quiet", "appended-after-kill"])
@pytest.mark.parametrize("point", POINTS)
def test_sigkill_at_a_named_point_is_finished_by_the_next_writer(tmp_path: Path, point: str,
                                                                  appended: bool) -> None:
    root = tmp_path / "root"
    seed(root, {"victim": "v", "keep-1": "k", "keep-2": "k"}, 300, days=DAYS)
    expected = _expected(root, "victim")
    _killed_at(point, root)
    if appended:
        expected.update(_late(root))
    writer = sorted(WRITERS)[(POINTS.index(point) + appended) % len(WRITERS)]
    argv = [arg.format(envelope=tmp_path / "envelope") for arg in WRITERS[writer]]
    nxt = cli(*argv, "--root", str(root))
    assert nxt.returncode == 0, nxt.stderr
    assert nxt.stderr.startswith("mcpeval-nb: finished an interrupted erase first\n"), nxt.stderr
    assert census(root) == expected  # erased fully, every other record exactly once, no blank line
    _finished_cleanly(root)


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_each_writer_finishes_an_interrupted_erase_before_it_reads(tmp_path: Path, writer: str) -> None:
    root = tmp_path / "root"
    seed(root, {"victim": "v", "keep-1": "k"}, 200, days=DAYS)
    expected = _expected(root, "victim")
    _killed_at("after-pad", root)  # the journal in flight is half padding: reading it now would be wrong
    argv = [arg.format(envelope=tmp_path / "envelope") for arg in WRITERS[writer]]
    nxt = cli(*argv, "--root", str(root))
    assert nxt.returncode == 0, nxt.stderr
    assert "finished an interrupted erase first" in nxt.stderr
    assert census(root) == expected
    _finished_cleanly(root)
    if writer == "share":  # what it exported is the erased store
        assert token("victim").encode() not in b"".join(
            p.read_bytes() for p in (tmp_path / "envelope").rglob("*.jsonl"))
    if writer == "export-parquet":
        import pyarrow.dataset as ds

        exported = ds.dataset(tmp_path / "envelope", format="parquet", partitioning="hive").to_table()
        assert token("victim") not in exported.column("session").to_pylist()
    if writer == "index":
        assert mcpeval_nb.build_index(root).calls == sum(n for k, n in expected.items() if k[0] == "call")


def test_the_library_writers_finish_it_too(tmp_path: Path) -> None:
    root = tmp_path / "root"
    seed(root, {"victim": "v", "keep-1": "k"}, 50, days=DAYS)
    expected = _expected(root, "victim")
    _killed_at("after-write", root)
    assert mcpeval_nb.build_index(root).calls == sum(n for k, n in expected.items() if k[0] == "call")
    assert census(root) == expected and mcpeval_nb.read_audit(root)[-1]["labels"] == {"phase": "recovered"}
    _finished_cleanly(root)
    _killed_at("between-files", root)
    mcpeval_nb.export_share(root, dest=tmp_path / "envelope")
    _finished_cleanly(root)


def _tree(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every entry under ``root``: its mode and, for a file, its bytes (a directory: empty)."""
    return {p.relative_to(root).as_posix(): (p.lstat().st_mode, b"" if p.is_dir() else p.read_bytes())
            for p in sorted(root.rglob("*"))}


READS = (["config"], ["audit"], ["summary"], ["doctor"], ["trends"], ["findings"],
         ["serve", "--print-config", "--listen", "127.0.0.1:0"])


@pytest.mark.parametrize("read", READS, ids=[" ".join(r[:1]) for r in READS])
def test_a_read_only_command_changes_no_byte_under_a_root_with_an_interrupted_erase(tmp_path: Path,
                                                                                     read: list[str]) -> None:
    seed(tmp_path, {"victim": "v", "keep-1": "k"}, 100, days=DAYS)
    _killed_at("after-pad", tmp_path)
    before = _tree(tmp_path)
    done = cli(*read, "--root", str(tmp_path))
    assert "finished an interrupted erase" not in done.stderr and "Traceback" not in done.stderr
    assert _tree(tmp_path) == before  # the intent, the work copy, the half-padded journal: all as they were


def _erase_argv(root: Path) -> list[str]:
    return [sys.executable, "-m", "mcpeval_nb", "erase", "--session", "victim", "--root", str(root)]


def test_sigkill_at_random_delays_leaves_every_journal_as_it_was_or_erased(tmp_path: Path) -> None:
    # One seeded store, copied for each attempt (seeding 72,000 records costs seconds of CPU each time).
    template = tmp_path / "template"
    seed(template, {"victim": "v", "keep-1": "k", "keep-2": "w"}, 12000, days=DAYS)
    shutil.copytree(template, tmp_path / "calibrate")
    started = time.perf_counter()
    subprocess.run(_erase_argv(tmp_path / "calibrate"), check=True, capture_output=True)
    whole = time.perf_counter() - started  # start-up and the erase: kills land anywhere in it
    rng = random.Random(16)
    interrupted = attempt = 0
    while attempt < 5 or (not interrupted and attempt < 20):  # until a kill has landed inside an erase
        root = tmp_path / f"r{attempt}"
        shutil.copytree(template, root)
        expected = _expected(root, "victim")
        victims = sum(n for k, n in census(root).items() if k[1] == token("victim"))
        proc = subprocess.Popen(_erase_argv(root), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 1.0) * whole)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        interrupted += (root / ".erase-intent.json").exists()
        expected.update(_late(root))
        assert cli("index", "--root", str(root)).returncode == 0  # the next writer finishes the erase
        after = census(root)
        left = sum(n for k, n in after.items() if k[1] == token("victim"))
        assert left in (0, victims), f"attempt {attempt}: {left} of {victims} victim records left"
        assert Counter({k: n for k, n in after.items() if k[1] != token("victim")}) == expected
        _finished_cleanly(root)
        attempt += 1
    print(f"{interrupted} of {attempt} kills landed inside an erase")
    assert interrupted, "no kill landed inside the erase: the test proved nothing"
