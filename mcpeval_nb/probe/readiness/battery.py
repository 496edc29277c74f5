"""The standard readiness battery (``mcpeval-standard/2``, SPEC 8.4) over the session layer.

Per non-writer tool, in catalog order: the honesty probe (one call with invalid arguments, then ``ping``)
and three calls with synthesized arguments (15 s each, server-to-client requests declined, at most 8).
Writers are never called; unannotated tools only with ``--confirm-read-only``; ``--skip-tool`` names are
skipped (and scored as such).  Then one contention case and one payload case on the first tool whose
three calls all succeeded, then the protocol checks.  The battery never journals: it calls the session
directly and runs reused kinds with journaling off.  Everything it keeps is a label, a flag or a count;
``readiness.score`` turns that into the readiness object.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import Cancelled, TransportError, UsageError, describe
from ...limits import (
    BATTERY_CALL_TIMEOUT_S,
    BATTERY_REPEATS,
    MAX_EVAL_REQUESTS,
    MAX_EVAL_SECONDS,
    MAX_SERVER_REQUESTS,
)
from ...privacy.grammar import valid_tool
from ...root import RootLike
from ...transport.era import TASKS_EXTENSION
from ...transport.messages import Catalog, Target, ToolOutcome
from ..context import ProbeOptions, RunContext
from ..eras import DEFAULT_ERA
from ..history import record_report_trend
from ..plan import RunPlan, Work, open_run, plan_run
from ..report import ProbeReport
from .checks import Connection, protocol_checks, run_contention, run_payload
from .hints import MAX_ALTERNATIVES, string_hints
from .labels import MODERN_STANDARD, STANDARD
from .model import Readiness, measurement_profile
from .modern_checks import ModernFacts, modern_protocol_checks
from .observations import BatteryObservations, CallObservation, HonestyObservation, ToolFacts, ToolRun
from .schema_tools import schema_test
from .score import score_readiness
from .synth import invalid_arguments, synthesize

__all__ = ["BatteryOptions", "check_skip_names", "run_battery", "score_server"]

Progress = Callable[[str], None]


@dataclass(frozen=True, kw_only=True)
class BatteryOptions:
    """How the battery treats the catalog.

    Attributes:
        confirm_read_only: the operator attests unannotated tools are read-only (they get called).
        skip_tools: tool names never called (scored as skipped; an undeclared name is a usage error).
        allow_open_world: also call tools annotated ``openWorldHint: true`` (they may reach the
            internet); without it they are not called, scored as ``coverage-open-world``, and listed in
            the measurement profile's skip tools so scores with and without the flag never compare.
        call_timeout_s: deadline of each battery call.
        progress: called with short content-free lines (``battery tool 3/13``); None for silence.
        history: ``score_server`` appends the scored run's trend point (``--no-history`` turns it off).
        root: the capture root of that history (default ``$MCPEVAL_HOME``).
        protocol: the protocol era (``--protocol``: ``auto``, ``legacy`` or ``2026-07-28``); a server
            that speaks 2026-07-28 is scored under ``mcpeval-modern/1``.
    """

    confirm_read_only: bool = False
    skip_tools: tuple[str, ...] = ()
    allow_open_world: bool = False
    call_timeout_s: float = BATTERY_CALL_TIMEOUT_S
    progress: Progress | None = None
    history: bool = True
    root: RootLike = None
    protocol: str = DEFAULT_ERA


def check_skip_names(skip_tools: Sequence[str], catalog: Catalog | None = None) -> None:
    """Refuse ``--skip-tool`` names outside the tool grammar, or (given a catalog) not declared.

    Raises:
        UsageError: naming the flag and the position of the offending name, never the name.
    """
    for i, name in enumerate(skip_tools, start=1):
        if not valid_tool(name):
            raise UsageError(f"--skip-tool #{i} is not a valid tool name")
        if catalog is not None and catalog.get(name) is None:
            raise UsageError(f"--skip-tool #{i} names a tool the server did not declare")


def _observe(outcome: ToolOutcome, output_test: Callable[[Any], bool] | None) -> CallObservation:
    conforms = None
    if outcome.ok and output_test is not None:
        result = outcome.result if isinstance(outcome.result, dict) else {}
        content = result.get("structuredContent")
        conforms = content is not None and output_test(content)
    return CallObservation(outcome.kind, outcome.code, outcome.latency_ms, conforms)


def _output_test(schema: Any) -> Callable[[Any], bool]:
    """A conformance test for a declared output schema (metaschema-checked, compiled once per schema)."""
    if not isinstance(schema, dict):
        return lambda _: False
    return schema_test(schema, check_schema=True)


def _message_ok(outcome: ToolOutcome) -> bool:
    message = (outcome.payload or {}).get("message")
    return isinstance(message, str) and message.strip() != "" and message != "tool error"


class _Battery:
    def __init__(self, ctx: RunContext, options: BatteryOptions) -> None:
        self.ctx, self.options = ctx, options
        self.conn = Connection(ctx)
        self.args: dict[str, dict[str, Any]] = {}
        self.refusal = ""  # the first refusal's text in the last calls() (never kept past the tool)

    def say(self, line: str) -> None:
        if self.options.progress is not None:
            self.options.progress(line)

    def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        self.ctx.check_cancel()
        return self.conn.session.call_tool(name, arguments, timeout=self.options.call_timeout_s,
                                           max_server_requests=MAX_SERVER_REQUESTS)

    def honesty(self, name: str, arguments: dict[str, Any]) -> HonestyObservation:
        try:
            outcome = self.call(name, arguments)
        except TransportError as exc:
            self.conn.lost(exc)
            return HonestyObservation("transport-error")
        try:
            replied = True
            self.conn.alive(timeout=self.options.call_timeout_s)
        except TransportError as exc:
            self.conn.lost(exc)
            replied = False
        return HonestyObservation(outcome.kind, outcome.code, _message_ok(outcome), replied)

    def calls(self, name: str, arguments: dict[str, Any], output_schema: Any) -> tuple[CallObservation, ...]:
        test = None if output_schema is None else _output_test(output_schema)
        observed = []
        self.refusal = ""
        for _ in range(BATTERY_REPEATS):
            try:
                outcome = self.call(name, arguments)
                observed.append(_observe(outcome, test))
                self.refusal = self.refusal or _error_text(outcome)
            except TransportError as exc:
                self.conn.lost(exc)
                observed.append(CallObservation("transport-error"))
        return tuple(observed)

    def tool(self, entry: dict[str, Any], facts: ToolFacts) -> ToolRun:
        name = facts.name
        if name in self.options.skip_tools:
            return ToolRun(name, skipped=True)
        if facts.open_world_hint is True and not self.options.allow_open_world:
            self.say("battery skipped: openWorldHint (pass --allow-open-world to call it)")
            return ToolRun(name, not_called="coverage-open-world")
        if facts.read_only_hint is not True and not self.options.confirm_read_only:
            return ToolRun(name, not_called="coverage-unannotated")
        schema = entry.get("inputSchema")
        invalid = invalid_arguments(schema)
        honesty = None if invalid is None else self.honesty(name, invalid)
        synthesis = synthesize(schema)
        if synthesis.arguments is None:  # SPEC 8.4's rules (a pattern, a budget): never called
            self.say(f"battery: could not synthesise a valid argument for {name} ({synthesis.reason})")
            return ToolRun(name, honesty=honesty, not_called="coverage-unsynthesizable")
        arguments = synthesis.arguments
        calls = self.calls(name, arguments, entry.get("outputSchema"))
        if synthesis.invented and all(_refused(c) for c in calls):  # refused what the rules invented
            second = self.second_attempt(name, schema, self.refusal)
            if second is None:
                self.say(f"battery: could not synthesise a valid argument for {name}")
                return ToolRun(name, honesty=honesty, not_called="coverage-unsynthesizable")
            arguments, calls = second, self.calls(name, second, entry.get("outputSchema"))
        if all(c.outcome == "success" for c in calls):
            self.args[name] = arguments
        return ToolRun(name, honesty=honesty, calls=calls)

    def second_attempt(self, name: str, schema: Any, error_text: str) -> dict[str, Any] | None:
        """Arguments from the tool's own words (``readiness.hints``) that one call accepts, or None."""
        tried: list[dict[str, Any]] = []
        for k in range(MAX_ALTERNATIVES):
            def hint(prop: str, sub: dict[str, Any], k: int = k, said: str = error_text) -> str | None:
                values = string_hints(prop, sub, said)
                return values[min(k, len(values) - 1)] if values else None
            candidate = synthesize(schema, hint=hint).arguments
            if candidate is None or candidate in tried:
                continue
            tried.append(candidate)
            try:
                outcome = self.call(name, candidate)
            except TransportError as exc:
                self.conn.lost(exc)
                return None
            if outcome.ok:
                return candidate
            error_text = _error_text(outcome) or error_text
        return None

    def shared_cases(self, entries: dict[str, dict[str, Any]]) -> tuple[tuple[str, bool] | None, ...]:
        if not self.args:
            return None, None
        first = next(iter(self.args))
        self.say("battery contention")
        contention = (first, run_contention(self.conn, first, self.args[first]))
        payload = None
        for name, arguments in self.args.items():
            field = _first_string_property(entries[name].get("inputSchema"))
            if field is not None:
                self.say("battery payload")
                payload = (name, run_payload(self.conn, name, arguments, field,
                                             timeout=self.options.call_timeout_s))
                break
        return contention, payload

    def modern_facts(self, names: list[str], caps: dict[str, Any], surfaces: bool) -> ModernFacts:
        return ModernFacts(names=tuple(names), surfaces=surfaces,
                           resources=isinstance(caps.get("resources"), dict), tasks=_tasks_declared(caps))

    def run(self) -> Readiness:
        catalog = self.conn.session.list_tools()
        modern = self.conn.modern
        if modern and _tasks_declared(self.conn.session.server_capabilities):
            self.conn.declare({"extensions": {TASKS_EXTENSION: {}}})
        check_skip_names(self.options.skip_tools, catalog)
        caps = dict(self.conn.session.server_capabilities)
        facts = [ToolFacts.from_entry(e) for e in catalog.tools]
        entries = {f.name: e for f, e in zip(facts, catalog.tools, strict=True)}
        runs = []
        for i, f in enumerate(facts, start=1):
            if not f.writer:
                self.say(f"battery tool {i}/{len(facts)}")
                runs.append(self.tool(entries[f.name], f))
        contention, payload = self.shared_cases(entries)
        self.say("battery protocol checks")
        surfaces = isinstance(caps.get("resources"), dict) or isinstance(caps.get("prompts"), dict)
        if modern:
            protocol = modern_protocol_checks(self.conn, self.modern_facts(catalog.names, caps, surfaces))
        else:
            protocol = protocol_checks(self.conn, surfaces_declared=surfaces)
        unasked = tuple(r.name for r in runs if r.not_called == "coverage-open-world" and valid_tool(r.name))
        profile = measurement_profile(attested_read_only=self.options.confirm_read_only,
                                      skip_tools=(*self.options.skip_tools, *unasked),
                                      call_timeout_ms=round(self.options.call_timeout_s * 1000))
        return score_readiness(BatteryObservations(
            tuple(facts), tuple(runs), protocol, contention, payload, self.options.confirm_read_only,
            profile, MODERN_STANDARD if modern else STANDARD))


