"""Text blocks as HTML for notebook cells: how the package's result objects render (``_repr_html_``).

A bottom-layer module (the standard library only) so that a report type can render itself without
loading the table stack; ``tables.html`` renders Arrow tables.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

__all__ = ["lines_html"]


def lines_html(title: str, lines: Iterable[str]) -> str:
    """A titled block of text lines (monospace, escaped): how result objects render in a cell.

    Args:
        title: the heading. lines: the same lines the CLI prints.

    Returns:
        The HTML fragment.
    """
    text = html.escape("\n".join(lines))
    return (f'<div><div style="font-size:12px;color:#57606a"><b>{html.escape(title)}</b></div>'
            f'<pre style="font-size:12px;margin:2px 0">{text}</pre></div>')
