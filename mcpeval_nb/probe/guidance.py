"""``mcpeval-nb guidance``: what a client learns at discovery against what the server then does.

One connection in the run's era (``--protocol``): the discovery facts (the era and version, the
instructions' length and how many listed tools they name, the declared capabilities, the server info,
the tool count and the catalog's cost in tokens), then what the server does when asked, as findings with
a label and a count, never text:

- ``instructions-unlisted-tools``: names in the instructions that look like tool names (snake_case or
  in backticks, within the tool-name grammar) but are not in the catalog;
- ``tools-without-capability`` / ``resources-without-capability`` / ``prompts-without-capability``: a
  surface listed though its capability was not declared;
- ``declared-surface-refused``: a declared resources or prompts capability whose list is refused;
- ``task-tools-undeclared``: tools that declare task support (``execution.taskSupport``) from a server
  that did not declare tasks (2025-11-25 ``capabilities.tasks``; 2026-07-28 the tasks extension);
- ``param-headers-invalid``: tools whose ``x-mcp-header`` declaration breaks the 2026-07-28 rules (an HTTP
  client of that revision, this one included, drops them from the catalog);
- ``list-changed-undeclared``: list-change notifications the server sends, or (2026-07-28) agrees to send
  on ``subscriptions/listen``, without declaring ``listChanged`` for that list;
- ``server-info-missing``: no server name and version.

No tool is called.  Nothing the server sends is kept: the instructions are reduced to counts here and
dropped.  Exit 1 when there is a finding, 0 without, 3 when the server could not be reached.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..errors import TransportError
from ..junit import JUnitCase, JUnitSuite, render_junit
from ..privacy.grammar import valid_tool
from ..transport.era import TASKS_EXTENSION, Negotiated
from ..transport.headers import param_headers
from ..transport.messages import Catalog, Target
from ..transport.session import McpSession
from .context import ProbeOptions
from .eras import DEFAULT_ERA
from .plan import Work, open_run, plan_run
from .readiness.observations import tool_tokens
from .render import Format, FormatSet, json_text, lines_text, render

__all__ = ["FINDINGS", "GUIDANCE_SCHEMA", "Guidance", "guidance"]

GUIDANCE_SCHEMA = "mcpeval-nb.guidance/v1"
#: Every finding label with its fixed hint.
FINDINGS: dict[str, str] = {
    "instructions-unlisted-tools": "The instructions name tools the server does not list; list them or "
                                   "fix the instructions.",
    "tools-without-capability": "Declare the tools capability when listing tools.",
    "resources-without-capability": "Declare the resources capability when listing resources.",
    "prompts-without-capability": "Declare the prompts capability when listing prompts.",
    "declared-surface-refused": "A declared resources or prompts capability must answer its list.",
    "task-tools-undeclared": "Declare tasks (or the tasks extension) before marking tools task-capable.",
    "param-headers-invalid": "Fix the tools' x-mcp-header declarations: 2026-07-28 HTTP clients drop them.",
    "list-changed-undeclared": "Declare listChanged for a list whose change notifications you send.",
    "server-info-missing": "Identify the server: a name and a version in serverInfo.",
}
_BACKTICKED = re.compile(r"`([^`\s]{1,128})`")
_SNAKE = re.compile(r"(?<![A-Za-z0-9_.-])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![A-Za-z0-9_-])")
_LISTS = {"tools": "notifications/tools/list_changed", "resources": "notifications/resources/list_changed",
          "prompts": "notifications/prompts/list_changed"}
_FILTERS = {"tools": "toolsListChanged", "resources": "resourcesListChanged", "prompts": "promptsListChanged"}


def instruction_names(text: str) -> set[str]:
    """The tool-like names an instruction text mentions: backticked or snake_case, in the tool grammar."""
    found = set(_BACKTICKED.findall(text)) | set(_SNAKE.findall(text))
    return {name for name in found if valid_tool(name)}


@dataclass(frozen=True)
class Guidance:
    """Discovery facts and the findings (labels and counts only).

    Attributes:
        server: the label. protocol: the era and version spoken.
        facts: ``instructions_chars``, ``instructions_tool_mentions``, ``tools``, ``catalog_tokens``,
            ``extensions`` (counts) and ``server_info`` (0/1).
        capabilities: the declared top-level capability names, sorted.
        findings: (label, count) for each finding, in ``FINDINGS`` order.
    """

    FORMATS: ClassVar[FormatSet[Guidance]] = FormatSet(
        (Format("text", lambda g, _: g.render_text()), Format("markdown", lambda g, _: g.render_markdown()),
         Format("json", lambda g, _: json_text(g.to_json())),
         Format("junit", lambda g, _: render_junit(g.junit_suites(), name="mcpeval-nb guidance"))),
        unknown="unknown guidance format; use one of text, markdown, json, junit")

    server: str
    protocol: Negotiated | None
    facts: dict[str, int] = field(default_factory=dict)
    capabilities: tuple[str, ...] = ()
    findings: tuple[tuple[str, int], ...] = ()

    @property
    def exit_code(self) -> int:
        """1 when there is a finding, else 0."""
        return 1 if self.findings else 0

    def to_json(self) -> dict[str, Any]:
        """``mcpeval-nb.guidance/v1`` (sorted keys)."""
        return {"capabilities": list(self.capabilities), "facts": dict(sorted(self.facts.items())),
                "findings": [{"count": n, "hint": FINDINGS[label], "label": label}
                             for label, n in self.findings],
                "protocol": None if self.protocol is None else self.protocol.to_json(),
                "schema": GUIDANCE_SCHEMA, "server": self.server}

    def render(self, fmt: str = "text") -> str:
        """Render in one of text, markdown, json, junit.

        Raises:
            UsageError: an unknown format.
        """
        return render(self, fmt)

    def _head(self) -> str:
        era = "-" if self.protocol is None else f"{self.protocol.version} era={self.protocol.era}"
        f = self.facts
        return (f"{self.server} guidance protocol={era} tools={f.get('tools', 0)} "
                f"catalog_tokens={f.get('catalog_tokens', 0)} "
                f"instructions={f.get('instructions_chars', 0)} chars "
                f"naming {f.get('instructions_tool_mentions', 0)} listed tools "
                f"capabilities={','.join(self.capabilities) or 'none'}")

    def render_text(self) -> str:
        """The facts line, one line per finding (and its hint), then the count."""
        lines = [self._head()]
        for label, count in self.findings:
            lines += [f"  finding {label} count={count}", f"    hint: {FINDINGS[label]}"]
        lines.append(f"{self.server} guidance: {len(self.findings)} finding(s)")
        return lines_text(lines)

    def render_markdown(self) -> str:
        """The facts, then a table of findings."""
        out = [f"# Guidance: {self.server}", "", self._head().split(" guidance ", 1)[1], ""]
        if self.findings:
            out += ["| finding | count | hint |", "| --- | --- | --- |"]
            out += [f"| {label} | {count} | {FINDINGS[label]} |" for label, count in self.findings]
        else:
            out.append("No findings.")
        return "\n".join(out) + "\n"

    def junit_suites(self) -> tuple[JUnitSuite, ...]:
        """One case per finding label: a failure with its count when found."""
        counts = dict(self.findings)
        cases = tuple(JUnitCase(label, f"mcpeval.{self.server}.guidance",
                                "failure" if label in counts else "passed",
                                message=f"count={counts[label]}" if label in counts else None,
                                type=label if label in counts else None,
                                text=FINDINGS[label] if label in counts else None) for label in FINDINGS)
        return (JUnitSuite(f"mcpeval guidance {self.server}", cases),)


def _listed(session: McpSession, surface: str) -> bool | None:
    """True when ``<surface>/list`` answered a list, False when refused, None on a transport failure."""
    try:
        response = session.request(f"{surface}/list")
    except TransportError:
        return None
    result = response.result
    return response.error is None and isinstance(result, dict) and isinstance(result.get(surface), list)


def _declares_tasks(caps: dict[str, Any], modern: bool) -> bool:
    if modern:
        extensions = caps.get("extensions")
        return isinstance(extensions, dict) and TASKS_EXTENSION in extensions
    return isinstance(caps.get("tasks"), dict)


def _task_tools(catalog: Catalog) -> int:
    def supports(entry: dict[str, Any]) -> bool:
        execution = entry.get("execution")
        return isinstance(execution, dict) and execution.get("taskSupport") in ("optional", "required")
    return sum(supports(e) for e in catalog.tools)


def _list_changed(caps: dict[str, Any], surface: str) -> bool:
    declared = caps.get(surface)
    return isinstance(declared, dict) and declared.get("listChanged") is True


def _undeclared_changes(session: McpSession, caps: dict[str, Any]) -> int:
    """Legacy: list-change notifications already seen; modern: what ``subscriptions/listen`` agrees to."""
    if not session.modern:
        methods = {n.get("method") for n in session.notifications}
        return sum(_LISTS[s] in methods and not _list_changed(caps, s) for s in _LISTS)
    subscription = session.listen({flag: True for flag in _FILTERS.values()}, timeout=session.timeout)
    if subscription is None:
        return 0
    ack = next((n for n in session.notifications if subscription.acknowledges(n)), None)
    subscription.close()
    params = ack.get("params") if isinstance(ack, dict) else None
    agreed = params.get("notifications") if isinstance(params, dict) else None
    agreed = agreed if isinstance(agreed, dict) else {}
    return sum(agreed.get(_FILTERS[s]) is True and not _list_changed(caps, s) for s in _FILTERS)


def _surface_findings(session: McpSession, caps: dict[str, Any], catalog: Catalog) -> dict[str, int]:
    found: dict[str, int] = {}
    if catalog.tools and not isinstance(caps.get("tools"), dict):
        found["tools-without-capability"] = 1
    refused = 0
    for surface in ("resources", "prompts"):
        answered = _listed(session, surface)
        declared = isinstance(caps.get(surface), dict)
        if answered and not declared:
            found[f"{surface}-without-capability"] = 1
        refused += bool(declared and answered is False)
    if refused:
        found["declared-surface-refused"] = refused
    return found


def _examine(session: McpSession, catalog: Catalog) -> tuple[dict[str, int], dict[str, int]]:
    caps = dict(session.server_capabilities)
    names = instruction_names(session.instructions or "")
    listed = set(catalog.names)
    facts = {"instructions_chars": len(session.instructions or ""),
             "instructions_tool_mentions": len(names & listed), "tools": len(catalog.tools),
             "catalog_tokens": sum(tool_tokens(e) for e in catalog.tools),
             "extensions": len(caps["extensions"]) if isinstance(caps.get("extensions"), dict) else 0,
             "server_info": int(isinstance(session.server_info.get("name"), str)
                                and isinstance(session.server_info.get("version"), str))}
    found = {"instructions-unlisted-tools": len(names - listed)}
    found |= _surface_findings(session, caps, catalog)
    if not _declares_tasks(caps, session.modern):
        found["task-tools-undeclared"] = _task_tools(catalog)
    found["param-headers-invalid"] = (sum(param_headers(e.get("inputSchema")) is None for e in catalog.tools)
                                      + len(catalog.excluded))
    found["list-changed-undeclared"] = _undeclared_changes(session, caps)
    found["server-info-missing"] = 1 - facts["server_info"]
    return facts, found


def guidance(target: Target, *, server: str, protocol: str = DEFAULT_ERA,
             cancel: threading.Event | None = None) -> Guidance:
    """Discovery facts and coherence findings for one server (no tool is called).

    Args:
        target: the server. server: its label. protocol: ``--protocol`` (``auto``, ``legacy``,
            ``2026-07-28``). cancel: set to stop (a ``CancelScope`` closes the session).

    Returns:
        The guidance (``exit_code`` 1 when there is a finding).

    Raises:
        UsageError: an invalid label or protocol. ProtocolMismatch: the server does not serve that era.
        TransportError: the server could not be reached or listed.
    """
    options = ProbeOptions(server=server, journal=False, battery=None, history=False, protocol=protocol)
    ctx = open_run(plan_run(target, options=options, work=lambda: Work[None]()), cancel=cancel)
    with ctx.connect() as session:
        catalog = session.list_tools()
        facts, found = _examine(session, catalog)
        caps = tuple(sorted(k for k, v in session.server_capabilities.items() if isinstance(v, dict)))
    findings = tuple((label, found[label]) for label in FINDINGS if found.get(label, 0) > 0)
    return Guidance(server, ctx.negotiated, facts, caps, findings)
