"""Charts over the store's tables: ``plot_*(table_or_frame, *, ax=None) -> Axes``.

Each function draws on ``ax`` (or a new figure's axes) and returns it; none calls ``plt.show()`` or
changes global style.  Inputs are the tables of ``open_store`` (or their pandas frames) or the analysis
tables computed from them; every label drawn is a sanitised value (labels, tool names, template ids).
"""

from __future__ import annotations

from typing import Any

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pyarrow as pa
from matplotlib.axes import Axes

import mcpeval_nb

__all__ = [
    "plot_catalog_timeline",
    "plot_failure_windows",
    "plot_finding_factors",
    "plot_latency_distribution",
    "plot_latency_over_time",
    "plot_outcome_mix",
    "plot_readiness_history",
    "plot_result_sizes",
    "plot_template_heatmap",
    "plot_tool_transitions",
    "plot_tool_usage",
]

_OUTCOME_COLOURS = {"ok": "#4c9a5b", "error": "#c8553d", "unknown": "#9a9a9a", "unparsed": "#5b6fb0"}
_CHANGE_MARKERS = (("standard_changed", "X", "standard changed"), ("profile_changed", "D", "profile changed"),
                   ("manifest_changed", "s", "manifest changed"))


def _axes(ax: Axes | None) -> Axes:
    if ax is not None:
        return ax
    _, new = plt.subplots(figsize=(8, 4.5), layout="constrained")
    return new


def _frame(data: Any) -> pd.DataFrame:
    if isinstance(data, pa.Table):
        cols = {n: (c.cast(pa.string()) if pa.types.is_dictionary(c.type) else c)
                for n, c in zip(data.column_names, data.columns, strict=True)}
        frame: pd.DataFrame = pa.table(cols).to_pandas()
        return frame
    if isinstance(data, pd.DataFrame):
        return data
    raise mcpeval_nb.UsageError("expected a pyarrow.Table or a pandas.DataFrame")


def _empty(ax: Axes, what: str) -> None:
    """Write ``no <what> to show`` on axes that got nothing to draw."""
    ax.text(0.5, 0.5, f"no {what} to show", ha="center", va="center", transform=ax.transAxes,
            color="#6e7781")


def _date_axis(ax: Axes) -> None:
    """Concise date ticks on the x axis (no overlapping full dates), on this axes only."""
    locator = mdates.AutoDateLocator()  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]


def _naive(times: pd.Series) -> np.ndarray:
    series = pd.to_datetime(times, utc=True)
    result: np.ndarray = series.dt.tz_localize(None).to_numpy()
    return result


def plot_latency_distribution(calls: Any, *, ax: Axes | None = None, by: str = "tool",
                              max_groups: int = 20) -> Axes:
    """Box plots of latency per tool (or per ``by`` column), slowest median first.

    The axis is linear below 1 ms and logarithmic above (symlog): a journal latency is whole
    milliseconds, so 0 means "under a millisecond" and is drawn at 0, not at an invented floor.

    Args:
        calls: the calls table or frame.
        ax: axes to draw on (default: a new figure).
        by: the grouping column.
        max_groups: at most this many groups (the slowest by median).

    Returns:
        The axes.

    Raises:
        UsageError: the input lacks the columns.
    """
    ax = _axes(ax)
    frame = _frame(calls)
    if by not in frame.columns or "latency_ms" not in frame.columns:
        raise mcpeval_nb.UsageError(f"input needs columns {by!r} and 'latency_ms'")
    frame = frame[frame["latency_ms"].notna() & frame[by].notna()]
    groups = frame.groupby(by)["latency_ms"]
    order = groups.median().sort_values(ascending=False).index[:max_groups]
    data = [groups.get_group(g).to_numpy(dtype=float) for g in order]
    if data:
        ax.boxplot(data, tick_labels=[str(g) for g in order], orientation="horizontal", showfliers=False)
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set_xlim(left=0)
    else:
        _empty(ax, "latencies")
    ax.set_xlabel("latency (ms; 0 = under 1 ms)")
    ax.set_ylabel(by)
    ax.set_title(f"latency per {by}")
    return ax


