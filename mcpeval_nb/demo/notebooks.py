"""The demo's notebook step: execute the notebooks against the demo root and export them as HTML.

Each notebook runs top to bottom in a fresh kernel of this interpreter (nbclient) with
``MCPEVAL_HOME`` pointing at the demo root, and is written with its outputs, charts and widget state as
``<out>/<name>.html`` (nbconvert).  The pages fetch nothing from outside: nbconvert's template would
load require.js and the widget renderer from public CDNs, which a user offline (and every machine here)
cannot reach, leaving each panel blank.  Instead the renderer (npm ``@jupyter-widgets/html-manager``)
and require.js, installed by ``make`` under ``web/node_modules``, are copied beside the pages
(``<out>/static/``, icon fonts in ``<out>/@jupyter-widgets/``), and the ``offline`` template leaves
out MathJax and Mermaid, which the notebooks do not use.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["NOTEBOOKS", "WEB_ASSETS", "copy_web_assets", "run_notebooks", "scrub_paths"]

Say = Callable[[str], None]
#: The user's entry points, in reading order.
NOTEBOOKS = ("01-latency-and-errors", "02-readiness-history", "03-probe-a-server", "04-review-and-share",
             "05-findings", "06-context-cost", "07-catalog-and-usage", "08-mock-and-replay")
#: Where ``make setup`` installs the page scripts (``web/package.json``).
WEB_ASSETS = Path(__file__).resolve().parents[2] / "web" / "node_modules"
_RENDERER = "@jupyter-widgets/html-manager/dist"
_FONTS = (".woff2", ".woff", ".ttf", ".eot", ".svg")


def copy_web_assets(out: Path, *, assets: Path = WEB_ASSETS) -> dict[str, str]:
    """Copy require.js and the widget renderer to ``<out>/static/``, and its icon fonts to
    ``<out>/@jupyter-widgets/`` (where the renderer's AMD modules resolve them, relative to the page).

    Args:
        out: the directory the pages are written to.
        assets: the ``node_modules`` directory holding ``requirejs`` and ``@jupyter-widgets/html-manager``.

    Returns:
        The exporter settings that point the pages at the copies (relative URLs).

    Raises:
        FileNotFoundError: the scripts are not installed (run ``make setup``, which needs npm).
    """
    static = out / "static"
    static.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(assets / "requirejs" / "require.js", static / "require.js")
    renderer = assets / _RENDERER
    shutil.copyfile(renderer / "embed-amd.js", static / "embed-amd.js")
    fonts = out / "@jupyter-widgets"
    fonts.mkdir(exist_ok=True)
    for font in renderer.iterdir():
        if font.suffix in _FONTS:
            shutil.copyfile(font, fonts / font.name)
    return {"require_js_url": "static/require.js", "widget_renderer_url": "static/embed-amd.js"}


_MARKER = re.compile(r"^[ \t]*# NBVAL_[A-Z_]+.*(?:\n|$)", re.M)


def _for_readers(nb: Any) -> Any:
    """The executed notebook without the test runner's ``# NBVAL_...`` marker lines in its code cells."""
    for cell in nb.cells:
        if cell.get("cell_type") == "code":
            cell["source"] = _MARKER.sub("", cell["source"])
    return nb


def _machine_paths(notebooks: Path, root: Path, out: Path) -> dict[str, str]:
    """Absolute paths of the machine that built the pages -> what a reader sees instead (most
    specific first): the demo directory, the checkout, the interpreter's environment, the home."""
    checkout = notebooks.resolve().parent
    found = {str(out.resolve()): "build/demo", str(root.resolve()): "build/demo/root",
             str(checkout): ".", sys.prefix: ".venv", str(Path.home()): "~"}
    return dict(sorted(found.items(), key=lambda kv: -len(kv[0])))


def scrub_paths(text: str, paths: dict[str, str]) -> str:
    """Replace each absolute path in ``paths`` (also in its JSON-escaped ``\\/`` form) by its label.

    Args:
        text: an exported page. paths: path -> label, most specific first.

    Returns:
        The page without those paths.
    """
    for path, label in paths.items():
        if len(path) > 1:
            for old, new in ((path, label), (path.replace("/", "\\/"), label.replace("/", "\\/"))):
                # a whole path only: not inside a longer name, nor a path that merely ends the same way
                pattern = r"(?<![\w.~\\/-])" + re.escape(old) + r"(?![\w.-])"
                text = re.sub(pattern, new.replace("\\", "\\\\"), text)
    return text


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
    try:
        settings = copy_web_assets(out)
    except FileNotFoundError:
        say("notebook pages: the widget renderer is not installed (make setup needs npm): "
            "panels in the HTML pages will be blank offline")
        settings = {}
    exporter = exporter_class(extra_template_basedirs=[str(Path(__file__).resolve().parent)],
                              template_name="offline", **settings)

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
            html, _ = exporter.from_notebook_node(_for_readers(nb))
            path = out / f"{name}.html"
            path.write_text(scrub_paths(html, _machine_paths(notebooks, root, out)), encoding="utf-8")
            written.append(path)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return written
