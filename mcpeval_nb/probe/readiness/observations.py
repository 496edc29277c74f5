"""What the standard battery observed, reduced to labels, flags and counts (SPEC 9.3's inputs).

The battery (``readiness.battery``) keeps only these frozen types: catalog facts per tool (counts and
flags, never text), per-tool call outcomes, the protocol checks and the two shared cases.
``readiness.score`` turns them into a ``Readiness``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ...jsonfmt import dumps
from ...privacy.records import MeasurementProfile
from .labels import STANDARD

__all__ = [
    "BatteryObservations",
    "CallObservation",
    "HonestyObservation",
    "Outcome",
    "ToolFacts",
    "ToolRun",
    "tool_tokens",
]

Outcome = Literal["success", "tool-error", "rpc-error", "transport-error"]
_TYPE_KEYS = ("type", "enum", "const", "$ref", "anyOf", "oneOf")


def tool_tokens(entry: Any) -> int:
    """``ceil(compact JSON bytes / 4)`` of a raw ``tools/list`` entry."""
    size = len(dumps(entry, sort_keys=True).encode("utf-8"))
    return -(-size // 4)


@dataclass(frozen=True)
class ToolFacts:
    """What the catalog area needs to know about one listed tool: counts and flags only."""

    name: str
    description_chars: int = 0
    has_properties: bool = False
    params_described: bool = True
    params_typed: bool = True
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    open_world_hint: bool | None = None
    has_output_schema: bool = False
    tokens: int = 0

    @property
    def writer(self) -> bool:
        """``readOnlyHint:false`` or ``destructiveHint:true``: never called."""
        return self.read_only_hint is False or self.destructive_hint is True

    @classmethod
    def from_entry(cls, entry: dict[str, Any]) -> ToolFacts:
        """Reduce a raw ``tools/list`` entry to facts (the entry itself is not kept)."""
        desc = entry.get("description")
        schema = entry.get("inputSchema")
        props = schema.get("properties") if isinstance(schema, dict) else None
        props = props if isinstance(props, dict) else {}
        ann = entry.get("annotations")
        ann = ann if isinstance(ann, dict) else {}

        def hint(key: str) -> bool | None:
            value = ann.get(key)
            return value if isinstance(value, bool) else None

        return cls(
            name=str(entry.get("name", "")), description_chars=len(desc) if isinstance(desc, str) else 0,
            has_properties=bool(props),
            params_described=all(isinstance(p, dict) and isinstance(p.get("description"), str)
                                 and p["description"].strip() != "" for p in props.values()),
            params_typed=all(isinstance(p, dict) and any(k in p for k in _TYPE_KEYS) for p in props.values()),
            read_only_hint=hint("readOnlyHint"), destructive_hint=hint("destructiveHint"),
            open_world_hint=hint("openWorldHint"),
            has_output_schema=isinstance(entry.get("outputSchema"), dict), tokens=tool_tokens(entry))


@dataclass(frozen=True)
class CallObservation:
    """One battery call: its outcome class, JSON-RPC code, latency and output-schema conformance."""

    outcome: Outcome
    code: int | None = None
    latency_ms: int | None = None
    output_conforms: bool | None = None


@dataclass(frozen=True)
class HonestyObservation:
    """The invalid-argument call and the ping after it.

    ``message_ok``: an ``isError`` result carried non-empty text other than the ``tool error`` placeholder.
    """

    outcome: Outcome
    code: int | None = None
    message_ok: bool = False
    ping_replied: bool = True

    def reason(self) -> str | None:
        """None when honest, else the error-honesty reason."""
        if self.outcome == "transport-error":
            return "honesty-call-failed"
        if self.outcome == "success":
            return "honesty-accepted-invalid"
        if self.outcome == "tool-error" and not self.message_ok:
            return "honesty-empty-error"
        if self.outcome == "rpc-error" and self.code != -32602:
            return "honesty-wrong-code"
        return None if self.ping_replied else "honesty-call-failed"


@dataclass(frozen=True)
class ToolRun:
    """What the battery did with one non-writer tool.

    Attributes:
        skipped: named by ``--skip-tool``.
        not_called: ``coverage-unannotated``, ``coverage-open-world`` or ``coverage-unsynthesizable``
            when no valid call was made.
        honesty: the invalid-argument probe, None when the tool was not judged.
        calls: the synthesized calls (normally three).
    """

    name: str
    skipped: bool = False
    not_called: str | None = None
    honesty: HonestyObservation | None = None
    calls: tuple[CallObservation, ...] = ()

    @property
    def successes(self) -> int:
        """Calls that succeeded."""
        return sum(c.outcome == "success" for c in self.calls)

    def not_exercised_reason(self) -> str | None:
        """None when at least one call succeeded, else why the tool was not exercised."""
        if self.skipped:
            return "coverage-skipped"
        if self.not_called is not None:
            return self.not_called
        if self.successes:
            return None
        if any(c.outcome == "rpc-error" and c.code == -32602 for c in self.calls):
            return "coverage-rejected-arguments"
        return "coverage-call-failed"


@dataclass(frozen=True)
class BatteryObservations:
    """Everything ``score_readiness`` needs.

    Attributes:
        tools: catalog facts in listing order.
        runs: one entry per non-writer tool, by name (missing entries count as not called).
        protocol: (check id, failure reason or None) for each applicable protocol check.
        contention, payload: (tool, passed) when that case ran, else None.
        standard: the standard the run is scored under (``mcpeval-modern/1`` for a 2026-07-28 server).
    """

    tools: tuple[ToolFacts, ...]
    runs: tuple[ToolRun, ...] = ()
    protocol: tuple[tuple[str, str | None], ...] = ()
    contention: tuple[str, bool] | None = None
    payload: tuple[str, bool] | None = None
    attested_read_only: bool = False
    measurement_profile: MeasurementProfile | None = None
    standard: str = STANDARD