def plot_latency_over_time(data: Any, *, ax: Axes | None = None, bucket: str = "1h",
                           percentiles: tuple[int, ...] = (50, 95)) -> Axes:
    """Latency percentiles over time: one line per percentile.

    Args:
        data: the calls table (bucketed here over all calls) or a ``latency_over_time`` table with
            ``by=()``.
        ax: axes to draw on.
        bucket: time bucket when ``data`` is the calls table.
        percentiles: which of ``PERCENTILES`` to draw.

    Returns:
        The axes.
    """
    ax = _axes(ax)
    if (isinstance(data, pa.Table) and "bucket" not in data.column_names) or (
            isinstance(data, pd.DataFrame) and "bucket" not in data.columns):
        data = mcpeval_nb.latency_over_time(data, bucket=bucket, by=())
    frame = _frame(data).sort_values("bucket")
    when = _naive(frame["bucket"])
    for p in percentiles:
        if f"p{p}" not in frame.columns:
            raise mcpeval_nb.UsageError(f"percentile {p} is not one of {mcpeval_nb.PERCENTILES}")
        ax.plot(when, frame[f"p{p}"].to_numpy(), marker=".", label=f"p{p}")
    _date_axis(ax)
    ax.set_ylabel("latency (ms)")
    ax.set_title("latency over time (UTC)")
    ax.legend()
    return ax


def plot_outcome_mix(data: Any, *, ax: Axes | None = None, by: str = "tool") -> Axes:
    """Stacked horizontal bars of outcome shares per group.

    Args:
        data: the calls table or an ``outcome_rates`` table (with ``by=(by,)``).
        ax: axes to draw on.
        by: the grouping column.

    Returns:
        The axes.
    """
    ax = _axes(ax)
    if (isinstance(data, pa.Table) and "ok_rate" not in data.column_names) or (
            isinstance(data, pd.DataFrame) and "ok_rate" not in data.columns):
        data = mcpeval_nb.outcome_rates(data, by=(by,))
    frame = _frame(data)
    labels = [str(v) for v in frame[by].fillna("(none)")]
    left = np.zeros(len(frame))
    for outcome in mcpeval_nb.OUTCOMES:
        share = frame[f"{outcome}_rate"].to_numpy(dtype=float)
        ax.barh(labels, share, left=left, color=_OUTCOME_COLOURS[outcome], label=outcome)
        left += share
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of calls")
    ax.set_title(f"outcomes per {by}")
    if len(frame):
        ax.legend(loc="lower right")
    else:
        _empty(ax, "calls")
    return ax


def plot_template_heatmap(data: Any, *, ax: Axes | None = None, top: int = 15) -> Axes:
    """Heatmap of error template counts per day (templates by total count, top ``top``).

    Args:
        data: the calls table or a ``template_daily`` table.
        ax: axes to draw on.
        top: most frequent templates shown.

    Returns:
        The axes (the image is ``ax.images[0]``).
    """
    ax = _axes(ax)
    if (isinstance(data, pa.Table) and "day" not in data.column_names) or (
            isinstance(data, pd.DataFrame) and "day" not in data.columns):
        data = mcpeval_nb.template_daily(data)
    frame = _frame(data)
    grid = frame.pivot_table(index="template_id", columns="day", values="count", aggfunc="sum", fill_value=0)
    grid = grid.loc[grid.sum(axis=1).sort_values(ascending=False).index[:top]]
    image = ax.imshow(grid.to_numpy(dtype=float), aspect="auto", cmap="Reds", interpolation="nearest")
    ax.set_yticks(range(len(grid.index)), [str(t) for t in grid.index])
    ax.set_xticks(range(len(grid.columns)), [str(d) for d in grid.columns], rotation=45, ha="right")
    ax.set_title("error templates per day")
    ax.figure.colorbar(image, ax=ax, label="count")
    return ax


def plot_readiness_history(data: Any, *, ax: Axes | None = None) -> Axes:
    """Readiness score per server over time, with markers where the standard, measurement profile or
    manifest changed.

    Args:
        data: the trends table or a ``readiness_history`` table.
        ax: axes to draw on.

    Returns:
        The axes (one line per server; change markers are labelled scatter collections).
    """
    ax = _axes(ax)
    if (isinstance(data, pa.Table) and "delta" not in data.column_names) or (
            isinstance(data, pd.DataFrame) and "delta" not in data.columns):
        data = mcpeval_nb.readiness_history(data)
    frame = _frame(data)
    frame = frame[frame["ts"].notna()]
    for server, points in frame.groupby("server", sort=True):
        ax.plot(_naive(points["ts"]), points["score"].to_numpy(dtype=float), marker="o", label=str(server))
    for column, marker, label in _CHANGE_MARKERS:
        hits = frame[frame[column].astype(bool)]
        if len(hits):
            ax.scatter(_naive(hits["ts"]), hits["score"].to_numpy(dtype=float), marker=marker, s=90,
                       facecolors="none", edgecolors="black", label=label, zorder=3)
    _date_axis(ax)
    ax.set_ylim(0, 100)
    ax.set_ylabel("readiness score")
    ax.set_title("readiness history")
    if len(frame):
        ax.legend()
    else:
        _empty(ax, "readiness points")
    return ax


