"""The 2026-07-28 operations chart: where the time of an operation over several requests goes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcpeval_nb

from . import _kit as kit

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_operations"]


def plot_operations(data: Any, *, ax: Axes | None = None, top: int = 15) -> Axes:
    """Where the time of operations over several requests goes: per tool (or method), a stacked bar of
    the median server time and the median time the server waited on its client (a person answering a
    multi round-trip request's question, a task waiting for input), labelled with the operation count
    and the median rounds (or the tasks); the legend sits beside the bars.

    Args:
        data: the calls table (or frame, or Arrow stream) or an ``operation_summary`` table.
        ax: axes to draw on.
        top: at most this many tools (the most operations).

    Returns:
        The axes.
    """
    import numpy as np

    ax = kit.axes(ax)
    if not kit.has_column(data, "server_p50"):
        data = mcpeval_nb.operation_summary(mcpeval_nb.as_table(data))
    frame = kit.frame(data).head(top).iloc[::-1]
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
        kit.legend_outside(ax)
        ax.set_xlim(0, max(1.0, float((server + wait).max()) * 1.35))
    else:
        kit.empty(ax, "operations")
    return ax
