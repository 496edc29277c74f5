"""Helper processes for large share exports: chunks spread over the cores, results taken in order.

The parent keeps everything that decides what is exported and in which order (the walk, the
shared-lock snapshot, the chunk boundaries, the flagged list, assembling each staged journal from its
part files); helpers (``sharework.run_job``) do the CPU-bound part.  Helpers start from a fork server
(never a plain fork of a possibly threaded process) and die with the export.  At most ``2 * workers``
chunks are in flight, so memory stays bounded whatever the store size.  Results are consumed strictly
in chunk order: an error in chunk k is raised before anything after it, and a reading error the parent
meets (an over-long line) is raised only after every earlier chunk has been settled.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.forkserver
import os
import sys
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from ..errors import RecordTooLarge
from .sharework import ChunkDone, ChunkJob, init_helper, run_job

__all__ = ["PARALLEL_MIN_BYTES", "HelperPool", "chunk_bounds", "copy_part", "helper_count", "part_path",
           "settle_in_order"]

#: Stores smaller than this are exported in process (starting helpers costs more than it saves).
PARALLEL_MIN_BYTES = 32 * 1024 * 1024
_MAX_HELPERS = 4


def helper_count(requested: int | None, total: int) -> int:
    """How many helpers to use: ``requested`` when given, else by store size and usable cores.

    Args:
        requested: ``ShareOptions.workers`` (None = automatic, 0 = in process).
        total: bytes in the selected journals.

    Returns:
        0 for an in-process export, else the helper count.
    """
    if requested is not None:
        return max(0, requested)
    cores = len(os.sched_getaffinity(0))
    if total < PARALLEL_MIN_BYTES or cores < 2:
        return 0
    return min(cores, _MAX_HELPERS)


def _forget_inherited_forkserver() -> None:
    """In a forked child, drop the parent's fork server: it is not our child (``waitpid`` would fail)
    and helpers forked by it would not die with this process."""
    server = multiprocessing.forkserver._forkserver
    alive = getattr(server, "_forkserver_alive_fd", None)
    if alive is not None:
        with contextlib.suppress(OSError):
            os.close(alive)
    for name in ("_forkserver_alive_fd", "_forkserver_address", "_forkserver_pid"):
        if hasattr(server, name):
            setattr(server, name, None)


os.register_at_fork(after_in_child=_forget_inherited_forkserver)


_MISSING = object()


@contextlib.contextmanager
def _main_module_hidden() -> Iterator[None]:
    """Make ``__main__`` look like an interactive session while helpers start.

    ``multiprocessing`` passes the main script's path (or module name) to fork-server children so
    they can re-import it; helpers only run this package's functions, so there is nothing to import.
    """
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved_file = main.__dict__.pop("__file__", _MISSING)
    saved_spec = main.__dict__.get("__spec__", _MISSING)
    main.__spec__ = None
    try:
        yield
    finally:
        if saved_file is not _MISSING:
            main.__file__ = saved_file
        if saved_spec is _MISSING:
            main.__dict__.pop("__spec__", None)
        else:
            main.__spec__ = saved_spec


class HelperPool:
    """A pool of share helpers (context manager); on exit pending chunks are cancelled and running
    ones awaited, so no helper writes into staging after the export has moved on.

    Args:
        workers: helper processes (at least 1).
    """

    def __init__(self, workers: int) -> None:
        context = multiprocessing.get_context("forkserver")
        self._executor = ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                             initializer=init_helper, initargs=(os.getpid(),))
        self.in_flight = 4 * workers
        # Start every helper now, with the user's script hidden: multiprocessing would otherwise
        # re-import ``__main__`` in the fork server and in each helper, re-running an unguarded script.
        with _main_module_hidden():
            ready = [self._executor.submit(os.getpid) for _ in range(workers)]
            for future in ready:
                future.result()

    def submit(self, job: ChunkJob) -> Future[ChunkDone]:
        """Queue one chunk."""
        return self._executor.submit(run_job, job)

    def __enter__(self) -> HelperPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)


def copy_part(part: str, out_fd: int) -> None:
    """Append a part file to ``out_fd`` (in the kernel where possible) and unlink it.

    Args:
        part: the part file.
        out_fd: the staged journal, positioned at its end.
    """
    fd = os.open(part, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        left = os.fstat(fd).st_size
        try:
            while left > 0:
                done = os.copy_file_range(fd, out_fd, left)
                if done == 0:
                    break
                left -= done
        except OSError:
            pass
        while left > 0:  # fallback: plain copy of whatever the kernel did not
            data = os.read(fd, min(left, 1 << 20))
            if not data:
                break
            view = memoryview(data)
            while view:
                view = view[os.write(out_fd, view):]
            left -= len(data)
    finally:
        os.close(fd)
    os.unlink(part)


def settle_in_order(pool: HelperPool, jobs: Iterator[ChunkJob], settle: Callable[[ChunkDone, ChunkJob], None]
                    ) -> None:
    """Run ``jobs`` on ``pool`` and call ``settle`` for each result in chunk order.

    Args:
        pool: the helpers.
        jobs: the chunks, produced lazily (producing one may raise a reading error).
        settle: called with each result and its job, in order; raising stops the export.

    Raises:
        Whatever ``settle`` raises for the first failing chunk, else the producer's error.
    """
    pending: deque[tuple[Future[ChunkDone], ChunkJob]] = deque()
    produced = iter(jobs)
    while True:
        try:
            job = next(produced)
        except StopIteration:
            break
        except BaseException:
            while pending:  # an earlier chunk's error wins over the producer's
                future, done_job = pending.popleft()
                settle(future.result(), done_job)
            raise
        pending.append((pool.submit(job), job))
        while len(pending) >= pool.in_flight:
            future, done_job = pending.popleft()
            settle(future.result(), done_job)
    while pending:
        future, done_job = pending.popleft()
        settle(future.result(), done_job)


_PROBE = 64 * 1024


def _last_newline(fd: int, lo: int, hi: int) -> int:
    """Offset of the last newline in ``[lo, hi)`` of ``fd``, or -1 (read backwards in small blocks)."""
    end = hi
    while end > lo:
        start = max(lo, end - _PROBE)
        found = os.pread(fd, end - start, start).rfind(b"\n")
        if found >= 0:
            return start + found
        end = start
    return -1


def _first_newline(fd: int, lo: int, hi: int) -> int:
    """Offset of the first newline in ``[lo, hi)`` of ``fd``, or -1."""
    start = lo
    while start < hi:
        block = os.pread(fd, min(_PROBE, hi - start), start)
        if not block:
            return -1
        found = block.find(b"\n")
        if found >= 0:
            return start + found
        start += len(block)
    return -1


def _line_at(fd: int, pos: int) -> int:
    """The 1-based number of the line starting at ``pos`` (only for error messages)."""
    count, start = 1, 0
    while start < pos:
        block = os.pread(fd, min(1 << 20, pos - start), start)
        if not block:
            break
        count += block.count(b"\n")
        start += len(block)
    return count


def chunk_bounds(fd: int, path: Path, size: int, *, window: int,
                 limit: int) -> Iterator[tuple[int, int, bool]]:
    """Cut the snapshot ``[0, size)`` into chunks of whole lines without reading most of it.

    Each chunk ends at the last newline of a ``window``-byte span (``window <= limit``, so a line inside
    a span is within the bound); a line longer than the span is followed to its newline, which must
    come within ``limit`` bytes of its start (newline included).  A final unterminated line comes
    alone, as ``iter_chunks`` gives it.

    Args:
        fd: the open journal.
        path: its path, for messages.
        size: the snapshot size.
        window: bytes per chunk (at most ``limit``).
        limit: the line bound, newline included.

    Returns:
        ``(offset, length, tail)`` for each chunk, in order.

    Raises:
        RecordTooLarge: a line over ``limit``, named by file and line.
    """
    pos = 0
    while pos < size:
        hi = min(pos + window, size)
        nl = _last_newline(fd, pos, hi)
        if nl < 0:
            nl = _first_newline(fd, hi, min(pos + limit, size))
            if nl < 0:
                if pos + limit <= size:
                    raise RecordTooLarge(path, _line_at(fd, pos))
                yield pos, size - pos, True
                return
        yield pos, nl + 1 - pos, False
        pos = nl + 1
        if hi == size and pos < size:  # what follows the window's last newline is unterminated
            yield pos, size - pos, True
            return


def part_path(parts: Path, index: int) -> str:
    """The part file of chunk ``index`` inside ``parts``."""
    return str(parts / f"{index:08d}.part")