_FACTORS = (("confidence", "#5b6fb0"), ("recency", "#4c9a5b"), ("cost", "#c8553d"), ("blast", "#9a6700"))


def plot_finding_factors(data: Any, *, ax: Axes | None = None, top: int = 10) -> Axes:
    """Why findings rank where they do: the four factors of each score as bars, best finding first.

    ``score = confidence × recency × cost × blast``; cost and blast are drawn as the factors they are
    (``log2(1 + median window)``, ``1 + log2(tools)``), so the product of a group's bars is its score.

    Args:
        data: ``mcpeval_nb.findings(root)`` (or its frame).
        ax: axes to draw on. top: at most this many findings (the table's order: best first).

    Returns:
        The axes (one bar group per finding, labelled ``tool #<id suffix>``).
    """
    ax = _axes(ax)
    frame = _frame(data).head(top)
    if frame.empty:
        _empty(ax, "findings")
        return ax
    values = {
        "confidence": frame["confidence"].to_numpy(dtype=float),
        "recency": frame["recency"].to_numpy(dtype=float),
        "cost": np.log2(1 + frame["cost"].to_numpy(dtype=float)),
        "blast": 1 + np.log2(np.maximum(1, frame["blast"].to_numpy(dtype=float))),
    }
    x = np.arange(len(frame))
    width = 0.2
    for i, (name, colour) in enumerate(_FACTORS):
        ax.bar(x + (i - 1.5) * width, values[name], width, label=name, color=colour)
    pairs = zip(frame["tool"], frame["finding_id"], strict=True)
    labels = [f"{tool or 'unlisted'} #{str(fid)[-6:]}" for tool, fid in pairs]
    ax.set_xticks(x, labels, rotation=30, ha="right")
    ax.set_ylabel("factor value")
    ax.set_title("score factors per finding (score = product)")
    ax.legend()
    return ax


def plot_failure_windows(data: Any, *, ax: Axes | None = None) -> Axes:
    """A finding's failure windows as a timeline: one row per failure, the calls at offsets -5..+3
    coloured by outcome, the failure itself (offset 0) as a cross.

    Args:
        data: ``mcpeval_nb.failure_windows(root, finding_id)`` (or its frame).
        ax: axes to draw on.

    Returns:
        The axes (x: offset from the failure, y: failures, newest on top).
    """
    ax = _axes(ax)
    frame = _frame(data)
    if frame.empty:
        _empty(ax, "failure windows")
        return ax
    order = {fid: i for i, fid in enumerate(sorted(frame["failure_id"].unique()))}
    rows = frame["failure_id"].map(order).to_numpy(dtype=float)
    offsets = frame["offset"].to_numpy(dtype=float)
    for outcome, colour in _OUTCOME_COLOURS.items():
        mask = (frame["outcome"] == outcome).to_numpy() & (offsets != 0)
        if mask.any():
            ax.scatter(offsets[mask], rows[mask], color=colour, s=40, label=outcome)
    failed = offsets == 0
    ax.scatter(offsets[failed], rows[failed], color="#c8553d", marker="X", s=90, label="the failure")
    ax.axvline(0, color="#6e7781", linewidth=0.8)
    ax.set_xticks(range(-5, 4))
    ax.set_yticks(range(len(order)))
    ax.set_ylim(-0.5, len(order) - 0.5)
    ax.set_xlabel("offset from the failure (calls)")
    ax.set_ylabel("failure (oldest at the bottom)")
    ax.set_title("calls around each failure")
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small")
    return ax


