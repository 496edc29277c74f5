"""Recorded versus replayed, per tool: the verdict rules of ``replay`` (docs/mock.md).

For each tool, from the profile (recorded) and the replayed calls' rows:

* **failure rate**: failures (an ``isError`` result, a JSON-RPC error, a lost transport) over calls, with
  Wilson **99%** intervals on both sides (``Z``): two 95% intervals of equal rates are disjoint for
  about one tool in 400, two 99% intervals for about one in 7,000, while a real change of a few points
  over a few hundred calls still separates them;
* **codes**: the JSON-RPC codes, ``tool-error``, and transport reasons seen; **templates**: the salted
  template ids of the error texts;
* **latency**: p50 and p95 with bootstrap 95% intervals on both sides.

The verdict, in this order:

* ``regressed`` when any of: a **new code** (a code never recorded for the tool); a **new template** (an
  error text whose template was never recorded, under a code that was); the **failure rate**'s replayed
  interval lies entirely above the recorded one; the **latency**: the replayed p95's lower bound exceeds
  the recorded p95's upper bound by more than the margin, ``max(LATENCY_MARGIN_MS, LATENCY_MARGIN_SHARE
  x recorded upper bound)`` (the margin absorbs the two instruments: the shim times frames, the replay
  times the client's round trip); or the build **no longer lists** the tool.  New codes and templates
  need one call; the rate and latency rules need ``MIN_EVIDENCE`` calls on each side.
* ``insufficient-evidence`` when nothing regressed and either side has fewer than ``MIN_EVIDENCE`` calls;
* ``improved`` when the replayed failure interval lies entirely below the recorded one, or the replayed
  p95's upper bound is below the recorded lower bound by more than the margin;
* ``same`` otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..sizes.measure import CallSize
from ..wilson import wilson_interval
from .build import bootstrap_percentile
from .profile import Interval, ToolProfile

__all__ = ["LATENCY_MARGIN_MS", "LATENCY_MARGIN_SHARE", "MIN_EVIDENCE", "VERDICTS", "Z", "Side",
           "ToolVerdict", "compare_tool", "recorded_side", "replayed_side"]

#: The normal quantile of the failure-rate intervals (99%).
Z = 2.5758293035489004
#: The verdicts, worst first.
VERDICTS = ("regressed", "insufficient-evidence", "improved", "same")
#: Calls each side needs before the rate and latency rules judge.
MIN_EVIDENCE = 10
#: The latency margin: at least this many milliseconds ...
LATENCY_MARGIN_MS = 25.0
#: ... or this share of the recorded p95's upper bound, whichever is larger.
LATENCY_MARGIN_SHARE = 0.5


@dataclass(frozen=True)
class Side:
    """One side of a comparison (recorded or replayed) for one tool.

    Attributes:
        calls / failures: calls and those that did not end ok. rate: the failure interval (Wilson 99%).
        codes: codes seen (``-32001``, ``tool-error``, transport reasons), as text. templates: template ids.
        p50 / p95: latency percentiles with bootstrap 95% intervals (milliseconds).
    """

    calls: int
    failures: int
    rate: Interval
    codes: tuple[str, ...]
    templates: tuple[str, ...]
    p50: Interval
    p95: Interval
    code_templates: frozenset[tuple[str, str]] = field(default=frozenset(), repr=False)

    def to_json(self) -> dict[str, Any]:
        """The side's object."""
        return {"calls": self.calls, "failures": self.failures, "failure_rate": self.rate.to_json(),
                "codes": list(self.codes), "templates": list(self.templates), "p50_ms": self.p50.to_json(),
                "p95_ms": self.p95.to_json()}


def _rate(failures: int, calls: int) -> Interval:
    if calls == 0:
        return Interval()
    low, high = wilson_interval(failures, calls, z=Z)
    return Interval(failures / calls, low, high)


def _code_text(outcome: str, code: int | None) -> str:
    return "tool-error" if outcome == "tool-error" else ("rpc-error" if code is None else str(code))


def recorded_side(tool: ToolProfile) -> Side:
    """The recorded side of a tool, from its profile."""
    errors = [o for o in tool.outcomes if o.outcome != "ok"]
    pairs = frozenset((_code_text(o.outcome, o.code), o.template_id) for o in errors if o.template_id)
    return Side(tool.calls, tool.failures, _rate(tool.failures, tool.calls),
                tuple(sorted({_code_text(o.outcome, o.code) for o in errors})),
                tuple(sorted({o.template_id for o in errors if o.template_id})),
                tool.latency.p50, tool.latency.p95, pairs)


