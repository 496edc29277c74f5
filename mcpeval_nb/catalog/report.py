"""What ``mcpeval-nb catalog`` and ``mcpeval-nb usage`` print: text, JSON or Markdown from the tables.

``CatalogReport``: per server its current catalog (the latest complete listing: names in listed order,
flags, skeleton sizes, token estimates, when each tool last changed), then every drift row and the dead
tools.  ``UsageReport``: the ``tool_usage`` table and the ``tool_clusters``.  Labels, digests, numbers
and times only; an empty store prints one line saying so.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import pyarrow as pa

from ..analysis.catalog import Source, catalog_drift, catalog_history, listings, open_source
from ..analysis.usage import tool_clusters, tool_usage
from ..clock import now_ts
from ..probe.render import Format, FormatSet, json_text, lines_text, render

__all__ = ["REPORT_FORMATS", "CatalogReport", "UsageReport", "catalog_report", "usage_report"]

_NO_CATALOG = "no catalog recorded yet; capture a session through `mcpeval-nb shim`\n"
_NO_USAGE = "no tool listed or called yet; capture a session through `mcpeval-nb shim`\n"


def _cell(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return now_ts(value)
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 4)
    if isinstance(value, list):
        return [_cell(v) for v in value]
    return value


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    return [{k: _cell(v) for k, v in row.items()} for row in table.to_pylist()]


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "-"
    return str(value)


def _md_table(rows: list[dict[str, Any]], columns: list[str]) -> list[str]:
    if not rows:
        return ["(none)"]
    out = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    return out + ["| " + " | ".join(_text(r[c]) for c in columns) + " |" for r in rows]


def _text_lines(rows: list[dict[str, Any]], columns: list[str]) -> list[str]:
    return ["  " + " ".join(f"{c}={_text(r[c])}" for c in columns) for r in rows] or ["  (none)"]


_TOOL_COLS = ["tool", "flags", "properties", "depth", "tokens", "last_change"]
_DRIFT_COLS = ["server", "tool", "change", "previous_tool", "first_seen", "sessions", "mid_session",
               "list_changed"]
_DEAD_COLS = ["server", "tool", "listed_sessions", "catalog_tokens"]


@dataclass(frozen=True)
class CatalogReport:
    """The current catalog per server, the drift and the dead tools, ready to render."""

    #: The report's format table (text and Markdown say once that nothing was recorded).
    FORMATS: ClassVar[FormatSet[CatalogReport]] = FormatSet(
        (Format("text", lambda r, _: lines_text(r.text_lines()), _NO_CATALOG),
         Format("json", lambda r, _: json_text(r.to_json())),
         Format("md", lambda r, _: lines_text(r.md_lines()), _NO_CATALOG)),
        unknown="unknown catalog format; use text, json or md", is_empty=lambda r: not r.catalogs)

    catalogs: dict[str, dict[str, Any]]
    drift: list[dict[str, Any]]
    dead: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        """``{"catalogs": {server: {...}}, "drift": [...], "dead_tools": [...]}``."""
        return {"catalogs": self.catalogs, "drift": self.drift, "dead_tools": self.dead}

    def render(self, fmt: str = "text") -> str:
        """``text``, ``json`` or ``md``; every format ends with a newline.

        Raises:
            UsageError: an unknown format.
        """
        return render(self, fmt)

    def text_lines(self) -> list[str]:
        """The text format's lines."""
        lines = []
        for server, cat in sorted(self.catalogs.items()):
            state = "complete" if cat["complete"] else "incomplete"
            lines.append(f"{server}: {len(cat['tools'])} tool(s), listed {cat['listed_at']} ({state}), "
                         f"{cat['tokens']} tokens")
            lines += _text_lines(cat["tools"], _TOOL_COLS)
        lines.append(f"drift: {len(self.drift)} change(s)")
        lines += _text_lines(self.drift, _DRIFT_COLS)
        lines.append(f"dead tools: {len(self.dead)}")
        lines += _text_lines(self.dead, _DEAD_COLS)
        return lines

    def md_lines(self) -> list[str]:
        """The Markdown format's lines."""
        out = ["# Tool catalogs", ""]
        for server, cat in sorted(self.catalogs.items()):
            state = "complete" if cat["complete"] else "incomplete"
            summary = (f"{len(cat['tools'])} tool(s), listed {cat['listed_at']} ({state}), "
                       f"{cat['tokens']} tokens.")
            out += [f"## {server}", "", summary, "", *_md_table(cat["tools"], _TOOL_COLS), ""]
        out += ["## Drift", "", *_md_table(self.drift, _DRIFT_COLS), "", "## Dead tools", ""]
        return out + _md_table(self.dead, _DEAD_COLS)


