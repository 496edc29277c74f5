"""Long work off the kernel's UI thread: one background job at a time, with progress and cancel.

A panel starts a ``Job`` with a function that receives the job's cancel event; the function reports
progress through callbacks the panel gives it, and the job calls ``on_done(result)`` or
``on_error(exc)`` on the worker thread when it ends.  ``Job.wait(timeout)`` bounds every wait (tests
and notebooks use it to block until the panel settles).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Job"]


class Job:
    """One background task with a cancel event.

    Args:
        work: ``work(cancel) -> result``; runs on a daemon thread.
        on_done: called with the result on the worker thread.
        on_error: called with the exception on the worker thread.
        name: the thread's name (appears in debuggers, never in output).
    """

    def __init__(self, work: Callable[[threading.Event], Any], *, on_done: Callable[[Any], None],
                 on_error: Callable[[BaseException], None], name: str = "mcpeval-nb-panel") -> None:
        self.cancel = threading.Event()
        self._work, self._on_done, self._on_error = work, on_done, on_error
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            try:
                result = self._work(self.cancel)
            except BaseException as exc:  # reported to the panel, never re-raised on a thread
                self._on_error(exc)
            else:
                self._on_done(result)
        finally:
            self._finished.set()

    @property
    def running(self) -> bool:
        """True until the work and its completion callback have returned."""
        return not self._finished.is_set()

    def wait(self, timeout: float | None) -> bool:
        """Block up to ``timeout`` seconds for the job to finish.

        Args:
            timeout: the longest wait in seconds (``None``: until it finishes).

        Returns:
            True when the job finished within the timeout.
        """
        return self._finished.wait(timeout)
