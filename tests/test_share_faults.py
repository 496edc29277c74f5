"""Faults with real processes: SIGKILLed exports and a writer appending during an export.

Exports run in forked child processes (the parent already imported the package, so a child starts in
milliseconds) and are killed with SIGKILL, either at a named step (the export's private ``_checkpoint``
hook: here it announces the step on stderr and sleeps) or at varied delays.  The envelope must then be
byte-identical to the previous one, or to the complete new one when the kill came after the publish
point, and the next export must remove the staging directory the killed one left.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mcpeval_nb import ShareOptions, append_record, append_records, export_share
from mcpeval_nb.jsonfmt import dumps, loads
from mcpeval_nb.review.share import Checkpoint
from tests.review_support import DAY, call, clean_store, tree_bytes
from tests.waiting import tree_cpu, until

FORCE = ShareOptions(force=True)
WAIT_S = 60.0


def pause_at(point: str, seconds: float) -> Checkpoint:
    """A checkpoint that prints ``share paused at <point>`` on stderr and sleeps when the export reaches
    ``point``."""
    def checkpoint(name: str) -> None:
        if name == point:
            print(f"share paused at {name}", file=sys.stderr, flush=True)
            time.sleep(seconds)
    return checkpoint


def _child(target: Callable[[], object], log: Path) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 0
    try:
        sys.stderr = open(log, "w", buffering=1)  # noqa: SIM115 - the child exits right after
        target()
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)


def _wait_for(predicate: Callable[[], bool], what: str) -> None:
    # given up only after WAIT_S seconds in which no process of this test used CPU (tests/waiting.py)
    assert until(predicate, stall_s=WAIT_S), f"no progress in {WAIT_S} s waiting for {what}"


def _reap(pid: int, *, kill: bool) -> int:
    if kill:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    status: list[int] = []

    def reaped() -> bool:
        done, code = os.waitpid(pid, os.WNOHANG)
        status[:] = [code] if done else []
        return bool(done)

    if not until(reaped, stall_s=WAIT_S, progress=lambda: tree_cpu(pid)):
        os.kill(pid, signal.SIGKILL)  # idle for WAIT_S and not finished: stuck
        return os.waitpid(pid, 0)[1]
    return status[0]


class _Child:
    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.status: int | None = None

    def join(self, *, kill: bool) -> int:
        if self.status is None:
            self.status = _reap(self.pid, kill=kill)
        return self.status


@contextlib.contextmanager
def _running(target: Callable[[], object], log: Path) -> Iterator[_Child]:
    child = _Child(_child(target, log))
    try:
        yield child
    finally:
        child.join(kill=True)


def _stages(parent: Path) -> list[str]:
    return [name for name in os.listdir(parent) if name.startswith(".mcpeval-share-")]


@pytest.fixture
def envelopes(root: Path, tmp_path: Path) -> tuple[Path, dict[str, bytes], dict[str, bytes]]:
    """A published old envelope, and the bytes the next export will publish (store grown meanwhile)."""
    clean_store(root, calls=30)
    dest = tmp_path / "share" / "env"
    export_share(root, dest=dest)
    old = tree_bytes(dest)
    append_records(root, [call(seq, session="sess-b") for seq in range(30, 4000)])
    export_share(root, dest=tmp_path / "expected")
    new = tree_bytes(tmp_path / "expected")
    assert old != new
    return dest, old, new


POINTS = ["staging-created", "snapshot-taken", "chunk-written", "before-publish", "after-publish"]


@pytest.mark.parametrize("point", POINTS)
def test_an_export_killed_at_a_named_point_leaves_the_previous_envelope_intact(
        root: Path, tmp_path: Path, envelopes: tuple[Path, dict[str, bytes], dict[str, bytes]],
        point: str) -> None:
    dest, old, new = envelopes
    log = tmp_path / f"{point}.log"
    with _running(lambda: export_share(root, dest=dest, options=FORCE, _checkpoint=pause_at(point, 30)), log):
        _wait_for(lambda: log.exists() and f"share paused at {point}" in log.read_text(), point)
    assert tree_bytes(dest) == (new if point == "after-publish" else old)
    assert len(_stages(dest.parent)) == 1  # the killed export's staging directory is left behind
    result = export_share(root, dest=dest, options=FORCE)
    assert result.stale_staging_removed == 1
    assert _stages(dest.parent) == []
    assert tree_bytes(dest) == new


@pytest.mark.parametrize("delay", [0.0, 0.02, 0.05, 0.1, 0.2, 0.4])
def test_an_export_killed_at_varied_delays_leaves_old_or_complete_new_envelope(
        root: Path, tmp_path: Path, envelopes: tuple[Path, dict[str, bytes], dict[str, bytes]],
        delay: float) -> None:
    dest, old, new = envelopes
    log = tmp_path / "run.log"
    with _running(lambda: export_share(root, dest=dest, options=FORCE,
                                       _checkpoint=pause_at("staging-created", 0)), log):
        _wait_for(lambda: log.exists() and "share paused" in log.read_text(), "staging")
        time.sleep(delay)
    after = tree_bytes(dest)
    assert after in (old, new)
    export_share(root, dest=dest, options=FORCE)
    assert tree_bytes(dest) == new and _stages(dest.parent) == []


def test_a_live_export_staging_directory_is_not_removed_by_another_export(
        root: Path, tmp_path: Path, envelopes: tuple[Path, dict[str, bytes], dict[str, bytes]]) -> None:
    dest, _old, new = envelopes
    log = tmp_path / "live.log"
    with _running(lambda: export_share(root, dest=dest, options=FORCE,
                                       _checkpoint=pause_at("before-publish", 30)), log):
        _wait_for(lambda: log.exists() and "share paused" in log.read_text(), "pause")
        live = _stages(dest.parent)
        result = export_share(root, dest=tmp_path / "share" / "other")
        assert result.stale_staging_removed == 0 and _stages(dest.parent) == live
    assert tree_bytes(tmp_path / "share" / "other") == new


def _descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_an_export_with_helpers_killed_mid_way_leaves_the_envelope_intact_and_no_helper_alive(
        root: Path, tmp_path: Path, envelopes: tuple[Path, dict[str, bytes], dict[str, bytes]]) -> None:
    dest, old, _new = envelopes
    append_records(root, [call(seq, session="sess-c") for seq in range(4000, 12000)])  # several chunks
    expected = tmp_path / "expected-helpers"
    export_share(root, dest=expected, options=ShareOptions(workers=0))
    log = tmp_path / "helpers.log"
    helpers = ShareOptions(force=True, workers=2)
    with _running(lambda: export_share(root, dest=dest, options=helpers,
                                       _checkpoint=pause_at("chunk-written", 30)), log) as child:
        _wait_for(lambda: log.exists() and "share paused at chunk-written" in log.read_text(), "a chunk")
        below = _descendants(child.pid)
        assert len(below) >= 3  # the fork server and two helpers
        child.join(kill=True)
    _wait_for(lambda: not any(_alive(pid) for pid in below), "the helpers to die with the export")
    assert tree_bytes(dest) == old
    assert len(_stages(dest.parent)) == 1
    result = export_share(root, dest=dest, options=helpers)
    assert result.stale_staging_removed == 1 and _stages(dest.parent) == []
    assert tree_bytes(dest) == tree_bytes(expected)


def _slow_writer(root: Path, stop: Path) -> None:
    """Append records under the journal's exclusive lock in two writes each, pausing in between."""
    path = root / "store" / f"calls-{DAY}.jsonl"
    seq = 100_000
    while not stop.exists():
        append_record(root, call(seq, session="writer"))  # the real writer
        line = (call(seq + 1, session="writer").sanitized().encode() + "\n").encode()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(fd, line[:40])
            time.sleep(0.005)  # a reader that ignored the lock would see half a record here
            os.write(fd, line[40:])
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
        seq += 2
        time.sleep(0.002)


