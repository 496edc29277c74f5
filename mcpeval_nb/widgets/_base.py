"""The base every panel stands on: one background job at a time, cancel, wait, and the one error text.

A panel builds its widgets, passes them to ``Panel.__init__`` and starts work with ``_launch``; the job
runs on a worker thread (``_worker.Job``), ``cancel()`` sets its cancel event, ``wait(timeout)`` bounds
every wait, and ``error_text(exc)`` is ``mcpeval_nb.describe``: an exception's message is shown only when
it is one of ours (which never carry payload text), never a foreign one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as w

from mcpeval_nb import describe

from ._html import esc
from ._worker import Job

__all__ = ["Panel", "error_html"]


def error_html(text: str) -> str:
    """``text`` as a red status line (escaped)."""
    return f"<span style='color:#cf222e'>{esc(text)}</span>"


class Panel(w.VBox):  # type: ignore[misc]
    """A VBox that owns at most one running background job.

    Args:
        children: the panel's widgets, top to bottom.
        job_name: the worker thread's name (debuggers only, never output).
    """

    def __init__(self, children: Sequence[Any], *, job_name: str) -> None:
        self._lock = threading.RLock()
        self._job: Job | None = None
        self._job_name = job_name
        super().__init__(list(children))

    @property
    def busy(self) -> bool:
        """True while a job (and its completion callback) is running."""
        return self._job is not None and self._job.running

    def _launch(self, work: Callable[[threading.Event], Any], *, on_done: Callable[[Any], None],
               on_error: Callable[[BaseException], None]) -> Job:
        self._job = Job(work, on_done=on_done, on_error=on_error, name=self._job_name)
        return self._job

    def _settle_first_view(self) -> None:
        """Wait for the job the constructor started, so the panel a cell returns is drawn complete.

        A front end that attaches after the cell ran (Voila, a page exported with the widget state)
        reads every widget's state once when it connects and drops updates that arrive between that read
        and the set-up of its own models: a first view drawn from the worker thread after the cell
        returned could land in that gap (measured: a status line left empty under load while later
        updates showed).  Later jobs (buttons, refresh) run while the front end is attached and stay
        asynchronous."""
        self.wait(None)

    def cancel(self) -> None:
        """Ask the running job to stop at its next step (the Cancel button); no-op when idle."""
        job = self._job
        if job is not None and job.running:
            job.cancel.set()

    def wait(self, timeout: float | None = 120.0) -> bool:
        """Block until the current job settles.

        Args:
            timeout: the longest wait in seconds (``None``: until it settles).

        Returns:
            True when no job is in progress any more.
        """
        job = self._job
        return True if job is None else job.wait(timeout)

    @staticmethod
    def error_text(exc: BaseException) -> str:
        """The one safe text for a failed job (``mcpeval_nb.describe``)."""
        return describe(exc)
