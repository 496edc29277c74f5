"""Helper processes for large share exports: chunks spread over the cores, results taken in order.

The parent keeps everything that decides what is exported and in which order (the walk, the
shared-lock snapshot, the chunk boundaries (``journal.snapshot.spans``), the flagged list, assembling
each staged journal from its part files); helpers (``sharework.run_job``) do the CPU-bound part.
Helpers start from a fork server (never a plain fork of a possibly threaded process) and die with the
export.  At most ``4 * workers`` chunks are in flight, so memory stays bounded whatever the store
size.  Results are consumed strictly in chunk order: an error in chunk k is raised before anything
after it, and a reading error the parent meets (an over-long line) is raised only after every earlier
chunk has been settled.
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

from .sharework import SpanDone, SpanJob, init_helper, run_job

__all__ = ["PARALLEL_MIN_BYTES", "HelperPool", "copy_part", "helper_count", "part_path", "settle_in_order"]

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

    def submit(self, job: SpanJob) -> Future[SpanDone]:
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


def settle_in_order(pool: HelperPool, jobs: Iterator[SpanJob], settle: Callable[[SpanDone, SpanJob], None]
                    ) -> None:
    """Run ``jobs`` on ``pool`` and call ``settle`` for each result in chunk order.

    Args:
        pool: the helpers.
        jobs: the chunks, produced lazily (producing one may raise a reading error).
        settle: called with each result and its job, in order; raising stops the export.

    Raises:
        Whatever ``settle`` raises for the first failing chunk, else the producer's error.
    """
    pending: deque[tuple[Future[SpanDone], SpanJob]] = deque()
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


def part_path(parts: Path, index: int) -> str:
    """The part file of chunk ``index`` inside ``parts``."""
    return str(parts / f"{index:08d}.part")