def _row_code(row: CallSize) -> str:
    if row.reason == "tool-error":
        return "tool-error"
    if row.reason == "rpc-error":
        return "rpc-error" if row.error_code is None else str(row.error_code)
    return str(row.reason)


def replayed_side(rows: Sequence[CallSize]) -> Side:
    """The replayed side of a tool, from its calls' rows."""
    errors = [r for r in rows if r.outcome != "ok"]
    latencies = [r.latency_ms for r in rows if r.latency_ms is not None]
    texts = [r for r in errors if r.reason in ("tool-error", "rpc-error") and r.template_id]
    return Side(len(rows), len(errors), _rate(len(errors), len(rows)),
                tuple(sorted({_row_code(r) for r in errors})),
                tuple(sorted({str(r.template_id) for r in texts})), bootstrap_percentile(latencies, 50),
                bootstrap_percentile(latencies, 95),
                frozenset((_row_code(r), str(r.template_id)) for r in texts))


@dataclass(frozen=True)
class ToolVerdict:
    """One tool's comparison.

    Attributes:
        tool: the tool. verdict: ``regressed``, ``insufficient-evidence``, ``improved`` or ``same``.
        reasons: what decided it (``new-code``, ``new-template``, ``failure-rate``, ``latency``,
            ``not-listed``; for ``improved`` ``failure-rate`` and ``latency``).
        recorded / replayed: the two sides. new_codes / new_templates: what the replay saw that the
        recording never did. skipped: drawn calls not made, per reason.
    """

    tool: str
    verdict: str
    reasons: tuple[str, ...]
    recorded: Side
    replayed: Side
    new_codes: tuple[str, ...] = ()
    new_templates: tuple[str, ...] = ()
    skipped: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The tool's object in the replay report."""
        return {"tool": self.tool, "verdict": self.verdict, "reasons": list(self.reasons),
                "recorded": self.recorded.to_json(), "replayed": self.replayed.to_json(),
                "new_codes": list(self.new_codes), "new_templates": list(self.new_templates),
                "skipped": dict(sorted(self.skipped.items()))}


def _margin(recorded: Interval) -> float:
    return max(LATENCY_MARGIN_MS, LATENCY_MARGIN_SHARE * (recorded.high or 0.0))


def _above(a: Interval, b: Interval) -> bool:
    return a.low is not None and b.high is not None and a.low > b.high


def compare_tool(tool: ToolProfile, rows: Sequence[CallSize], *, listed: bool = True,
                 skipped: dict[str, int] | None = None) -> ToolVerdict:
    """The verdict of one tool (see the module docstring).

    Args:
        tool: the recorded profile. rows: its replayed calls. listed: the build still lists it.
        skipped: drawn calls of the tool that were not made, per reason.
    """
    rec, rep = recorded_side(tool), replayed_side(rows)
    new_codes = tuple(c for c in rep.codes if c not in rec.codes)
    new_templates = tuple(sorted({t for c, t in rep.code_templates
                                  if c in rec.codes and t not in rec.templates}))
    enough = rec.calls >= MIN_EVIDENCE and rep.calls >= MIN_EVIDENCE
    worse = [r for r, hit in (("not-listed", not listed), ("new-code", bool(new_codes)),
                              ("new-template", bool(new_templates)),
                              ("failure-rate", enough and _above(rep.rate, rec.rate)),
                              ("latency", enough and _slower(rep.p95, rec.p95))) if hit]
    better = [r for r, hit in (("failure-rate", enough and _above(rec.rate, rep.rate)),
                               ("latency", enough and _slower(rec.p95, rep.p95, margin_of=rec.p95))) if hit]
    verdict = "regressed" if worse else "insufficient-evidence" if not enough else \
        "improved" if better else "same"
    return ToolVerdict(tool.name, verdict, tuple(worse) if worse else tuple(better) if verdict == "improved"
                       else (), rec, rep, new_codes, new_templates, dict(skipped or {}))


def _slower(a: Interval, b: Interval, *, margin_of: Interval | None = None) -> bool:
    """``a``'s lower bound exceeds ``b``'s upper bound by more than the margin of the recorded p95."""
    if a.low is None or b.high is None:
        return False
    return a.low > b.high + _margin(margin_of if margin_of is not None else b)