def plot_result_sizes(data: Any, *, ax: Axes | None = None, value: str = "result_bytes") -> Axes:
    """Result size per tool over sizes runs (``mcpeval_nb.result_size_history``): one line per tool.

    Args:
        data: the result-size history table (or its pandas frame).
        ax: axes to draw on.
        value: the measure drawn: ``result_bytes``, ``tokens``, ``text_chars`` or ``structured_bytes``
            (a tool called twice in one run shows its largest result).

    Returns:
        The axes (x: the run number, y: the measure; calls without a result are not drawn).
    """
    if value not in ("result_bytes", "tokens", "text_chars", "structured_bytes"):
        raise mcpeval_nb.UsageError("value must be result_bytes, tokens, text_chars or structured_bytes")
    ax = _axes(ax)
    frame = _frame(data)
    frame = frame[frame[value].notna()] if len(frame) else frame
    for tool, rows in (frame.groupby("tool", sort=True) if len(frame) else ()):
        per_run = rows.groupby("run")[value].max()
        ax.plot(per_run.index.to_numpy(), per_run.to_numpy(dtype=float), marker="o", label=str(tool))
    ax.set_xlabel("sizes run")
    ax.set_ylabel(value.replace("_", " "))
    ax.set_title(f"{value.replace('_', ' ')} per tool over runs")
    if len(frame):
        ax.legend()
    else:
        _empty(ax, "result sizes")
    return ax


# ---- catalogs and usage (docs/catalog.md) ------------------------------------------------------------

#: Marker and colour of each drift change kind.
_CHANGE_STYLE = {"added": ("P", "#4c9a5b"), "removed": ("X", "#c8553d"), "renamed": ("s", "#9a6700"),
                 "description-changed": ("o", "#5b6fb0"), "schema-changed": ("D", "#8250df"),
                 "annotations-changed": ("^", "#bf3989"), "definition-changed": ("v", "#6e7781")}
_VERDICT_COLOURS = {"dead": "#c8553d", "rare": "#d29922", "used": "#1f6feb",
                    "insufficient-evidence": "#8c959f"}


def plot_catalog_timeline(drift: Any, *, history: Any = None, ax: Axes | None = None) -> Axes:
    """Catalog changes over time, one row per server: a marker per change (shape and colour by kind),
    edged in black when it happened inside a session; with ``history``, every recorded listing as a grey
    tick.

    Args:
        drift: a ``catalog_drift`` table (or its frame).
        history: a ``catalog_history`` table: the listings, so quiet stretches show as ticks.
        ax: axes to draw on.

    Returns:
        The axes (one labelled scatter collection per change kind).
    """
    ax = _axes(ax)
    changes = _frame(drift)
    changes = changes[changes["change"] != "mid-session"]
    listings = _frame(history).drop_duplicates(["server", "session", "seq", "ts"]) if history is not None \
        else changes.iloc[0:0]
    servers = sorted(set(changes["server"]) | set(listings["server"]))
    row = {server: i for i, server in enumerate(servers)}
    if len(listings):
        ax.scatter(_naive(listings["ts"]), [row[s] - 0.3 for s in listings["server"]], marker="|", s=60,
                   color="#afb8c1", label="listing recorded")
    kinds = [k for k in _CHANGE_STYLE if k in set(changes["change"])]
    for i, kind in enumerate(kinds):
        hits = changes[changes["change"] == kind]
        marker, colour = _CHANGE_STYLE[kind]
        offset = (i - (len(kinds) - 1) / 2) * min(0.1, 0.55 / max(1, len(kinds)))
        mid = hits["mid_session"].astype(bool).to_numpy()
        ys = [row[s] + offset for s in hits["server"]]
        ax.scatter(_naive(hits["first_seen"]), ys, marker=marker, s=70, color=colour, label=kind, zorder=3,
                   edgecolors=["black" if m else colour for m in mid],
                   linewidths=[1.6 if m else 0.5 for m in mid])
    if changes["mid_session"].astype(bool).any():
        ax.scatter([], [], marker="o", s=70, color="white", edgecolors="black", linewidths=1.6,
                   label="black edge: inside a session")
    ax.set_yticks(range(len(servers)), servers)
    ax.set_ylim(-0.7, max(0.7, len(servers) - 0.3))
    _date_axis(ax)
    ax.set_title("catalog changes per server")
    if servers:
        ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small")
    else:
        _empty(ax, "catalog listings")
    return ax


