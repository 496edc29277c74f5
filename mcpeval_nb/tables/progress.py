"""Progress for long loads: ``mcpeval_nb.progress``'s one tqdm bar, a widget in a notebook and a bar on
stderr in a terminal.  A progress callback receives ``(done_bytes, total_bytes)``; small loads (under
32 MiB) show nothing.
"""

from __future__ import annotations

from typing import TextIO

from ..progress import MIN_PROGRESS_BYTES, Progress, byte_progress, in_notebook

__all__ = ["Progress", "notebook_progress", "resolve_progress", "text_progress"]


def text_progress(stream: TextIO | None = None, *, label: str = "loading store",
                  min_bytes: int = MIN_PROGRESS_BYTES) -> Progress:
    """The text bar (bytes done, rate, time left) on ``stream`` (default ``sys.stderr``).

    Args:
        stream: where to write. label: the bar's label. min_bytes: smaller loads show nothing.

    Returns:
        The callback.
    """
    return byte_progress(label, notebook=False, stream=stream, min_bytes=min_bytes)


def notebook_progress(*, label: str = "loading store", min_bytes: int = MIN_PROGRESS_BYTES) -> Progress:
    """The notebook widget bar (tqdm.notebook), displayed on the first large report.

    Returns:
        The callback.
    """
    return byte_progress(label, notebook=True, min_bytes=min_bytes)


def resolve_progress(progress: Progress | bool | None) -> Progress | None:
    """Turn ``open_store``'s ``progress`` argument into a callback or None."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return notebook_progress() if in_notebook() else text_progress()
    return progress
