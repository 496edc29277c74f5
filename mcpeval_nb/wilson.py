"""The Wilson score interval of a proportion: standard library only, so the findings scoring, serve and
the mock can use it without loading the analysis layer (pandas)."""

from __future__ import annotations

import math

__all__ = ["wilson_interval"]

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
