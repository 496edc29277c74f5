"""The readiness object of a v2 probe report (SPEC 9.2): areas, checks, surface, badge, measurement profile.

Only fixed labels and counts live here: check ids and reasons are closed vocabularies (``labels``), tool
names pass the tool grammar.  ``parse`` reads a saved object back; ``to_json`` writes it.
"""

from __future__ import annotations

import copy
import platform as _platform
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..._version import __version__
from ...privacy.grammar import valid_tool
from ...privacy.records import MeasurementProfile
from .labels import SCORED_STANDARDS, STANDARD, reason_hint

__all__ = [
    "Area",
    "Check",
    "Readiness",
    "Surface",
    "badge_url",
    "measurement_profile",
]


@dataclass(frozen=True)
class Check:
    """A check that lost points: ``score`` 0-99, ``observed`` a count or None, ``tool`` or None.

    A tool name outside the tool grammar (a server may list anything) is dropped to None, so no raw
    server text reaches a report.
    """

    id: str
    reason: str
    score: int = 0
    observed: int | None = None
    tool: str | None = None

    def __post_init__(self) -> None:
        if self.tool is not None and not valid_tool(self.tool):
            object.__setattr__(self, "tool", None)

    @property
    def hint(self) -> str:
        """The reason's fixed remediation hint."""
        return reason_hint(self.reason)

    def to_json(self) -> dict[str, Any]:
        """Sorted keys as the report prints them."""
        return {"hint": self.hint, "id": self.id, "observed": self.observed, "reason": self.reason,
                "score": self.score, "tool": self.tool}


@dataclass(frozen=True)
class Area:
    """One scored area with its weight, lost checks and measurements."""

    name: str
    weight: int
    score: int
    checks: tuple[Check, ...] = ()
    measurements: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Sorted keys as the report prints them."""
        return {"checks": [c.to_json() for c in self.checks],
                "measurements": dict(sorted(self.measurements.items())),
                "name": self.name, "score": self.score, "weight": self.weight}


@dataclass(frozen=True)
class Surface:
    """Tool counts: listed, non-writers (``read_only``), writers, non-writers with a successful call."""

    tools: int
    read_only: int
    writers: int
    exercised: int

    def to_json(self) -> dict[str, int]:
        """Sorted keys."""
        return {"exercised": self.exercised, "read_only": self.read_only, "tools": self.tools,
                "writers": self.writers}


def badge_url(score: int) -> str:
    """The shields.io badge for a score: brightgreen 80-100, yellow 50-79, else red."""
    color = "brightgreen" if score >= 80 else "yellow" if score >= 50 else "red"
    return f"https://img.shields.io/badge/mcpeval-{score}%2F100-{color}"


@dataclass(frozen=True)
class Readiness:
    """A readiness result under a named standard (SPEC 9.2-9.3).

    Attributes:
        score: the overall score, 0-100. areas: the six scored areas in report order. surface: tool counts.
        attested_read_only: the run's ``--confirm-read-only``. measurement_profile: the run's profile.
        standard: the standard it was scored under.
        document: for a standard this evaluator does not score (``display_only``), the object as read,
            which ``to_json`` writes back unchanged; None otherwise.
    """

    score: int
    areas: tuple[Area, ...]
    surface: Surface
    attested_read_only: bool = False
    measurement_profile: MeasurementProfile | None = None
    standard: str = STANDARD
    document: Mapping[str, Any] | None = field(default=None, repr=False)

    @property
    def display_only(self) -> bool:
        """Scored under a standard this evaluator does not score: only ``score`` and ``standard`` are
        shown, nothing compares."""
        return self.standard not in SCORED_STANDARDS

    def area(self, name: str) -> Area:
        """The area called ``name`` (KeyError if absent)."""
        for area in self.areas:
            if area.name == name:
                return area
        raise KeyError(name)

    @property
    def badge(self) -> str:
        """The badge URL for the overall score."""
        return badge_url(self.score)

    def to_json(self) -> dict[str, Any]:
        """The readiness object with sorted keys (``measurement_profile`` only when set)."""
        if self.document is not None:
            return copy.deepcopy(dict(self.document))
        s = self.surface
        out: dict[str, Any] = {
            "areas": [a.to_json() for a in self.areas],
            "assessment": {"read_only_tools": s.read_only, "scope": "read-only-structural",
                           "semantic_correctness": "requires-reviewed-oracle", "tools_exercised": s.exercised,
                           "writer_tools_excluded": s.writers},
            "attested_read_only": self.attested_read_only, "badge": self.badge}
        if self.measurement_profile is not None:
            out["measurement_profile"] = self.measurement_profile.to_dict()
        out.update(score=self.score, standard=self.standard, surface=s.to_json())
        return out


def _os_name() -> str:
    plat = sys.platform
    return {"darwin": "macos", "win32": "windows"}.get(plat, "linux" if plat.startswith("linux") else plat)


def _arch_name() -> str:
    arch = _platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64", "i686": "x86", "i386": "x86"}.get(arch, arch or "unknown")


def measurement_profile(*, attested_read_only: bool, skip_tools: tuple[str, ...] | list[str] = (),
                        call_timeout_ms: int = 15000) -> MeasurementProfile:
    """The measurement profile of a battery run on this machine (SPEC 7.2), validated.

    Raises:
        ProfileError: a skip tool outside the tool grammar (never echoed).
    """
    return MeasurementProfile(evaluator_version=__version__, platform=_os_name(),
                              architecture=_arch_name(), attested_read_only=attested_read_only,
                              skip_tools=tuple(sorted(set(skip_tools))),
                              call_timeout_ms=call_timeout_ms).validate()
