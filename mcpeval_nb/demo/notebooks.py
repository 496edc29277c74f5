"""The demo's notebook step: execute the four notebooks against the demo root and export them as HTML.

Each notebook runs top to bottom in a fresh kernel of this interpreter (nbclient) with
``MCPEVAL_HOME`` pointing at the demo root, and is written with its outputs and charts as
``<out>/<name>.html`` (nbconvert).  Widget panels render as static HTML snapshots of their state.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["NOTEBOOKS", "run_notebooks"]

Say = Callable[[str], None]
#: The user's entry points, in reading order.
NOTEBOOKS = ("01-latency-and-errors", "02-readiness-history", "03-probe-a-server", "04-review-and-share")


def run_notebooks(notebooks: Path, root: Path, out: Path, *, say: Say, timeout: int = 600) -> list[Path]:
    """Execute each notebook and write its HTML.

    Args:
        notebooks: the directory holding the ``.ipynb`` files.
        root: the capture root the notebooks read (exported as ``MCPEVAL_HOME`` to the kernel).
        out: where the HTML files go.
        say: progress lines.
        timeout: seconds a single cell may run.

    Returns:
        The HTML paths written.

    Raises:
        nbclient.exceptions.CellExecutionError: a cell failed (the notebook is still written up to it).
    """
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    read: Any = nbformat.read
    exporter_class: Any = HTMLExporter
    exporter = exporter_class()

    env = {"MCPEVAL_HOME": str(root), "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    written = []
    try:
        for i, name in enumerate(NOTEBOOKS, start=1):
            say(f"notebook {i}/{len(NOTEBOOKS)}: {name}")
            nb = read(notebooks / f"{name}.ipynb", as_version=4)
            NotebookClient(nb, timeout=timeout, kernel_name="python3",
                           resources={"metadata": {"path": str(notebooks)}},
                           # keep the kernel's start-up chatter off the demo's progress lines
                           extra_arguments=["--IPKernelApp.log_level=ERROR"]).execute()
            html, _ = exporter.from_notebook_node(nb)
            path = out / f"{name}.html"
            path.write_text(html, encoding="utf-8")
            written.append(path)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return written
