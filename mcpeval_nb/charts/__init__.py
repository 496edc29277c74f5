"""Charts over the store's tables: ``plot_*(table_or_frame, *, ax=None) -> Axes``.

Each function draws on ``ax`` (or a new figure's axes) and returns it; none calls ``plt.show()`` or
changes global style.  Inputs are the tables of ``open_store``, the analysis tables computed from them,
their pandas frames, or any Arrow stream (polars, DuckDB); every label drawn is a sanitised value
(labels, tool names, template ids, codes).  Importing this module loads neither matplotlib nor pandas:
the first chart does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcpeval_nb

from . import _kit as kit
from ._catalog import plot_catalog_timeline, plot_tool_transitions, plot_tool_usage, usage_height
from ._findings import plot_failure_windows, plot_finding_factors
from ._operations import plot_operations
from ._replay import plot_replay_comparison

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "plot_catalog_timeline",
    "plot_failure_windows",
    "plot_finding_factors",
    "plot_latency_distribution",
    "plot_latency_over_time",
    "plot_operations",
    "plot_outcome_mix",
    "plot_readiness_history",
    "plot_replay_comparison",
    "plot_result_sizes",
    "plot_template_heatmap",
    "plot_tool_transitions",
    "plot_tool_usage",
    "usage_height",
]

_CHANGE_MARKERS = (("standard_changed", "X", "standard changed"), ("profile_changed", "D", "profile changed"),
                   ("manifest_changed", "s", "manifest changed"))


def _group_labels(frame: Any, by: str) -> Any:
    """The group of each row: ``by``'s value, as ``server/tool`` when one tool name has several servers."""
    labels = frame[by].astype(str)
    if by == "tool" and "server" in frame.columns and frame.groupby("tool")["server"].nunique().max() > 1:
        labels = frame["server"].astype(str) + "/" + labels
    return labels


def plot_latency_distribution(calls: Any, *, ax: Axes | None = None, by: str = "tool",
                              max_groups: int = 20) -> Axes:
    """Box plots of latency per tool (or per ``by`` column), slowest median first.

    The axis is linear below 1 ms and logarithmic above (symlog): a journal latency is whole
    milliseconds, so 0 means "under a millisecond"; a group with every call under 1 ms is drawn as a
    marker at 0 and labelled ``<1 ms``.  A tool name served by more than one server is shown per
    server (``server/tool``).

    Args:
        calls: the calls table, frame or Arrow stream.
        ax: axes to draw on (default: a new figure).
        by: the grouping column.
        max_groups: at most this many groups (the slowest by median).

    Returns:
        The axes.

    Raises:
        UsageError: the input lacks the columns.
    """
    import numpy as np

    ax = kit.axes(ax)
    frame = kit.frame(calls)
    if by not in frame.columns or "latency_ms" not in frame.columns:
        raise mcpeval_nb.UsageError(f"input needs columns {by!r} and 'latency_ms'")
    frame = frame[frame["latency_ms"].notna() & frame[by].notna()]
    groups = frame.assign(_group=_group_labels(frame, by)).groupby("_group")["latency_ms"]
    order = list(groups.median().sort_values(ascending=False, kind="stable").index[:max_groups])
    data = [groups.get_group(g).to_numpy(dtype=float) for g in order]
    if data:
        ax.boxplot(data, tick_labels=[str(g) for g in order], orientation="horizontal", showfliers=False)
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set_xlim(left=0, right=max(2.0, max(float(d.max()) for d in data) * 1.3))
        for row, values in enumerate(data, start=1):
            if float(np.percentile(values, 75)) < 1:  # the box would collapse onto the axis
                ax.plot([0], [row], marker="o", markersize=5, color="#1f6feb", clip_on=False)
                share = float((values < 1).mean())
                ax.annotate(f"<1 ms ({share:.0%} of calls)", (0, row), xytext=(6, 0),
                            textcoords="offset points", va="center", fontsize="small", color="#1f6feb")
    else:
        kit.empty(ax, "latencies")
    ax.set_xlabel("latency (ms; 0 = under 1 ms)")
    ax.set_ylabel(by)
    ax.set_title(f"latency per {by}")
    return ax