def _tasks_declared(caps: dict[str, Any]) -> bool:
    extensions = caps.get("extensions")
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def _refused(call: CallObservation) -> bool:
    """A call the server refused for its arguments: an ``isError`` result or ``-32602``."""
    return call.outcome == "tool-error" or (call.outcome == "rpc-error" and call.code == -32602)


def _error_text(outcome: ToolOutcome) -> str:
    """What a refusal said (read by ``readiness.hints`` in this process only; never kept or shown)."""
    if outcome.ok:
        return ""
    message = (outcome.payload or {}).get("message")
    return message if isinstance(message, str) else ""


def _first_string_property(schema: Any) -> str | None:
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return None
    strings = (k for k in sorted(props) if isinstance(props[k], dict) and props[k].get("type") == "string")
    return next(strings, None)


def run_battery(ctx: RunContext, options: BatteryOptions | None = None) -> Readiness:
    """Run the standard battery against ``ctx.target`` on connections of its own.

    Args:
        ctx: the run context (target, shared budget, cancellation); its journal is never used.
        options: attestation, skips and progress (default: from ``ctx.options``).

    Returns:
        The readiness under ``mcpeval-standard/2`` with the measurement profile.

    Raises:
        UsageError: a ``--skip-tool`` name the server did not declare (nothing scored).
        TransportError: the battery could not complete (first connection lost, budget exhausted).
        Cancelled: the run's cancel event was set.
    """
    if options is None:
        options = BatteryOptions(confirm_read_only=ctx.options.confirm_read_only,
                                 skip_tools=tuple(ctx.options.skip_tools),
                                 allow_open_world=ctx.options.allow_open_world)
    check_skip_names(options.skip_tools)
    battery = _Battery(ctx, options)
    try:
        return battery.run()
    finally:
        battery.conn.drop()


