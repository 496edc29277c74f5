"""Panel charts drawn with matplotlib's object API onto private figures, returned as PNG bytes.

No pyplot state, no global style changes.  Labels are tool names, server labels, outcome labels and
numbers only.  ``sparkline_svg`` draws a tiny inline trend for a table cell.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure

__all__ = ["latency_png", "outcome_png", "readiness_png", "sparkline_svg"]

_OUTCOME_COLOURS = {"ok": "#2da44e", "error": "#cf222e", "unknown": "#bf8700", "unparsed": "#8250df"}


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, bbox_inches="tight")
    return buf.getvalue()


def _empty(text: str) -> bytes:
    fig = Figure(figsize=(6, 1.2))
    ax = fig.add_subplot()
    ax.axis("off")
    ax.text(0.5, 0.5, text, ha="center", va="center", color="#6e7781")
    return _png(fig)


def latency_png(groups: Mapping[str, Sequence[float]]) -> bytes:
    """Latency distribution per tool (box plot, log scale) as PNG bytes."""
    groups = {k: v for k, v in groups.items() if len(v)}
    if not groups:
        return _empty("no latencies for this selection")
    labels = sorted(groups)
    fig = Figure(figsize=(7, 0.45 * len(labels) + 1.2))
    ax = fig.add_subplot()
    ax.boxplot([list(groups[k]) for k in labels], orientation="horizontal", tick_labels=labels,
               showfliers=False)
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlabel("latency (ms)")
    ax.set_title("Latency per tool")
    return _png(fig)


def outcome_png(counts: Mapping[str, Mapping[str, int]]) -> bytes:
    """Outcome mix per tool (stacked horizontal bars of shares) as PNG bytes."""
    if not counts:
        return _empty("no calls for this selection")
    labels = sorted(counts)
    fig = Figure(figsize=(7, 0.45 * len(labels) + 1.2))
    ax = fig.add_subplot()
    left = [0.0] * len(labels)
    for outcome, colour in _OUTCOME_COLOURS.items():
        shares = []
        for k in labels:
            total = sum(counts[k].values()) or 1
            shares.append(counts[k].get(outcome, 0) / total)
        ax.barh(labels, shares, left=left, color=colour, label=outcome)
        left = [a + b for a, b in zip(left, shares, strict=True)]
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of calls")
    ax.set_title("Outcome mix per tool")
    ax.legend(loc="lower right", fontsize="small")
    return _png(fig)


def readiness_png(series: Mapping[str, Sequence[tuple[float, int, bool]]]) -> bytes:
    """Readiness score per server over time; ``(x, score, changed)`` points, changes marked.

    ``x`` is a POSIX timestamp in seconds; ``changed`` marks a point where the standard, measurement
    profile or manifest changed (drawn as a hollow diamond: scores across it are not comparable).
    """
    if not series:
        return _empty("no readiness history for this selection")
    fig = Figure(figsize=(7, 3))
    ax = fig.add_subplot()
    for server in sorted(series):
        points = series[server]
        xs = [x / 86400.0 for x, _, _ in points]  # matplotlib date numbers: days since 1970-01-01
        ys = [s for _, s, _ in points]
        (line,) = ax.plot(xs, ys, marker="o", label=server)
        marked = [(x, y) for x, y, (_, _, c) in zip(xs, ys, points, strict=True) if c]
        if marked:
            ax.scatter([m[0] for m in marked], [m[1] for m in marked], s=120, marker="D",
                       facecolors="none", edgecolors=line.get_color(), zorder=3)
    ax.xaxis_date()
    ax.set_ylim(0, 100)
    ax.set_ylabel("readiness score")
    ax.set_title("Readiness history (diamonds: standard, profile or manifest changed)")
    ax.legend(loc="lower left", fontsize="small")
    fig.autofmt_xdate()
    return _png(fig)


def sparkline_svg(values: Sequence[int], *, width: int = 80, height: int = 16) -> str:
    """A tiny inline SVG polyline of daily counts (empty string for no values)."""
    if not values:
        return ""
    top = max(values) or 1
    step = width / max(1, len(values) - 1)
    pts = " ".join(f"{i * step:.1f},{height - 1 - (v / top) * (height - 2):.1f}"
                   for i, v in enumerate(values))
    return (f'<svg width="{width}" height="{height}" class="mcpeval-spark"><polyline points="{pts}" '
            'fill="none" stroke="#cf222e" stroke-width="1.5"/></svg>')
