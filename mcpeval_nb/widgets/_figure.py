"""Panel images: a ``charts.plot_*`` function drawn on a private ``Figure``'s axes, as PNG bytes.

The panels draw no chart of their own: every picture is the ``mcpeval_nb.charts`` function a notebook
user would call on the same table, so a panel and a notebook cell show the same thing.  No pyplot
state, no global style.  A picture is drawn for the size it is shown at (``css_width``: the figure's
inches at 96 CSS pixels per inch) and saved at twice that resolution, so text stays sharp on a
high-density screen instead of a small image being stretched to the panel's width.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["DISPLAY_DPI", "css_width", "figure_png"]

#: CSS pixels per inch: a figure ``width`` inches wide is shown ``96 * width`` pixels wide.
DISPLAY_DPI = 96
_DENSITY = 2  # device pixels per CSS pixel in the saved image


def css_width(width: float) -> str:
    """The display width (CSS pixels, as ``ipywidgets.Image.width`` takes it) of a ``width``-inch figure."""
    return str(round(width * DISPLAY_DPI))


def figure_png(draw: Callable[[Axes], Any], *, width: float = 7.0, height: float = 3.5) -> bytes:
    """Call ``draw(ax)`` on a fresh figure's axes and return the figure as PNG bytes.

    Args:
        draw: e.g. ``lambda ax: charts.plot_outcome_mix(view, ax=ax)``.
        width / height: the figure size in inches (shown at ``css_width(width)`` pixels).

    Returns:
        The PNG image, at ``2 * 96`` pixels per inch.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DISPLAY_DPI, layout="constrained")
    draw(fig.add_subplot())
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DISPLAY_DPI * _DENSITY)
    return buf.getvalue()
