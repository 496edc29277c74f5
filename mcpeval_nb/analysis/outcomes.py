"""Outcomes: ok / error / unknown / unparsed counts and rates with Wilson 95% intervals."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pyarrow as pa

from ._frames import as_frame, to_table

__all__ = ["OUTCOMES", "outcome_rates", "outcome_schema", "rates_table", "wilson_interval"]

#: The four outcomes a sanitised record can carry, in column order.
OUTCOMES = ("ok", "error", "unknown", "unparsed")
_Z95 = 1.959963984540054


def wilson_interval(successes: int, total: int, *, z: float = _Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion (95% by default).

    Each bound is evaluated exactly as SPEC 12.2 writes the lower one,
    ``(p + z²/2n ∓ z·sqrt((p(1−p) + z²/4n)/n)) / (1 + z²/n)``, so the lower bound is bit-identical to
    the reference's finding confidence (``findings`` prints it with full precision).

    Args:
        successes: events counted.
        total: trials; zero gives ``(0.0, 1.0)``.
        z: the normal quantile.

    Returns:
        ``(low, high)`` within [0, 1].
    """
    if total <= 0:
        return 0.0, 1.0
    p = successes / total
    z2 = z * z
    spread = z * math.sqrt((p * (1 - p) + z2 / (4 * total)) / total)
    denom = 1 + z2 / total
    return (max(0.0, (p + z2 / (2 * total) - spread) / denom),
            min(1.0, (p + z2 / (2 * total) + spread) / denom))


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