def plot_latency_over_time(data: Any, *, ax: Axes | None = None, bucket: str = "1h",
                           percentiles: tuple[int, ...] = (50, 95)) -> Axes:
    """Latency percentiles over time: one line per percentile, broken where a bucket had no calls.

    Args:
        data: the calls table (bucketed here over all calls) or a ``latency_over_time`` table with
            ``by=()``.
        ax: axes to draw on.
        bucket: time bucket when ``data`` is the calls table.
        percentiles: which of ``PERCENTILES`` to draw.

    Returns:
        The axes.
    """
    ax = kit.axes(ax)
    if not kit.has_column(data, "bucket"):
        data = mcpeval_nb.latency_over_time(data, bucket=bucket, by=())
    frame = kit.frame(data).sort_values("bucket")
    when = kit.naive(frame["bucket"])
    for p in percentiles:
        if f"p{p}" not in frame.columns:
            raise mcpeval_nb.UsageError(f"percentile {p} is not one of {mcpeval_nb.PERCENTILES}")
        values = frame[f"p{p}"].to_numpy(dtype=float)
        ax.plot(*_broken(when, values), marker=".", label=f"p{p}")
    kit.date_axis(ax)
    ax.set_ylabel("latency (ms)")
    ax.set_title("latency over time (UTC)")
    if len(frame):
        kit.legend_outside(ax)
    else:
        kit.empty(ax, "latencies")
    return ax


def _broken(when: Any, values: Any) -> tuple[Any, Any]:
    """Insert a gap (NaN) wherever two points are more than twice the usual step apart."""
    import numpy as np

    if len(when) < 3:
        return when, values
    steps = np.diff(when.astype("datetime64[s]").astype(np.int64))
    usual = np.median(steps)
    cuts = np.nonzero(steps > 2 * usual)[0]
    if not len(cuts):
        return when, values
    gaps = when[cuts] + (when[cuts + 1] - when[cuts]) / 2
    return (np.insert(when, cuts + 1, gaps), np.insert(values.astype(float), cuts + 1, np.nan))


def plot_outcome_mix(data: Any, *, ax: Axes | None = None, by: str = "tool") -> Axes:
    """Stacked horizontal bars of outcome shares per group; the legend sits beside the bars.

    Args:
        data: the calls table or an ``outcome_rates`` table (with ``by=(by,)``).
        ax: axes to draw on.
        by: the grouping column.

    Returns:
        The axes.
    """
    import numpy as np

    ax = kit.axes(ax)
    if not kit.has_column(data, "ok_rate"):
        data = mcpeval_nb.outcome_rates(data, by=(by,))
    frame = kit.frame(data)
    labels = [str(v) for v in frame[by].fillna("(none)")]
    left = np.zeros(len(frame))
    for outcome in mcpeval_nb.OUTCOMES:
        share = frame[f"{outcome}_rate"].to_numpy(dtype=float)
        ax.barh(labels, share, left=left, color=kit.OUTCOME_COLOURS[outcome], label=outcome)
        left += share
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of calls")
    ax.set_title(f"outcomes per {by}")
    if len(frame):
        kit.legend_outside(ax)
    else:
        kit.empty(ax, "calls")
    return ax


def _template_labels(data: Any, ids: list[str]) -> list[str]:
    """``<id>  <tool> <code>`` for each template when the calls table is at hand, else the id."""
    if not kit.has_column(data, "error_template_id"):
        return ids
    about = {r["template_id"]: r for r in mcpeval_nb.error_templates(data).to_pylist()}
    out = []
    for tid in ids:
        row = about.get(tid)
        tools = ",".join(row["tools"][:2]) if row else ""
        codes = ",".join(str(c).strip('"') for c in row["codes"][:2]) if row else ""
        out.append(f"{tid}  {tools or '-'} {codes or '-'}")
    return out


