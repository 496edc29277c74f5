"""The findings charts: why each finding ranks where it does, and the calls around its failures."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _kit as kit

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_failure_windows", "plot_finding_factors"]

_FACTORS = (("confidence", "#5b6fb0"), ("recency", "#4c9a5b"), ("cost", "#c8553d"), ("blast", "#9a6700"))


def _factor_values(frame: Any) -> dict[str, Any]:
    """The four factors as the multipliers they are (``cost`` and ``blast`` as the score uses them)."""
    import numpy as np

    return {
        "confidence": frame["confidence"].to_numpy(dtype=float),
        "recency": frame["recency"].to_numpy(dtype=float),
        "cost": np.log2(1 + frame["cost"].to_numpy(dtype=float)),
        "blast": 1 + np.log2(np.maximum(1, frame["blast"].to_numpy(dtype=float))),
    }


def plot_finding_factors(data: Any, *, ax: Axes | None = None, top: int = 10) -> Axes:
    """Why findings rank where they do: each score's four factors on one scale, and the score itself.

    ``score = confidence × recency × cost × blast``.  The factors are drawn as multipliers on one
    logarithmic axis starting at ×1, so every bar is comparable: a bar to the left lowers the score by
    that factor, a bar to the right raises it, and each bar is labelled with its value.  The score is
    the black diamond on the same axis: where the bars' lengths add up to.  Best finding at the top.

    Args:
        data: ``mcpeval_nb.findings(root)`` (or its frame).
        ax: axes to draw on.
        top: at most this many findings (the table's order: best first).

    Returns:
        The axes (y: findings labelled ``tool #<id suffix>`` and their score; x: the multiplier, log scale).
    """
    import numpy as np

    ax = kit.axes(ax, size=(8, 1.2 + 0.9 * min(top, 10)))
    frame = kit.frame(data).head(top)
    if frame.empty:
        kit.empty(ax, "findings")
        return ax
    values = _factor_values(frame)
    rows = np.arange(len(frame))[::-1]  # best on top
    height = 0.18
    for i, (name, colour) in enumerate(_FACTORS):
        factor = np.maximum(values[name], 1e-3)
        ys = rows + (1.5 - i) * height
        ax.barh(ys, factor - 1, height, left=1, label=name, color=colour)
        for y, v in zip(ys, factor, strict=True):
            ax.annotate(f"×{v:.2f}", (v, y), xytext=(3 if v >= 1 else -3, 0), textcoords="offset points",
                        ha="left" if v >= 1 else "right", va="center", fontsize="x-small")
    scores = frame["score"].to_numpy(dtype=float)
    ax.scatter(np.maximum(scores, 1e-3), rows, marker="D", s=60, color="black", zorder=3, label="score")
    ax.set_xscale("log", base=2)
    low = float(min(np.min([np.maximum(v, 1e-3) for v in values.values()]), np.maximum(scores, 1e-3).min()))
    high = float(max(np.max([v for v in values.values()]), scores.max(), 2.0))
    ax.set_xlim(low / 2, high * 2)
    ax.axvline(1, color="#6e7781", linewidth=0.8)
    pairs = zip(frame["tool"], frame["finding_id"], scores, strict=True)
    ax.set_yticks(rows, [f"{tool or 'unlisted'} #{str(fid)[-6:]}\nscore {v:.3f}" for tool, fid, v in pairs],
                  fontfamily=kit.MONO, fontsize="small")
    ax.set_ylim(-0.6, len(frame) - 0.2)
    ax.set_xlabel("multiplier (log scale: left of ×1 lowers the score, right raises it)")
    ax.set_title("why each finding ranks where it does (score = product of the factors)")
    kit.legend_outside(ax)
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
    ax = kit.axes(ax)
    frame = kit.frame(data)
    if frame.empty:
        kit.empty(ax, "failure windows")
        return ax

    order = {fid: i for i, fid in enumerate(sorted(frame["failure_id"].unique()))}
    rows = frame["failure_id"].map(order).to_numpy(dtype=float)
    offsets = frame["offset"].to_numpy(dtype=float)
    for outcome, colour in kit.OUTCOME_COLOURS.items():
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
    kit.legend_outside(ax)
    return ax