def score_server(target: Target, *, server: str, options: BatteryOptions | None = None,
                 max_requests: int = MAX_EVAL_REQUESTS, max_seconds: float = MAX_EVAL_SECONDS,
                 cancel: threading.Event | None = None) -> ProbeReport:
    """``mcpeval-nb score``: the battery alone, no manifest (``manifest_sha256`` and ``gate`` null).

    Args:
        target: the server (``StdioTarget`` or ``HttpTarget``).
        server: the report's server label.
        options: attestation, skips, progress, and whether to record the trend point (``history``,
            under ``root``).
        max_requests / max_seconds: the evaluation budget (SPEC 8.4).
        cancel: set to stop between calls.

    Returns:
        The v2 report: ``readiness`` set, or ``readiness_error`` when the battery could not complete, or
        ``cancelled`` when ``cancel`` was set (exit code 3 for both).  With ``options.history`` a scored
        run has appended its trend point.

    Raises:
        UsageError: an invalid label or ``--skip-tool`` name (nothing scored).
        ProfileError, JournalError: the trend point could not be written.
    """
    chosen = options or BatteryOptions()
    plan: RunPlan[None] = plan_run(
        target, options=ProbeOptions(server=server, journal=False, confirm_read_only=chosen.confirm_read_only,
                                     skip_tools=chosen.skip_tools, max_requests=max_requests,
                                     max_seconds=max_seconds, protocol=chosen.protocol),
        work=lambda: _battery_work(chosen))
    report = _scored(open_run(plan, cancel=cancel), chosen)
    if chosen.history:
        record_report_trend(report, root=chosen.root)
    return report


def _battery_work(options: BatteryOptions) -> Work[None]:
    """A battery-only run's work: nothing but the ``--skip-tool`` names, checked before a server starts."""
    check_skip_names(options.skip_tools)
    return Work()


def _scored(ctx: RunContext, options: BatteryOptions) -> ProbeReport:
    server = ctx.options.server
    try:
        readiness = run_battery(ctx, options)
    except TransportError as exc:
        reason = ctx.reason(exc)
        if options.progress is not None:  # the report carries the label; say why, as probe does
            options.progress(f"readiness {reason}: {describe(exc)}")
        return ProbeReport(server=server, cases=(), readiness=None, readiness_error=reason,
                           protocol=ctx.negotiated)
    except Cancelled:
        return ProbeReport(server=server, cases=(), readiness=None, cancelled=True, protocol=ctx.negotiated)
    return ProbeReport(server=server, cases=(), readiness=readiness, protocol=ctx.negotiated)
