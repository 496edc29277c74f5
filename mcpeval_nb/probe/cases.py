"""A manifest case and its verdict: ``ProbeCase``, ``CaseResult`` and ``Detail`` (SPEC 9.2, 9.5).

These are the types the probe kinds build on; they sit below the manifest parser, the kind table and the
report so that all three can use them.  A case's fields stay in memory only; a result carries labels and
numbers only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..privacy.grammar import valid_tool
from .reasons import TRANSPORT_REASONS, hint_for

__all__ = ["MEASUREMENT_KEYS", "TOOL_FIELDS", "UNLISTED", "CaseResult", "Detail", "ProbeCase", "listed"]

#: What a report prints for a tool name outside the tool grammar (a server may list any text).
UNLISTED = "unlisted"


def listed(name: object) -> str:
    """A server-given tool name as a report may print it: itself inside the tool grammar, else
    ``unlisted`` (so a hostile catalog cannot put prose into a report)."""
    return name if isinstance(name, str) and valid_tool(name) else UNLISTED

#: The measurement keys a case object carries, in document order.
MEASUREMENT_KEYS = ("tool_count", "schema_bytes", "total_tokens", "per_tool", "latency_ms", "pages")
_TEXT_KEYS = (("tool_count", "tools"), ("schema_bytes", "schema_bytes"), ("total_tokens", "total_tokens"),
              ("latency_ms", "latency_ms"), ("pages", "pages"))
#: The fields that name a tool, in manifest order.
TOOL_FIELDS = ("tool", "failure_tool", "recovery_tool", "validation_tool", "trigger_tool")


@dataclass(frozen=True)
class ProbeCase:
    """One validated manifest case.

    Attributes:
        id: the case id (an identifier).
        probe: the probe kind label.
        access: ``read_only`` or ``mutating``.
        sandbox: the declared sandbox a mutating case names, else None.
        index: the case's position in the manifest (0-based).
        fields: every field of the case as parsed (arguments stay in memory only; never printed).
    """

    id: str
    probe: str
    access: str
    sandbox: str | None
    index: int
    fields: Mapping[str, Any] = field(repr=False)

    @property
    def tools(self) -> tuple[str, ...]:
        """Every tool the case names (a stepped case: each step's tool), in manifest order, deduplicated."""
        names = [self.fields[k] for k in TOOL_FIELDS if isinstance(self.fields.get(k), str)]
        names += [s["tool"] for s in self.fields.get("steps", ())]
        return tuple(dict.fromkeys(names))

    @property
    def primary_tool(self) -> str | None:
        """The report's ``tool``: the case tool, a stepped case's first step tool (workflow), else
        state-recovery's failure tool."""
        steps = self.fields.get("steps")
        if steps:
            return str(steps[0]["tool"])
        for key in ("tool", "failure_tool"):
            if isinstance(self.fields.get(key), str):
                return str(self.fields[key])
        return None


@dataclass(frozen=True)
class Detail:
    """Which bound a failing case broke: the bound's name, its limit and the observed value."""

    bound: str
    limit: int
    observed: int

    def to_json(self) -> dict[str, Any]:
        """The ``detail`` object (sorted keys)."""
        return {"bound": self.bound, "limit": self.limit, "observed": self.observed}


@dataclass(frozen=True)
class CaseResult:
    """The verdict of one case.

    Attributes:
        id: the case id. probe: its kind. passed: the verdict.
        attempts: calls or steps made. first_failure: 1-based attempt of the failure, or None.
        reason: a fixed reason label when failed (a transport reason when the case errored).
        tool: the case's primary tool, or None.
        measurements: ``tool_count``, ``schema_bytes``, ``total_tokens``, ``per_tool``, ``latency_ms``,
            ``pages`` when measured.
        detail: the broken bound, or None.
        call: for a failure of a stepped kind (workflow), the call number the hint names.
    """

    id: str
    probe: str
    passed: bool
    attempts: int = 0
    first_failure: int | None = None
    reason: str | None = None
    tool: str | None = None
    measurements: Mapping[str, Any] = field(default_factory=dict)
    detail: Detail | None = None
    call: int | None = None

    @property
    def errored(self) -> bool:
        """True when the case could not complete (a transport reason), as opposed to a verdict."""
        return self.reason in TRANSPORT_REASONS

    @property
    def hint(self) -> str | None:
        """The remediation hint for the reason (a stepped kind's hint embeds the call number), or None."""
        if self.reason is None:
            return None
        return hint_for(self.reason, call=self.call)

    def to_json(self) -> dict[str, Any]:
        """The case object of probe-report/v2 (keys sorted on output)."""
        return {
            "attempts": self.attempts, "detail": None if self.detail is None else self.detail.to_json(),
            "first_failure": self.first_failure, "hint": self.hint, "id": self.id,
            "measurements": {k: self.measurements[k] for k in MEASUREMENT_KEYS if k in self.measurements},
            "passed": self.passed, "probe": self.probe, "reason": self.reason, "tool": self.tool,
        }

    def text_line(self) -> str:
        """The SPEC 9.5 line for this case (without the hint line)."""
        if self.passed:
            head = f"{self.id} {self.probe} pass attempts={self.attempts}"
        else:
            first = "none" if self.first_failure is None else str(self.first_failure)
            head = (f"{self.id} {self.probe} fail attempts={self.attempts} first_failure={first} "
                    f"reason={self.reason}")
        meas = self.measurements
        parts = [f" {label}={meas[key]}" for key, label in _TEXT_KEYS if key in meas]
        if self.detail is not None:
            d = self.detail
            parts.append(f" bound={d.bound} limit={d.limit} observed={d.observed}")
        return head + "".join(parts)
