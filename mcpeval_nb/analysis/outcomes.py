"""Outcomes: ok / error / unknown / unparsed counts and rates with Wilson 95% intervals."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa

from ..wilson import wilson_interval
from ._frames import as_frame, to_table

__all__ = ["OUTCOMES", "outcome_rates", "outcome_schema", "rates_table", "wilson_interval"]

#: The four outcomes a sanitised record can carry, in column order.
OUTCOMES = ("ok", "error", "unknown", "unparsed")


def outcome_rates(calls: Any, *, by: tuple[str, ...] = ("server", "tool")) -> pa.Table:
    """Outcome counts, rates and Wilson 95% intervals per group.

    Args:
        calls: the calls table (or a frame with its columns).
        by: group columns.

    Returns:
        Columns ``*by``, ``count``, then for each outcome ``o`` in ``OUTCOMES``: ``o`` (count),
        ``o_rate``, ``o_low``, ``o_high``.  Sorted by the group keys.

    Raises:
        UsageError: a missing column.
    """
    frame = as_frame(calls, (*by, "outcome"))
    if frame.empty:
        return outcome_schema(by).empty_table()
    counts = frame.groupby([*by, "outcome"], dropna=False, sort=True).size().unstack("outcome", fill_value=0)
    for o in OUTCOMES:
        if o not in counts.columns:
            counts[o] = 0
    out = counts.reset_index()
    out.columns.name = None
    return rates_table(out, by)


def outcome_schema(by: tuple[str, ...]) -> pa.Schema:
    """The columns of an ``outcome_rates`` table grouped by ``by``."""
    fields = [pa.field(k, pa.string()) for k in by] + [pa.field("count", pa.int64())]
    for o in OUTCOMES:
        fields += [pa.field(o, pa.int64()), pa.field(f"{o}_rate", pa.float64()),
                   pa.field(f"{o}_low", pa.float64()), pa.field(f"{o}_high", pa.float64())]
    return pa.schema(fields)


def rates_table(counts: pd.DataFrame, by: tuple[str, ...]) -> pa.Table:
    """Rates and Wilson intervals from per-group outcome counts (every engine finishes here).

    Args:
        counts: columns ``*by`` and one integer column per outcome in ``OUTCOMES``, sorted by ``by``.
        by: the group columns.
    """
    counts = counts.copy()
    counts["count"] = counts[list(OUTCOMES)].sum(axis=1)
    for o in OUTCOMES:
        counts[f"{o}_rate"] = counts[o] / counts["count"]
        bounds = [wilson_interval(int(k), int(n)) for k, n in zip(counts[o], counts["count"], strict=True)]
        counts[f"{o}_low"] = [b[0] for b in bounds]
        counts[f"{o}_high"] = [b[1] for b in bounds]
    return to_table(counts, outcome_schema(by))