def plot_template_heatmap(data: Any, *, ax: Axes | None = None, top: int = 15) -> Axes:
    """Heatmap of error template counts per day: every day from the first to the last (days without
    errors are blank columns), the top ``top`` templates by total count, each row labelled with its id
    and, given the calls table, the tool and error code beside it (monospace, so the ids line up).
    Colour is on a square-root scale, so a day with a few errors stays visible beside a day with many.

    Args:
        data: the calls table or a ``template_daily`` table.
        ax: axes to draw on.
        top: most frequent templates shown.

    Returns:
        The axes (the image is ``ax.images[0]``).
    """
    import pandas as pd

    ax = kit.axes(ax)
    daily = data if kit.has_column(data, "day") else mcpeval_nb.template_daily(data)
    frame = kit.frame(daily)
    if frame.empty:
        kit.empty(ax, "error templates")
        return ax
    grid = frame.pivot_table(index="template_id", columns="day", values="count", aggfunc="sum", fill_value=0)
    days = pd.date_range(min(grid.columns), max(grid.columns), freq="D").date
    grid = grid.reindex(columns=days, fill_value=0)
    grid = grid.loc[grid.sum(axis=1).sort_values(ascending=False, kind="stable").index[:top]]
    from matplotlib.colors import PowerNorm

    counts = grid.to_numpy(dtype=float)
    image = ax.imshow(counts, aspect="auto", cmap="Reds", interpolation="nearest",
                      norm=PowerNorm(0.5, vmin=0, vmax=max(1.0, float(counts.max()))))
    labels = _template_labels(data, [str(t) for t in grid.index])
    ax.set_yticks(range(len(grid.index)), labels, fontfamily=kit.MONO, fontsize="small")
    step = max(1, len(days) // 12)
    ticks = list(range(0, len(days), step))
    ax.set_xticks(ticks, [days[i].strftime("%-d %b") for i in ticks], rotation=45, ha="right")
    ax.set_title("error templates per day (UTC)")
    ax.figure.colorbar(image, ax=ax, label="errors")
    return ax


def plot_readiness_history(data: Any, *, ax: Axes | None = None) -> Axes:
    """Readiness score per server over time, with markers where the standard, measurement profile or
    manifest changed; the legend sits beside the plot.

    Args:
        data: the trends table or a ``readiness_history`` table.
        ax: axes to draw on.

    Returns:
        The axes (one line per server; change markers are labelled scatter collections).
    """
    ax = kit.axes(ax)
    if not kit.has_column(data, "delta"):
        data = mcpeval_nb.readiness_history(data)
    frame = kit.frame(data)
    frame = frame[frame["ts"].notna()]
    for server, points in frame.groupby("server", sort=True):
        ax.plot(kit.naive(points["ts"]), points["score"].to_numpy(dtype=float), marker="o", label=str(server))
    for column, marker, label in _CHANGE_MARKERS:
        hits = frame[frame[column].astype(bool)]
        if len(hits):
            ax.scatter(kit.naive(hits["ts"]), hits["score"].to_numpy(dtype=float), marker=marker, s=90,
                       facecolors="none", edgecolors="black", label=label, zorder=3)
    kit.date_axis(ax)
    ax.set_ylim(0, 100)
    ax.set_ylabel("readiness score")
    ax.set_title("readiness history")
    if len(frame):
        kit.legend_outside(ax)
    else:
        kit.empty(ax, "readiness points")
    return ax


def plot_result_sizes(data: Any, *, ax: Axes | None = None, value: str = "result_bytes") -> Axes:
    """Result size per tool over sizes runs (``mcpeval_nb.result_size_history``): one line per tool,
    broken at runs where the tool was not called; runs are whole-number ticks.

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
    ax = kit.axes(ax)
    frame = kit.frame(data)
    runs = sorted(frame["run"].unique()) if len(frame) else []
    frame = frame[frame[value].notna()] if len(frame) else frame
    for tool, rows in (frame.groupby("tool", sort=True) if len(frame) else ()):
        per_run = rows.groupby("run")[value].max().reindex(runs)
        ax.plot(per_run.index.to_numpy(), per_run.to_numpy(dtype=float), marker="o", label=str(tool))
    kit.integer_axis(ax.xaxis)
    ax.set_xlabel("sizes run")
    ax.set_ylabel(value.replace("_", " "))
    ax.set_title(f"{value.replace('_', ' ')} per tool over runs")
    if len(frame):
        kit.legend_outside(ax)
    else:
        kit.empty(ax, "result sizes")
    return ax
