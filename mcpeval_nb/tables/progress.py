"""Progress for long loads: a bar in a notebook, a line on stderr in a terminal.

A progress callback receives ``(done_bytes, total_bytes)``; small loads (under 32 MiB) show nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["Progress", "notebook_progress", "resolve_progress", "text_progress"]

Progress = Callable[[int, int], None]
_MIN_BYTES = 32 * 1024 * 1024
_MIB = 1024 * 1024


def text_progress(stream: TextIO | None = None, *, label: str = "loading store",
                  min_bytes: int = _MIN_BYTES) -> Progress:
    """A callback printing ``<label>: 40% (120/300 MiB)`` lines at 10% steps.

    Args:
        stream: where to write (default ``sys.stderr`` at call time).
        label: the line's prefix.
        min_bytes: loads smaller than this print nothing.

    Returns:
        The callback.
    """
    last = [-1]

    def report(done: int, total: int) -> None:
        if total < min_bytes:
            return
        step = min(10, done * 10 // max(total, 1))
        if step <= last[0]:
            return
        last[0] = step
        out = stream or sys.stderr
        out.write(f"{label}: {step * 10}% ({done // _MIB}/{total // _MIB} MiB)\n")
        out.flush()

    return report


def _in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    ip = getattr(shell, "get_ipython", lambda: None)()
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def notebook_progress(*, label: str = "loading store", min_bytes: int = _MIN_BYTES) -> Progress:
    """A callback driving an ``ipywidgets.IntProgress`` bar, displayed on the first large report.

    Returns:
        The callback.
    """
    holder: dict[str, Any] = {}

    def report(done: int, total: int) -> None:
        if total < min_bytes:
            return
        if "bar" not in holder:
            import ipywidgets
            from IPython.display import display
            holder["bar"] = ipywidgets.IntProgress(min=0, max=total, description=label)
            display(holder["bar"])  # type: ignore[no-untyped-call]
        holder["bar"].max = total
        holder["bar"].value = min(done, total)

    return report


def resolve_progress(progress: Progress | bool | None) -> Progress | None:
    """Turn ``open_store``'s ``progress`` argument into a callback or None."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return notebook_progress() if _in_notebook() else text_progress()
    return progress