def plot_tool_usage(usage: Any, *, ax: Axes | None = None, top: int = 30) -> Axes:
    """Sessions that listed each tool against sessions that called it; the verdict colours the calls bar
    and dead tools are labelled with the context tokens every session pays for them.

    Args:
        usage: a ``tool_usage`` table (or its frame).
        ax: axes to draw on.
        top: at most this many tools (dead first, then by sessions listed).

    Returns:
        The axes (listed bars first, then one bar collection per verdict).
    """
    ax = _axes(ax)
    frame = _frame(usage)
    order = {"dead": 0, "rare": 1, "insufficient-evidence": 2, "used": 3}
    frame = frame.assign(_order=frame["verdict"].map(order)).sort_values(
        ["_order", "listed_sessions"], ascending=[True, False], kind="stable").head(top).iloc[::-1]
    many = frame["server"].nunique() > 1
    labels = [f"{s}/{t}" if many else str(t) for s, t in zip(frame["server"], frame["tool"], strict=True)]
    ys = np.arange(len(frame))
    dead = (frame["verdict"] == "dead").to_numpy()
    listed = frame["listed_sessions"].to_numpy(dtype=float)
    ax.barh(ys[~dead], listed[~dead], color="#eaeef2", edgecolor="#afb8c1", label="sessions that listed it")
    if dead.any():
        ax.barh(ys[dead], listed[dead], color="#fbe3df", edgecolor=_VERDICT_COLOURS["dead"],
                label="listed, never called (dead)")
    for verdict, colour in _VERDICT_COLOURS.items():
        mask = (frame["verdict"] == verdict).to_numpy() & (frame["called_sessions"].to_numpy() > 0)
        if mask.any():
            ax.barh(ys[mask], frame["called_sessions"].to_numpy(dtype=float)[mask], height=0.5, color=colour,
                    label=f"sessions that called it ({verdict})")
    for y, (_, r) in zip(ys, frame.iterrows(), strict=True):
        if r["verdict"] == "dead":
            tokens = r["catalog_tokens"]
            known = tokens is not None and tokens == tokens  # NaN when never listed
            note = f"dead: {int(tokens)} tokens a session" if known else "dead"
            ax.annotate(note, (float(r["listed_sessions"]), y), xytext=(4, 0), textcoords="offset points",
                        va="center", fontsize="small", color=_VERDICT_COLOURS["dead"])
    ax.set_yticks(ys, labels)
    ax.set_xlabel("sessions")
    ax.set_title("tools listed and called")
    if len(frame):
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncols=2, fontsize="small")
        ax.set_xlim(0, float(frame["listed_sessions"].max()) * 1.35 + 1)
    else:
        _empty(ax, "tools")
    return ax


def plot_tool_transitions(transitions: Any, *, server: str | None = None, ax: Axes | None = None,
                          top: int = 15) -> Axes:
    """Heatmap of which tool call follows which: the probability of the next tool given the previous,
    each cell labelled with its count.

    Args:
        transitions: a ``tool_transitions`` table (or its frame).
        server: only this server (default: every server, tools labelled ``server/tool`` when several).
        ax: axes to draw on.
        top: at most this many tools per axis (the most frequent).

    Returns:
        The axes (the image is ``ax.images[0]``).
    """
    ax = _axes(ax)
    frame = _frame(transitions)
    if server is not None:
        frame = frame[frame["server"] == server]
    if frame.empty:
        _empty(ax, "tool transitions")
        return ax
    many = frame["server"].nunique() > 1
    def name(srv: object, tool: object) -> str:
        return f"{srv}/{tool}" if many else str(tool)

    frame = frame.assign(_from=[name(s, t) for s, t in zip(frame["server"], frame["from_tool"], strict=True)],
                         _to=[name(s, t) for s, t in zip(frame["server"], frame["to_tool"], strict=True)])
    weight = frame.groupby("_from")["count"].sum().add(frame.groupby("_to")["count"].sum(), fill_value=0)
    keep = list(weight.sort_values(ascending=False).index[:top])
    tools = sorted(keep)
    grid = frame.pivot_table(index="_from", columns="_to", values="probability", aggfunc="sum",
                             fill_value=0.0).reindex(index=tools, columns=tools, fill_value=0.0)
    counts = frame.pivot_table(index="_from", columns="_to", values="count", aggfunc="sum",
                               fill_value=0).reindex(index=tools, columns=tools, fill_value=0)
    shares, numbers = grid.to_numpy(dtype=float), counts.to_numpy(dtype=int)
    image = ax.imshow(shares, cmap="Blues", vmin=0, vmax=1, interpolation="nearest")
    for i in range(len(tools)):
        for j in range(len(tools)):
            n = int(numbers[i, j])
            if n:
                dark = shares[i, j] > 0.6
                ax.text(j, i, str(n), ha="center", va="center", fontsize="small",
                        color="white" if dark else "#24292f")
    ax.set_xticks(range(len(tools)), tools, rotation=45, ha="right")
    ax.set_yticks(range(len(tools)), tools)
    ax.set_xlabel("next tool")
    ax.set_ylabel("tool")
    ax.set_title("what follows what (cell: count; colour: probability)")
    ax.figure.colorbar(image, ax=ax, label="P(next | tool)")
    return ax
