"""Results that show themselves in a notebook cell (docs/tables.md, "In a notebook").

``pyarrow.Table`` stays the type every analysis function returns (all of its methods, ``isinstance``
checks and zero-copy hand-offs to DuckDB and polars keep working); in a Jupyter kernel, importing
``mcpeval_nb`` registers an HTML formatter for ``pyarrow.Table`` with IPython (unless one is already
registered, or ``MCPEVAL_NB_TABLE_HTML=0``), so a table at the end of a cell renders as a table: the
first ``MAX_ROWS`` rows with column names and types, and how many rows are left out.  The package's
own result objects (``Store``, ``PromoteResult``, ``RedactionReport``, ``Explanation``, reports) define
``_repr_html_`` with ``lines_html``.  Every text is HTML-escaped; the values are the tables' own
(sanitised labels, shapes, numbers).
"""

from __future__ import annotations

import html
import os
import sys
from typing import Any

import pyarrow as pa

from ..htmltext import lines_html

__all__ = ["MAX_ROWS", "lines_html", "register_table_html", "table_html"]

MAX_ROWS = 20
_STYLE = ("font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;"
          "border-collapse:collapse")
_CELL = "padding:2px 8px;border-bottom:1px solid #d0d7de;text-align:left;white-space:nowrap"


def _cell(value: Any) -> str:
    if value is None:
        return '<span style="color:#8c959f">null</span>'
    text = str(value)
    return html.escape(text if len(text) <= 80 else text[:77] + "...")


def table_html(table: pa.Table, *, max_rows: int = MAX_ROWS, title: str | None = None) -> str:
    """An HTML table of the first ``max_rows`` rows (names and types in the header).

    Args:
        table: the table. max_rows: rows shown. title: a caption (escaped).

    Returns:
        The HTML fragment.
    """
    head = "".join(f'<th style="{_CELL}">{html.escape(f.name)}<br><span style="color:#8c959f;'
                   f'font-weight:normal">{html.escape(str(f.type))}</span></th>' for f in table.schema)
    rows = table.slice(0, max_rows).to_pylist()
    body = "".join("<tr>" + "".join(f'<td style="{_CELL}">{_cell(v)}</td>' for v in row.values()) + "</tr>"
                   for row in rows)
    more = table.num_rows - len(rows)
    note = f"{table.num_rows} rows × {table.num_columns} columns"
    note += f" ({more} more not shown)" if more else ""
    caption = f"<b>{html.escape(title)}</b> " if title else ""
    return (f'<div style="overflow-x:auto"><div style="font-size:12px;color:#57606a">{caption}{note}</div>'
            f'<table style="{_STYLE}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>')


def register_table_html() -> bool:
    """In a running IPython, render ``pyarrow.Table`` as ``table_html`` (once; never over another
    formatter the user registered).

    Returns:
        True when the formatter is registered now or already was.
    """
    if os.environ.get("MCPEVAL_NB_TABLE_HTML", "1") == "0":
        return False
    module = sys.modules.get("IPython")
    ip = getattr(module, "get_ipython", lambda: None)() if module is not None else None
    if ip is None:
        return False
    formatter = ip.display_formatter.formatters["text/html"]
    current = formatter.type_printers.get(pa.Table)
    if current is not None:
        return current is _format
    formatter.for_type(pa.Table, _format)
    return True


def _format(table: pa.Table) -> str:
    return table_html(table)
