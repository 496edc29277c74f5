"""How a recurring failure is scored (SPEC 12.2, 12.3): the four factors, the threshold, the finding id.

``score = confidence × recency × cost × blast`` where ``confidence`` is the Wilson lower bound of the
failure rate, ``recency`` halves every 14 days since the last failure, ``cost`` is ``log2(1 + median
window size)`` and ``blast`` is ``1 + log2(distinct tools touched)``.  Every function here is pure and
evaluates its formula in the reference's order, so results agree to the last bit.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ..errors import UsageError
from ..root import Root, RootLike
from ..root.layout import CONFIG
from ..wilson import wilson_interval

__all__ = [
    "HALF_LIFE_DAYS",
    "MS_PER_DAY",
    "SEVERITIES",
    "Factors",
    "attempts_to_observe",
    "factors",
    "finding_id",
    "resolve_threshold",
    "seed_threshold",
    "severity",
]

HALF_LIFE_DAYS = 14.0
MS_PER_DAY = 86_400_000
SEVERITIES = ("low", "medium", "high")


@dataclass(frozen=True)
class Factors:
    """The four factors of a score and the inputs each came from.

    Attributes:
        failures / calls: the group's failures and the tool's calls (``confidence`` inputs).
        age_days: days since the last failure, never negative (``recency`` input).
        cost_calls: the median window size, ``1 +`` the distinct neighbour calls (``cost`` input).
        blast_tools: tools touched by the failures' windows, at least 1 (``blast`` input).
    """

    failures: int
    calls: int
    age_days: float
    cost_calls: float
    blast_tools: int

    @property
    def confidence(self) -> float:
        """Wilson lower bound (z = 1.959963984540054) of failures/calls."""
        return wilson_interval(self.failures, self.calls)[0]

    @property
    def recency(self) -> float:
        """``0.5 ** (age_days / 14)``: 1.0 for a failure today (or in the future), 0.5 after two weeks."""
        return float(0.5 ** (self.age_days / HALF_LIFE_DAYS))

    @property
    def cost(self) -> float:
        """``log2(1 + cost_calls)``: how much work each failure wasted."""
        return math.log2(1 + self.cost_calls)

    @property
    def blast(self) -> float:
        """``1 + log2(blast_tools)``: how far the failures reach."""
        return 1 + math.log2(self.blast_tools)

    @property
    def score(self) -> float:
        """confidence × recency × cost × blast, in that order."""
        return self.confidence * self.recency * self.cost * self.blast


def factors(*, failures: int, calls: int, last_seen_ms: int, now_ms: int, cost_calls: float,
            blast_tools: int) -> Factors:
    """The factors of one group.

    Args:
        failures / calls: counts (``0 < failures <= calls``).
        last_seen_ms / now_ms: milliseconds since the epoch; a future last failure counts as now.
        cost_calls: the median window size. blast_tools: tools touched (at least 1 is used).

    Raises:
        UsageError: no calls, or more failures than calls.
    """
    if calls <= 0 or failures > calls or failures < 0:
        raise UsageError("a finding needs 0 <= failures <= calls and at least one call")
    age = max(0, now_ms - last_seen_ms) / MS_PER_DAY
    return Factors(failures=failures, calls=calls, age_days=age, cost_calls=cost_calls,
                   blast_tools=max(1, blast_tools))


def finding_id(server: str | None, tool: str | None, err_code: str | None, template_id: str | None) -> str:
    """``finding-`` + 16 hex digits of SHA-256 over each value as 8-byte big-endian length + UTF-8 bytes.

    An absent value hashes as the empty string (SPEC 12.3; promotion passes ``err_code`` as absent).
    """
    digest = hashlib.sha256()
    for value in (server, tool, err_code, template_id):
        data = (value or "").encode("utf-8")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return "finding-" + digest.hexdigest()[:16]


def _seed_rows() -> list[dict[str, Any]]:
    text = resources.files(__package__).joinpath("seed.json").read_text(encoding="utf-8")
    rows: list[dict[str, Any]] = json.loads(text)["rows"]
    return rows


def seed_threshold() -> float:
    """The seed calibration: midway between the best annoyance and the worst blocker (SPEC 12.2).

    Raises:
        UsageError: the bands overlap (a broken seed file).
    """
    scores: dict[str, list[float]] = {"blocker": [], "annoyance": []}
    for row in _seed_rows():
        last_seen = -math.trunc(row["age_days"] * MS_PER_DAY)
        f = factors(failures=row["failures"], calls=row["calls"], last_seen_ms=last_seen, now_ms=0,
                    cost_calls=row["cost"], blast_tools=row["blast"])
        scores[row["band"]].append(f.score)
    high, low = max(scores["annoyance"]), min(scores["blocker"])
    if high >= low:
        raise UsageError("the promotion seed's annoyance and blocker bands overlap")
    return (high + low) / 2


def resolve_threshold(root: RootLike, threshold: float | None = None) -> tuple[float, str]:
    """The promotion threshold and where it came from: ``flag``, ``config.json`` or ``seed``.

    Raises:
        UsageError: a threshold that is not finite and >= 0, or an unreadable ``config.json``.
    """
    source = "flag"
    if threshold is None:
        threshold, source = Root.of(root).config.promotion_threshold, CONFIG
    if threshold is None:
        threshold, source = seed_threshold(), "seed"
    if not math.isfinite(threshold) or threshold < 0:
        raise UsageError(f"promotion threshold must be finite and >= 0 (from {source})")
    return float(threshold), source


def severity(score: float, threshold: float, *, annotated: bool, probed: bool) -> str:
    """``low``/``medium``/``high``: 2 at 4× the threshold, 1 at 2×; +1 when annotated false-success or
    blocked-optimal-path (at most 2); at most 1 (``medium``) until a probe is bound to the finding."""
    rank = 2 if score >= 4 * threshold else (1 if score >= 2 * threshold else 0)
    if annotated:
        rank = min(2, rank + 1)
    if not probed:
        rank = min(1, rank)
    return SEVERITIES[rank]


def attempts_to_observe(rate: float) -> int:
    """Calls needed to see a failure of this rate with 95% confidence: 3 if ``rate <= 0``, else
    ``clamp(ceil(ln 0.05 / ln(1 - rate)), 3, 100)`` (SPEC 8.5)."""
    if rate <= 0:
        return 3
    if rate >= 1:
        return 3
    return max(3, min(100, math.ceil(math.log(0.05) / math.log(1 - rate))))
