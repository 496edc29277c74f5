"""The one progress bar of the CLI, the panels' loads and the notebooks: tqdm.

``byte_progress(label)`` returns a ``(done_bytes, total_bytes)`` callback that draws a tqdm bar with
the rate and the time left: in a notebook the ``tqdm.notebook`` widget, elsewhere the text bar on stderr
(``tqdm.std``, redrawn in place on a terminal, a line per update at most every few seconds otherwise).
Small work (under ``min_bytes``, 32 MiB by default) shows nothing.  tqdm is the ecosystem's habit
(pandas, Dask, Hugging Face): users already know its bar and can silence it with ``TQDM_DISABLE=1``.
Labels and numbers only: nothing a progress bar shows comes from a payload.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["MIN_PROGRESS_BYTES", "Progress", "byte_progress", "in_notebook"]

#: A progress callback: ``(done, total)`` in bytes.
Progress = Callable[[int, int], None]
MIN_PROGRESS_BYTES = 32 * 1024 * 1024
#: ``loading store:  40%|####      | 120M/300MB [00:03<00:04, 38.2MB/s]`` (M = MiB: 1024-based)
_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt}B [{elapsed}<{remaining}, {rate_fmt}]"


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (an IPython ZMQ shell), without importing IPython."""
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    ip = getattr(shell, "get_ipython", lambda: None)()
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def byte_progress(label: str, *, notebook: bool | None = None, stream: TextIO | None = None,
                  min_bytes: int = MIN_PROGRESS_BYTES) -> Progress:
    """A ``(done, total)`` callback drawing one tqdm bar (bytes, rate, time left) for ``label``.

    Args:
        label: what is being done (``loading store``, ``indexing``, ``doctor``).
        notebook: the notebook widget (True), the text bar (False), or decide by the process (None).
        stream: where the text bar goes (default ``sys.stderr`` at the first report).
        min_bytes: work smaller than this shows nothing.

    Returns:
        The callback; the bar closes itself when ``done`` reaches ``total``.
    """
    holder: dict[str, Any] = {}

    def report(done: int, total: int) -> None:
        if total < min_bytes:
            return
        bar = holder.get("bar")
        if bar is None:
            bar = holder["bar"] = _bar(label, total, notebook, stream)
        if bar.total != total:
            bar.total = total
        bar.update(max(0, min(done, total) - bar.n))
        if done >= total and not holder.get("closed"):
            holder["closed"] = True
            bar.close()

    return report


def _bar(label: str, total: int, notebook: bool | None, stream: TextIO | None) -> Any:
    widget = in_notebook() if notebook is None else notebook
    if widget:
        from tqdm.notebook import tqdm as bar_class
    else:
        from tqdm.std import tqdm as bar_class
    out = None if widget else (stream or sys.stderr)
    return bar_class(total=total, desc=label, unit="B", unit_scale=True, unit_divisor=1024, file=out,
                     mininterval=0.5, dynamic_ncols=True, leave=True, bar_format=_FORMAT)