def _current(history: pa.Table, drift: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    last_change: dict[tuple[str, str], Any] = {}
    for row in drift:
        last_change[(row["server"], row["tool"])] = row["first_seen"]
    latest: dict[str, Any] = {}
    for listing in listings(history):
        if listing.complete or listing.server not in latest:
            latest[listing.server] = listing
    rows = {(r["server"], r["session"], r["seq"], r["tool"]): r for r in history.to_pylist()}
    out = {}
    for server, listing in latest.items():
        tools = []
        for name, state in listing.tools.items():
            row = rows[(server, listing.session, listing.seq, name)]
            tools.append({"tool": name, "flags": list(state.flags), "properties": row["properties"],
                          "depth": row["depth"], "tokens": row["tokens"],
                          "last_change": last_change.get((server, name))})
        out[server] = {"listed_at": _cell(listing.ts), "complete": listing.complete, "tools": tools,
                       "tokens": sum(t["tokens"] or 0 for t in tools)}
    return out


def catalog_report(root: Source = None, *, server: str | None = None) -> CatalogReport:
    """The current catalog per server, then drift and dead tools (``mcpeval-nb catalog``).

    Args:
        root: the capture root, or an open ``Store``.
        server: only this server label.
    """
    store = open_source(root)
    history = catalog_history(store, server=server)
    drift = _rows(catalog_drift(store, server=server))
    usage = _rows(tool_usage(store, server=server))
    return CatalogReport(_current(history, drift), drift, [r for r in usage if r["verdict"] == "dead"])


_USAGE_COLS = ["server", "tool", "verdict", "listed_sessions", "called_sessions", "calls", "error_rate",
               "last_call", "catalog_tokens"]
_CLUSTER_COLS = ["server", "cluster", "tools", "sessions", "lift_min", "lift_max"]


@dataclass(frozen=True)
class UsageReport:
    """The usage table and the clusters, ready to render."""

    #: The report's format table.
    FORMATS: ClassVar[FormatSet[UsageReport]] = FormatSet(
        (Format("text", lambda r, _: lines_text(r.text_lines()), _NO_USAGE),
         Format("json", lambda r, _: json_text(r.to_json())),
         Format("md", lambda r, _: lines_text(r.md_lines()), _NO_USAGE)),
        unknown="unknown usage format; use text, json or md", is_empty=lambda r: not r.usage)

    usage: list[dict[str, Any]]
    clusters: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        """``{"usage": [...], "clusters": [...]}``."""
        return {"usage": self.usage, "clusters": self.clusters}

    def render(self, fmt: str = "text") -> str:
        """``text``, ``json`` or ``md``; every format ends with a newline.

        Raises:
            UsageError: an unknown format.
        """
        return render(self, fmt)

    def text_lines(self) -> list[str]:
        """The text format's lines."""
        lines = [f"usage: {len(self.usage)} tool(s)", *_text_lines(self.usage, _USAGE_COLS)]
        return [*lines, f"clusters: {len(self.clusters)}", *_text_lines(self.clusters, _CLUSTER_COLS)]

    def md_lines(self) -> list[str]:
        """The Markdown format's lines."""
        lines = ["# Tool usage", "", *_md_table(self.usage, _USAGE_COLS)]
        clusters = _md_table(self.clusters, _CLUSTER_COLS)
        return [*lines, "", "## Clusters (tools called together)", "", *clusters]


def usage_report(root: Source = None, *, server: str | None = None, since: Any = None,
                 until: Any = None) -> UsageReport:
    """The usage table and the clusters (``mcpeval-nb usage``).

    Raises:
        UsageError: a bad ``since`` or ``until``.
    """
    store = open_source(root)
    usage = _rows(tool_usage(store, server=server, since=since, until=until))
    return UsageReport(usage, _rows(tool_clusters(store, server=server)))


#: What ``CatalogReport.render`` and ``UsageReport.render`` write, in ``--format`` order.
REPORT_FORMATS = CatalogReport.FORMATS.names
