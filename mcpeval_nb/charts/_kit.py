"""What every chart shares: the axes, the input as a frame, the empty case, date and integer axes.

Nothing here imports matplotlib, pandas or numpy at module import: ``import mcpeval_nb.charts`` is
cheap, and the first chart drawn pays for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcpeval_nb

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = ["MONO", "OUTCOME_COLOURS", "axes", "date_axis", "empty", "frame", "has_column", "integer_axis",
           "legend_outside", "naive"]

OUTCOME_COLOURS = {"ok": "#4c9a5b", "error": "#c8553d", "unknown": "#9a9a9a", "unparsed": "#5b6fb0"}
#: The face for labels whose characters must line up (template ids, codes).
MONO = "monospace"


def axes(ax: Axes | None, *, size: tuple[float, float] = (8, 4.5)) -> Axes:
    """``ax``, or the axes of a new pyplot figure of ``size`` inches."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, new = plt.subplots(figsize=size, layout="constrained")
    return new


def frame(data: Any) -> pd.DataFrame:
    """The input as a pandas frame: an Arrow table, any Arrow stream (pandas, polars, DuckDB: the
    PyCapsule interface) or a frame; dictionary columns decoded to plain values.

    Raises:
        UsageError: the input is none of these.
    """
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return data
    converted: pd.DataFrame = mcpeval_nb.as_table(data, decode=True).to_pandas()
    return converted


def has_column(data: Any, name: str) -> bool:
    """Whether a table, frame or stream has column ``name``."""
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return name in data.columns
    return name in mcpeval_nb.as_table(data).column_names


def empty(ax: Axes, what: str) -> None:
    """Write ``no <what> to show`` on axes that got nothing to draw."""
    ax.text(0.5, 0.5, f"no {what} to show", ha="center", va="center", transform=ax.transAxes,
            color="#6e7781")


def date_axis(ax: Axes) -> None:
    """Date ticks that name the month (``3 Nov``, ``Nov 2026``), without overlapping, on this axes."""
    import matplotlib.dates as mdates

    locator = mdates.AutoDateLocator(  # type: ignore[no-untyped-call]
        interval_multiples=False, maxticks={mdates.DAILY: 7, mdates.MONTHLY: 7, mdates.HOURLY: 8})
    formatter = mdates.ConciseDateFormatter(  # type: ignore[no-untyped-call]
        locator, formats=["%Y", "%b %Y", "%-d %b", "%H:%M", "%H:%M", "%S.%f"],
        zero_formats=["", "%b %Y", "%-d %b", "%-d %b", "%H:%M", "%H:%M"],
        offset_formats=["", "%Y", "%b %Y", "%-d %b %Y", "%-d %b %Y", "%-d %b %Y %H:%M"])
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(formatter)


def integer_axis(axis: Any) -> None:
    """Whole-number ticks only (runs, counts)."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def legend_outside(ax: Axes, **options: Any) -> None:
    """The legend to the right of the plot area, where it covers nothing."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small",
              frameon=False, **options)


def naive(times: Any) -> Any:
    """UTC timestamps as naive numpy datetimes (what matplotlib's date axis takes)."""
    import pandas as pd

    series = pd.to_datetime(times, utc=True)
    return series.dt.tz_localize(None).to_numpy()