@pytest.mark.parametrize("workers", [0, 2])
def test_a_writer_appending_during_exports_never_puts_a_partial_record_in_the_envelope(
        root: Path, tmp_path: Path, workers: int) -> None:
    clean_store(root, calls=2000 if workers == 0 else 9000)
    source = root / "store" / f"calls-{DAY}.jsonl"
    stop = tmp_path / "stop"
    with _running(lambda: _slow_writer(root, stop), tmp_path / "writer.log") as writer:
        start_lines = source.read_bytes().count(b"\n")
        _wait_for(lambda: source.read_bytes().count(b"\n") > start_lines + 20, "the writer")
        sizes = []
        for attempt in range(3):
            dest = tmp_path / f"env{attempt}"
            export_share(root, dest=dest, options=ShareOptions(workers=workers),
                         _checkpoint=pause_at("chunk-written", 0.2))
            sizes.append((dest / f"store/calls-{DAY}.jsonl").read_bytes())
        stop.touch()
        assert writer.join(kill=False) == 0  # let it finish its record: no torn tail in the source
    final = [line for line in source.read_bytes().splitlines() if line.strip()]
    expected = [(dumps(loads(line), sort_keys=True) + "\n").encode() for line in final]
    counts = []
    for exported in sizes:
        lines = exported.splitlines(keepends=True)
        assert lines == expected[:len(lines)]  # a whole-record prefix of what the writer wrote
        assert all(json.loads(line)["seq"] >= 0 for line in lines)
        counts.append(len(lines))
    assert counts == sorted(counts) and counts[-1] > 2000 and len(final) > counts[0]
