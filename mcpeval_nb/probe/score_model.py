"""The readiness object of a v2 probe report (SPEC 9.2): areas, checks, surface, badge, parsing.

Only fixed labels and counts live here: check ids, reasons and hints are closed vocabularies, tool names
pass the tool grammar, and parsing a saved document rejects anything outside them without echoing it.
"""

from __future__ import annotations

import platform as _platform
import sys
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from ..errors import DocumentError, ProfileError
from ..privacy.grammar import valid_tool
from ..privacy.records import MeasurementProfile

__all__ = [
    "AREAS",
    "CHECK_IDS",
    "READINESS_REASONS",
    "STANDARD",
    "Area",
    "Check",
    "Readiness",
    "Surface",
    "badge_url",
    "evaluator_version",
    "measurement_profile",
    "parse_readiness",
    "reason_hint",
]

STANDARD = "mcpeval-standard/2"
#: (area, weight) in report order; weights sum to 100.
AREAS: tuple[tuple[str, int], ...] = (
    ("protocol", 15), ("catalog", 20), ("context", 15), ("error-honesty", 15), ("reliability", 20),
    ("coverage", 15))

CHECK_IDS: dict[str, tuple[str, ...]] = {
    "protocol": ("protocol.unknown-method", "protocol.ping", "protocol.unknown-tool", "protocol.pagination",
                 "protocol.surfaces", "protocol.negotiation"),
    "catalog": ("catalog.description", "catalog.params-described", "catalog.params-typed",
                "catalog.read-only-declared", "catalog.destructive-declared", "catalog.output-schema",
                "catalog.empty"),
    "context": ("context.catalog", "context.heaviest-tool"),
    "error-honesty": ("error-honesty.invalid-input", "error-honesty.untestable"),
    "reliability": ("reliability.skipped", "reliability.none-exercised", "reliability.success",
                    "reliability.consistent", "reliability.latency", "reliability.output-schema",
                    "reliability.contention", "reliability.payload"),
    "coverage": ("coverage.exercised",),
}

#: Every readiness reason with its remediation hint (fixed text, never a payload).
READINESS_REASONS: dict[str, str] = {
    "protocol-unknown-method-answered": "Answer unknown JSON-RPC methods with error -32601.",
    "protocol-ping-failed": "Answer ping with an empty object result.",
    "protocol-unknown-tool-accepted": "Refuse tools/call for a tool that is not in the catalog.",
    "protocol-pagination-invalid": "Return valid tools/list pages: named tools with object input schemas, "
                                   "no duplicates, and a cursor that ends.",
    "protocol-surface-invalid": "Return valid resources/list and prompts/list envelopes for declared "
                                "capabilities, with cursors that end.",
    "protocol-negotiation-echoed-unknown": "Do not echo an unsupported protocol version; answer with one "
                                           "you support.",
    "protocol-negotiation-invalid-version": "Answer initialize with a date-shaped protocol version.",
    "protocol-negotiation-inconsistent-support": "Accept the protocol version you offered when a client "
                                                 "asks for it.",
    "protocol-call-failed": "The protocol check could not complete; keep the connection answering.",
    "catalog-short-description": "Describe the tool in at least 40 characters: what it does and when to "
                                 "use it.",
    "catalog-undescribed-params": "Give every input property a description.",
    "catalog-untyped-params": "Give every input property a type (or enum, const, $ref, anyOf, oneOf).",
    "catalog-read-only-undeclared": "Declare readOnlyHint in the tool's annotations.",
    "catalog-destructive-undeclared": "Declare destructiveHint on tools that change state.",
    "catalog-no-output-schema": "Declare an outputSchema and return structuredContent.",
    "catalog-no-tools": "The server listed no tools.",
    "context-catalog-heavy": "The catalog costs many context tokens; shorten descriptions and schemas.",
    "context-tool-heavy": "One tool costs many context tokens; shorten its description and schema.",
    "honesty-accepted-invalid": "Validate arguments: the tool accepted input its schema forbids.",
    "honesty-empty-error": "Explain refused input: the error result carried no usable message.",
    "honesty-wrong-code": "Refuse invalid arguments with -32602 or an isError result that explains why.",
    "honesty-call-failed": "The connection failed while refusing invalid input; keep serving after errors.",
    "honesty-untestable": "No called tool had a schema that allows an invalid-argument probe; declare "
                          "required properties or types.",
    "no-read-only-tools": "Every tool is a writer (or none is listed); mark read-only tools readOnlyHint.",
    "coverage-skipped": "The tool was skipped by --skip-tool; skipped tools score zero.",
    "coverage-unannotated": "Unannotated tools are only called with --confirm-read-only; declare "
                            "readOnlyHint.",
    "coverage-unsynthesizable": "No valid arguments could be built from the schema within the budgets; "
                                "add defaults, examples or simpler constraints.",
    "coverage-rejected-arguments": "The tool refused arguments valid under its own schema (-32602); align "
                                   "the schema with what the tool accepts.",
    "coverage-call-failed": "No call with valid arguments succeeded.",
    "reliability-call-failed": "Some calls with valid arguments failed.",
    "reliability-inconsistent": "Repeated identical calls had different outcomes.",
    "reliability-slow": "The median call latency is high.",
    "reliability-output-schema-broken": "structuredContent did not conform to the declared outputSchema.",
    "reliability-contention-failed": "A call failed while a second client used the same tool.",
    "reliability-payload-unhandled": "A large argument broke the transport; refuse oversized input with "
                                     "an error.",
    "reliability-none-exercised": "No tool could be exercised.",
}


