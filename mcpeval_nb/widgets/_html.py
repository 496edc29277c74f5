"""Small HTML builders for the panels: every cell is escaped; only labels and numbers go in."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

__all__ = ["VERDICT_COLOURS", "badge", "esc", "pre", "sparkline_svg", "table"]

VERDICT_COLOURS = {"pass": "#1a7f37", "fail": "#cf222e", "error": "#9a6700", "not-run": "#6e7781",
                   "running": "#0969da", "pending": "#6e7781"}


#: Panel tables line their columns up (ids, codes, numbers): the notebook's code face.
_TABLE_STYLE = ("border-collapse:collapse;font-family:var(--jp-code-font-family,monospace);"
                "font-size:var(--jp-code-font-size,12px)")


def _cell_style(cell: object, raw: bool) -> str:
    """Short values (ids, labels, numbers) stay on one line; prose (a hint) may wrap."""
    short = raw or len(str(cell)) <= 40
    return "padding:2px 8px" + (";white-space:nowrap" if short else "")


def esc(value: object) -> str:
    """``value`` as escaped HTML text (None is shown as an empty cell)."""
    return "" if value is None else html.escape(str(value), quote=True)


def pre(text: str, *, css_class: str) -> str:
    """Lines that must keep their columns: the notebook's code face, single-spaced, escaped (inline
    style, so a static page's widget CSS cannot turn them back into spaced proportional text)."""
    return (f"<pre class='{css_class}' style='font-family:var(--jp-code-font-family,monospace);"
            f"font-size:var(--jp-code-font-size,12px);line-height:1.35;margin:4px 0'>{esc(text)}</pre>")


def badge(text: str, colour: str) -> str:
    """A small coloured label."""
    return (f'<span style="background:{colour};color:white;border-radius:3px;padding:0 4px;'
            f'font-size:90%">{esc(text)}</span>')


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], *, raw_columns: Iterable[int] = (),
          css_class: str = "mcpeval-table") -> str:
    """An HTML table; cells in ``raw_columns`` are already-built HTML (from ``badge``), others escaped."""
    raw = set(raw_columns)
    head = "".join(f'<th style="text-align:left;padding:2px 8px">{esc(h)}</th>' for h in headers)
    body = []
    for row in rows:
        cells = "".join(f'<td style="{_cell_style(cell, i in raw)}">{cell if i in raw else esc(cell)}</td>'
                        for i, cell in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    return (f'<table class="{css_class}" style="{_TABLE_STYLE}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def sparkline_svg(values: Sequence[int], *, width: int = 80, height: int = 16) -> str:
    """A tiny inline SVG polyline of daily counts for a table cell (empty string for no values)."""
    if not values:
        return ""
    top = max(values) or 1
    step = width / max(1, len(values) - 1)
    pts = " ".join(f"{i * step:.1f},{height - 1 - (v / top) * (height - 2):.1f}"
                   for i, v in enumerate(values))
    return (f'<svg width="{width}" height="{height}" class="mcpeval-spark"><polyline points="{pts}" '
            'fill="none" stroke="#cf222e" stroke-width="1.5"/></svg>')
