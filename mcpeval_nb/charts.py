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
    "plot_failure_windows",
    "plot_finding_factors",
    "plot_latency_distribution",
    "plot_latency_over_time",
    "plot_operations",
    "plot_outcome_mix",
    "plot_readiness_history",
    "plot_result_sizes",
    "plot_template_heatmap",
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


def plot_operations(data: Any, *, ax: Axes | None = None, top: int = 15) -> Axes:
    """Where the time of operations over several requests goes: per tool (or method), a stacked bar of
    the median server time and the median time the server waited on its client (a person answering a
    multi round-trip request's question, a task waiting for input), labelled with the operation count
    and median rounds.

    Args:
        data: the calls table or an ``operation_summary`` table.
        ax: axes to draw on.
        top: at most this many tools (the most operations).

    Returns:
        The axes.
    """
    ax = _axes(ax)
    if (isinstance(data, pa.Table) and "server_p50" not in data.column_names) or (
            isinstance(data, pd.DataFrame) and "server_p50" not in data.columns):
        data = mcpeval_nb.operation_summary(data)
    frame = _frame(data).head(top).iloc[::-1]
    labels = [t if isinstance(t, str) else str(m)
              for t, m in zip(frame["tool"], frame["method"], strict=True)]
    server = frame["server_p50"].to_numpy(dtype=float)
    wait = np.maximum(frame["latency_p50"].to_numpy(dtype=float) - server, 0)
    ax.barh(labels, server, color="#5b6fb0", label="server (median)")
    ax.barh(labels, wait, left=server, color="#e3a33b", label="waiting on the client (median)")
    notes = zip(frame["operations"], frame["rounds_p50"], frame["tasks"], server + wait, strict=True)
    for y, (n, rounds, tasks, total) in enumerate(notes):
        what = (f"{tasks} task{'s' * (tasks != 1)}" if tasks
                else f"{rounds:g} round{'s' * (rounds != 1)} (median)")
        ax.text(total, y, f"  n={n}, {what}", va="center", fontsize=8, color="#333333")
    ax.set_xlabel("median time per operation (ms): first request to final answer")
    ax.set_title("operations over several requests")
    if len(frame):
        ax.legend(loc="lower right")
        ax.set_xlim(0, max(1.0, float((server + wait).max()) * 1.35))
    else:
        _empty(ax, "operations")
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
