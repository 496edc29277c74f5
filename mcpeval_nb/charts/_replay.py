"""The replay chart: recorded against replayed, per tool, with the intervals the verdicts were read from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcpeval_nb

from . import _kit as kit

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_replay_comparison"]

_VERDICT_COLOURS = {"regressed": "#c8553d", "improved": "#4c9a5b", "same": "#5b6fb0",
                    "insufficient-evidence": "#9a9a9a"}
_MEASURES = {"failure_rate": ("rate", "failure rate, % (Wilson 99% intervals)", 100.0),
             "p95": ("p95", "latency p95, ms (bootstrap 95% intervals)", 1.0),
             "p50": ("p50", "latency p50, ms (bootstrap 95% intervals)", 1.0)}


def _interval(ax: Axes, y: float, row: Any, side: str, column: str, scale: float, colour: str,
              label: str | None) -> None:
    value, low, high = (row[f"{side}_{column}{suffix}"] for suffix in ("", "_low", "_high"))
    if value is None or low is None or high is None or value != value:
        return
    spread = [[max(0.0, (value - low) * scale)], [max(0.0, (high - value) * scale)]]
    ax.errorbar([value * scale], [y], xerr=spread,
                fmt="o" if side == "replayed" else "s", color=colour, ecolor=colour, capsize=3, markersize=5,
                label=label)


def plot_replay_comparison(data: Any, *, ax: Axes | None = None, measure: str = "failure_rate") -> Axes:
    """Recorded against replayed per tool: the recorded interval (grey square) above the replayed one
    (a circle coloured by the tool's verdict), for the failure rate, p95 or p50; each tool is labelled
    with its verdict and what decided it.

    Args:
        data: a ``ReplayReport`` or its ``table`` (or a frame of it).
        ax: axes to draw on (default: a new figure).
        measure: ``failure_rate`` (default), ``p95`` or ``p50``.

    Returns:
        The axes.

    Raises:
        UsageError: an unknown measure.
    """
    if measure not in _MEASURES:
        raise mcpeval_nb.UsageError("measure must be failure_rate, p95 or p50")
    column, title, scale = _MEASURES[measure]
    table = data.table if isinstance(data, mcpeval_nb.ReplayReport) else data
    frame = kit.frame(table)
    ax = kit.axes(ax, size=(8, 1.2 + 0.8 * max(1, len(frame))))
    if frame.empty:
        kit.empty(ax, "replayed tools")
        return ax
    seen: set[str] = set()
    for i, row in enumerate(frame.to_dict("records")):
        y = len(frame) - 1 - i
        colour = _VERDICT_COLOURS.get(row["verdict"], "#333333")
        _interval(ax, y + 0.18, row, "recorded", column, scale, "#8c8c8c",
                  None if "recorded" in seen else "recorded")
        seen.add("recorded")
        label = None if row["verdict"] in seen else f"replayed: {row['verdict']}"
        seen.add(row["verdict"])
        _interval(ax, y - 0.18, row, "replayed", column, scale, colour, label)
    names = [f"{r['tool']}\n{r['verdict']}" + (f" ({', '.join(r['reasons'])})" if len(r["reasons"]) else "")
             for r in frame.to_dict("records")]
    ax.set_yticks(range(len(frame)), names[::-1], fontsize=8)
    ax.set_ylim(-0.7, len(frame) - 0.3)
    ax.set_xlabel(title)
    ax.set_xlim(left=0)
    ax.set_title(f"replay against the recording: {measure.replace('_', ' ')}")
    kit.legend_outside(ax)
    return ax
