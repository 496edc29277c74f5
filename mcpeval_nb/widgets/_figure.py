"""Panel images: a ``charts.plot_*`` function drawn on a private ``Figure``'s axes, as PNG bytes.

The panels draw no chart of their own: every picture is the ``mcpeval_nb.charts`` function a notebook
user would call on the same table, so a panel and a notebook cell show the same thing.  No pyplot
state, no global style.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["figure_png"]


def figure_png(draw: Callable[[Axes], Any], *, width: float = 7.0, height: float = 3.5) -> bytes:
    """Call ``draw(ax)`` on a fresh figure's axes and return the figure as PNG bytes.

    Args:
        draw: e.g. ``lambda ax: charts.plot_outcome_mix(view, ax=ax)``.
        width / height: the figure size in inches.

    Returns:
        The PNG image.
    """
    fig = Figure(figsize=(width, height), layout="constrained")
    draw(fig.add_subplot())
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    return buf.getvalue()