def reason_hint(reason: str) -> str:
    """The fixed hint for a readiness reason (KeyError for an unknown one)."""
    return READINESS_REASONS[reason]


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

    def to_json(self) -> dict[str, Any]:
        """Sorted keys as the report prints them."""
        return {"hint": reason_hint(self.reason), "id": self.id, "observed": self.observed,
                "reason": self.reason, "score": self.score, "tool": self.tool}


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
    """A readiness result under a named standard (SPEC 9.2-9.3)."""

    score: int
    areas: tuple[Area, ...]
    surface: Surface
    attested_read_only: bool = False
    measurement_profile: MeasurementProfile | None = None
    standard: str = STANDARD

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


def evaluator_version() -> str:
    """This evaluator's version (the installed distribution's, else the package constant)."""
    try:
        return metadata.version("mcpeval-nb")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0.1.0"


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
    return MeasurementProfile(evaluator_version=evaluator_version(), platform=_os_name(),
                              architecture=_arch_name(), attested_read_only=attested_read_only,
                              skip_tools=tuple(sorted(set(skip_tools))),
                              call_timeout_ms=call_timeout_ms).validate()


# --- parsing a saved readiness object -------------------------------------------------------------------

def _u64(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**64:
        raise DocumentError(f"{where} must be an unsigned integer")
    return value


def _obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DocumentError(f"{where} must be an object")
    return value


def _parse_check(raw: Any, area: str, where: str) -> Check:
    d = _obj(raw, where)
    if d.get("id") not in CHECK_IDS[area]:
        raise DocumentError(f"{where}: unknown check id")
    if d.get("reason") not in READINESS_REASONS:
        raise DocumentError(f"{where}: unknown reason")
    score = _u64(d.get("score"), f"{where} score")
    if score > 99:
        raise DocumentError(f"{where} score must be below 100")
    observed = None if d.get("observed") is None else _u64(d.get("observed"), f"{where} observed")
    tool = d.get("tool")
    if tool is not None and not (isinstance(tool, str) and valid_tool(tool)):
        raise DocumentError(f"{where} tool is not a valid tool name")
    return Check(d["id"], d["reason"], score, observed, tool)


def _parse_area(raw: Any, where: str) -> Area:
    d = _obj(raw, where)
    weights = dict(AREAS)
    name = d.get("name")
    if name not in weights:
        raise DocumentError(f"{where}: unknown area")
    if d.get("weight") != weights[name]:
        raise DocumentError(f"{where}: weight does not match the standard")
    score = _u64(d.get("score"), f"{where} score")
    if score > 100:
        raise DocumentError(f"{where} score must be at most 100")
    checks = d.get("checks", [])
    if not isinstance(checks, list):
        raise DocumentError(f"{where} checks must be an array")
    measurements = _obj(d.get("measurements", {}), f"{where} measurements")
    parsed = {k: _u64(v, f"{where} measurement") for k, v in measurements.items() if isinstance(k, str)}
    return Area(name, weights[name], score,
                tuple(_parse_check(c, name, f"{where} check {i + 1}") for i, c in enumerate(checks)), parsed)


def parse_readiness(raw: Any, *, where: str = "readiness") -> Readiness:
    """Parse a report's readiness object; strict under ``mcpeval-standard/2``.

    Other standards keep only ``score`` and ``standard`` (display-only, not comparable).

    Raises:
        DocumentError: an unknown area, check id or reason, a wrong type, an invalid measurement profile
            or an inconsistent read-only attestation; the message names the place, never the value.
    """
    d = _obj(raw, where)
    score = _u64(d.get("score"), f"{where} score")
    standard = d.get("standard")
    if not isinstance(standard, str):
        raise DocumentError(f"{where} standard must be a string")
    if score > 100:
        raise DocumentError(f"{where} score must be at most 100")
    attested = d.get("attested_read_only", False)
    if not isinstance(attested, bool):
        raise DocumentError(f"{where} attested_read_only must be a boolean")
    profile = None
    if d.get("measurement_profile") is not None:
        try:
            profile = MeasurementProfile.from_dict(d["measurement_profile"])
        except ProfileError as exc:
            raise DocumentError(f"{where}: {exc}") from None
        if profile.attested_read_only != attested:
            raise DocumentError(f"{where}: inconsistent read-only attestation")
    if standard != STANDARD:
        return Readiness(score, (), Surface(0, 0, 0, 0), attested, profile, standard)
    areas_raw = d.get("areas")
    if not isinstance(areas_raw, list):
        raise DocumentError(f"{where} areas must be an array")
    areas = tuple(_parse_area(a, f"{where} area {i + 1}") for i, a in enumerate(areas_raw))
    if sorted(a.name for a in areas) != sorted(n for n, _ in AREAS):
        raise DocumentError(f"{where} must score each of the six areas once")
    s = _obj(d.get("surface"), f"{where} surface")
    surface = Surface(*(_u64(s.get(k), f"{where} surface {k}") for k in ("tools", "read_only", "writers",
                                                                           "exercised")))
    return Readiness(score, areas, surface, attested, profile, standard)
