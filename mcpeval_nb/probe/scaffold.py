"""``mcpeval-nb init``: scaffold a probe manifest from a live server (SPEC 8.6).

Connect, list the catalog, decide per tool whether it is a candidate, then build read-only cases with
bounds derived from what was measured (catalog size and bytes, the heaviest tool, a naive ``{}`` call's
latency).  The manifest is validated by the manifest parser before it is returned, and written only with
``create_new`` semantics unless ``force``.  Tool names and decisions are printed; nothing else.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ProbeError, TransportError, UsageError
from ..jsonfmt import dumps
from ..limits import BATTERY_CALL_TIMEOUT_S, BATTERY_PAYLOAD_BYTES, MAX_SERVER_REQUESTS
from ..privacy.grammar import valid_identifier, valid_server, valid_tool
from ..root.outputs import write_new_file
from ..transport.budget import Budget
from ..transport.cancel import watch
from ..transport.messages import Target
from ..transport.negotiate import open_session
from ..transport.session import McpSession
from .eras import DEFAULT_ERA, check_era
from .manifest import parse_manifest
from .readiness.observations import tool_tokens

__all__ = ["Scaffold", "decide", "scaffold_manifest", "write_manifest"]

MAX_CANDIDATES = 20


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def _roundup100(value: int) -> int:
    return -(-value // 100) * 100


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def decide(entry: dict[str, Any], *, tools: Sequence[str] | None, confirm_read_only: bool,
           allow_open_world: bool = False) -> str:
    """The scaffolding decision for one tool, first matching rule of SPEC 8.6, plus one of ours: a tool
    annotated ``openWorldHint: true`` is never called to check it as a candidate unless
    ``allow_open_world`` (it may reach the internet)."""
    ann, schema = _obj(entry.get("annotations")), _obj(entry.get("inputSchema"))
    if tools is not None and entry.get("name") not in tools:
        return "skipped: not in --tool"
    if not valid_tool(entry.get("name")):
        return "skipped: name outside the tool grammar"
    if ann.get("destructiveHint") is True:
        return "skipped: destructiveHint"
    if ann.get("readOnlyHint") is False:
        return "skipped: readOnlyHint=false"
    if isinstance(schema.get("required"), list) and schema["required"]:
        return "skipped: required arguments"
    if ann.get("openWorldHint") is True and not allow_open_world:
        return "skipped: openWorldHint"
    if ann.get("readOnlyHint") is True:
        return "candidate (readOnlyHint)"
    if confirm_read_only:
        return "candidate (attested)"
    return "needs --confirm-read-only"


@dataclass
class Scaffold:
    """Per-tool decisions and the scaffolded manifest document."""

    decisions: list[tuple[str, str]] = field(default_factory=list)
    cases: list[dict[str, Any]] = field(default_factory=list)
    server: str | None = None

    @property
    def manifest(self) -> dict[str, Any]:
        """The manifest document (struct order: version, sandboxes, probes)."""
        return {"version": 1, "sandboxes": {}, "probes": self.cases}

    def summary_line(self, path: str | Path) -> str:
        """``wrote <path> with <n> cases`` (``for <server>`` when the scaffold was labelled)."""
        label = "" if self.server is None else f" for {self.server}"
        return f"wrote {path} with {len(self.cases)} cases{label}\n"

    def text(self) -> str:
        """Pretty JSON with a trailing newline."""
        return dumps(self.manifest, sort_keys=False, indent=2) + "\n"

    def decision_lines(self) -> str:
        """``<tool> <decision>`` per listed tool (a name outside the tool grammar shows as ``-``)."""
        return "".join(f"{name if valid_tool(name) else '-'} {decision}\n"
                       for name, decision in self.decisions)

    def add(self, case_id: str, probe: str, **fields: Any) -> None:
        """Append a read-only case; an id outside the identifier grammar becomes ``case-<kind>-<n>``."""
        if not valid_identifier(case_id):
            case_id = f"case-{probe}-{len(self.cases) + 1}"
        self.cases.append({"probe": probe, "id": case_id, "access": "read_only", **fields})


def _catalog_cases(sc: Scaffold, tools: list[dict[str, Any]], caps: dict[str, Any]) -> None:
    size = len(dumps(tools, sort_keys=True).encode("utf-8"))
    heaviest = max((tool_tokens(t) for t in tools), default=0)
    total = _clamp(_roundup100(2 * -(-size // 4)), 100, 1_000_000)
    sc.add("discovery-budget", "discovery-cost", max_tools=_clamp(2 * len(tools), 10, 10_000),
           max_schema_bytes=_clamp(2 * size, 1000, 10_000_000))
    sc.add("token-budget", "token-cost", max_total_tokens=total,
           max_tool_tokens=min(_clamp(_roundup100(2 * heaviest), 100, 100_000), total))
    sc.add("catalog-pagination", "pagination", max_pages=5)
    sc.add("protocol-negotiation", "protocol-negotiation", bogus_version="2000-01-01")
    if isinstance(caps.get("resources"), dict) or isinstance(caps.get("prompts"), dict):
        sc.add("declared-surfaces", "surface-listing", max_pages=5)


def _payload_field(entry: dict[str, Any]) -> str | None:
    props = _obj(entry.get("inputSchema")).get("properties")
    if not isinstance(props, dict):
        return None
    return next((k for k in sorted(props) if valid_identifier(k) and isinstance(props[k], dict)
                 and props[k].get("type") == "string"), None)


def _tool_cases(sc: Scaffold, session: McpSession, candidates: list[dict[str, Any]]) -> None:
    verified: list[dict[str, Any]] = []
    for entry in candidates:
        if len(verified) >= MAX_CANDIDATES:
            break
        name = str(entry["name"])
        try:
            outcome = session.call_tool(name, {}, timeout=BATTERY_CALL_TIMEOUT_S,
                                        max_server_requests=MAX_SERVER_REQUESTS)
        except TransportError as exc:
            if exc.reason == "evaluation-budget-exceeded" or session.closed:
                raise
            continue
        if not outcome.ok:
            continue
        verified.append(entry)
        sc.add(f"{name}-guessable", "schema-guessability", tool=name, arguments={})
        sc.add(f"{name}-repeat", "degradation-over-n", tool=name, arguments={}, max_attempts=5)
        sc.add(f"{name}-latency", "latency-budget", tool=name, arguments={}, attempts=3,
               max_latency_ms=_clamp(_roundup100(4 * outcome.latency_ms), 1000, 60_000))
        if isinstance(entry.get("outputSchema"), dict):
            sc.add(f"{name}-output", "output-schema", tool=name, arguments={})
    if not verified:
        return
    first = str(verified[0]["name"])
    sc.add(f"{first}-contention", "contention", tool=first, arguments={})
    chosen = next(((e, f) for e in verified if (f := _payload_field(e)) is not None),
                  (verified[0], "payload"))
    name = str(chosen[0]["name"])
    sc.add(f"{name}-payload", "payload-bounds", tool=name, arguments={}, field=chosen[1],
           size_bytes=BATTERY_PAYLOAD_BYTES, expect_handled=False)


def scaffold_manifest(target: Target, *, tools: Sequence[str] | None = None, confirm_read_only: bool = False,
                      dry_run: bool = False, timeout: float | None = None,
                      allow_open_world: bool = False, server: str | None = None,
                      cancel: threading.Event | None = None, protocol: str = DEFAULT_ERA) -> Scaffold:
    """Scaffold a manifest from the live server at ``target``.

    Args:
        target: the server. tools: restrict candidates to these names (``--tool``).
        confirm_read_only: attest unannotated tools are read-only. dry_run: decide only (no calls).
        allow_open_world: also check tools annotated ``openWorldHint: true`` as candidates.
        timeout: per-request timeout (default: the transport's).
        server: the server's label (``--server``, as ``probe`` takes it): checked before connecting and
            named in the summary line.
        cancel: a ``transport.cancel.CancelScope`` closes the session (and reaps a stdio child) when set.
        protocol: the protocol era (``--protocol``: ``auto``, ``legacy`` or ``2026-07-28``).

    Returns:
        The decisions and (unless ``dry_run``) the validated manifest cases.

    Raises:
        UsageError: an invalid label, or a ``--tool`` name that is missing or not callable
            (``--tool <name>: <reason>``).
        ProbeError: the server declared no tools.
        TransportError: the server could not be reached.
        ProtocolMismatch: the server does not serve the era ``protocol`` names.
    """
    if server is not None and not valid_server(server):
        raise UsageError("server label is invalid")
    check_era(protocol)
    budget = Budget()

    def fresh() -> McpSession:
        opened = McpSession.connect(target, timeout=timeout, budget=budget)
        watch(cancel, opened)
        return opened

    with open_session(fresh, protocol=protocol) as session:
        catalog = session.list_tools()
        if not catalog.tools:
            raise ProbeError("the server declared no tools; there is nothing to scaffold")
        sc = Scaffold(server=server)
        for entry in catalog.tools:
            sc.decisions.append((str(entry["name"]), decide(entry, tools=tools,
                                                            confirm_read_only=confirm_read_only,
                                                            allow_open_world=allow_open_world)))
        for name in tools or ():
            decision = dict(sc.decisions).get(name)
            if decision is None or not decision.startswith("candidate"):
                raise UsageError(f"--tool {name}: {decision or 'not declared by the server'}")
        if dry_run:
            return sc
        _catalog_cases(sc, catalog.tools, dict(session.server_capabilities))
        candidates = [e for e, (_, d) in zip(catalog.tools, sc.decisions, strict=True)
                      if d.startswith("candidate")]
        _tool_cases(sc, session, candidates)
    parse_manifest(sc.manifest, source="scaffolded manifest")
    return sc


def write_manifest(scaffold: Scaffold, path: str | Path, *, force: bool = False) -> Path:
    """Write the scaffolded manifest; refuses to overwrite an existing file unless ``force``.

    Raises:
        UsageError: the file exists and ``force`` is not set, or cannot be written.
    """
    path = Path(path)
    write_new_file(path, scaffold.text(), force=force)
    return path
