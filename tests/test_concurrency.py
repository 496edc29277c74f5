"""Real processes against one capture root: concurrent appends and reads, and the salt creation race."""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import queue
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from mcpeval_nb import CallRecord, append_record, load_salt, read_records
from mcpeval_nb.journal import iter_lines
from mcpeval_nb.jsonfmt import loads
from mcpeval_nb.root.layout import calls_path
from tests.waiting import until

WRITERS = 8
PER_WRITER = 2000
READERS = 4
TS = "2026-08-04T12:00:00.000Z"
CTX = mp.get_context("fork")  # children inherit the imported package: no 8x import cost


def _record(writer: int, i: int) -> CallRecord:
    # Every 100th record is larger than a pipe buffer (8 KiB) so that a torn or interleaved write would show.
    args = {"k" * 8192: "null"} if i % 100 == 0 else {"n": i}
    return CallRecord(
        ts=TS,
        session=f"writer-{writer}",
        seq=i,
        server=f"w{writer}",
        method="tools/call",
        tool="t",
        args=args,
        outcome="ok",
    )


def _writer(root: str, writer: int, start: Any) -> None:
    start.wait(30)
    for i in range(PER_WRITER):
        append_record(Path(root), _record(writer, i))


def _reader(root: str, done: Any, results: Any) -> None:
    """Read incrementally (resuming at the consumed offset, as checkpoints do) until the writers finish,
    checking that every complete line is a whole record and each writer's records arrive in order."""
    path = calls_path(Path(root), TS[:10])
    reads = seen = offset = 0
    line = 1
    last: dict[str, int] = {}
    error = ""
    try:
        while True:
            finished = done.is_set()
            if path.exists():
                for raw in iter_lines(path, start=offset, first_line=line):
                    record = CallRecord.from_dict(loads(raw.data))
                    if record.seq != last.get(record.server, -1) + 1:
                        raise AssertionError(f"{record.server} out of order at line {raw.line}")
                    last[record.server] = record.seq
                    offset, line, seen = raw.offset + len(raw.data) + 1, raw.line + 1, seen + 1
                reads += 1
            if finished:
                break
            time.sleep(0.02)  # leave the two cores to the writers
    except Exception as exc:  # reported to the parent, which fails the test
        error = f"{type(exc).__name__}: {exc}"
    results.put((reads, seen, error))


@contextmanager
def _reaped(procs: list[BaseProcess]) -> Iterator[None]:
    try:
        yield
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
            proc.join(10)


def _take(results: Any, n: int) -> list[Any]:
    """``n`` results from a queue, waited for while the processes that put them work (tests/waiting.py)."""
    got: list[Any] = []

    def more() -> bool:
        with contextlib.suppress(queue.Empty):
            got.append(results.get(timeout=0.05))
        return len(got) >= n

    assert until(more), f"{len(got)} of {n} results"
    return got


def _run(target: Callable[..., None], args: tuple[Any, ...]) -> BaseProcess:
    proc = CTX.Process(target=target, args=args)
    proc.start()
    return proc


def test_eight_writers_and_four_readers_lose_nothing_and_tear_nothing(root: Path) -> None:
    start, done, results = CTX.Event(), CTX.Event(), CTX.Queue()
    writers = [_run(_writer, (str(root), w, start)) for w in range(WRITERS)]
    readers = [_run(_reader, (str(root), done, results)) for _ in range(READERS)]
    with _reaped(writers + readers):
        start.set()
        assert until(lambda: not any(proc.is_alive() for proc in writers))  # while they work
        assert [proc.exitcode for proc in writers] == [0] * WRITERS
        done.set()
        outcomes = _take(results, len(readers))
        for proc in readers:
            proc.join(30)
    assert [error for _, _, error in outcomes] == [""] * READERS
    assert [seen for _, seen, _ in outcomes] == [WRITERS * PER_WRITER] * READERS
    assert all(reads >= 2 for reads, _, _ in outcomes)

    path = calls_path(root, TS[:10])
    data = path.read_bytes()
    assert data.endswith(b"\n")
    assert data.count(b"\n") == WRITERS * PER_WRITER
    seen = Counter((e.record.server, e.record.seq) for e in read_records(path))
    assert len(seen) == WRITERS * PER_WRITER
    assert set(seen.values()) == {1}
    assert seen.keys() == {(f"w{w}", i) for w in range(WRITERS) for i in range(PER_WRITER)}
    # Every line is exactly the bytes its writer encoded: no torn or interleaved line.
    expected = {
        _record(w, i).sanitized().encode().encode() for w in range(WRITERS) for i in range(PER_WRITER)
    }
    assert set(data.split(b"\n")[:-1]) == expected


def _salt_racer(root: str, start: Any, results: Any) -> None:
    start.wait(30)
    try:
        results.put(load_salt(Path(root)))
    except Exception as exc:
        results.put(f"{type(exc).__name__}: {exc}")


def test_salt_creation_raced_by_eight_processes_yields_one_salt(tmp_path: Path) -> None:
    for attempt in range(3):
        root = tmp_path / f"root-{attempt}"
        start, results = CTX.Event(), CTX.Queue()
        racers = [_run(_salt_racer, (str(root), start, results)) for _ in range(8)]
        with _reaped(racers):
            start.set()
            salts = _take(results, len(racers))
            assert until(lambda: not any(proc.is_alive() for proc in racers))  # noqa: B023
            assert [proc.exitcode for proc in racers] == [0] * len(racers)
        assert all(isinstance(s, bytes) for s in salts), salts
        assert len(set(salts)) == 1
        assert (root / ".salt").read_bytes() == salts[0]
        assert len(salts[0]) == 32
        assert os.listdir(root) == [".salt"]
