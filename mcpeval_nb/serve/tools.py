"""serve's tool table: names, descriptions, schemas, handlers, the spawn gate, and the one call path.

``tool_list`` is what ``tools/list`` answers (SPEC 13.1 order; the process-launching tools only with
``--allow-spawn``).  ``call_tool`` is the one way a tool runs: it refuses a disabled spawn tool with
SPEC's message, checks the arguments against the tool's input schema (messages name the argument and
the rule, never the value), runs the handler, and sends every writing or spawning call through
``_after_tool``.  A handler returns a ``ToolResult`` built from journal records, index rows and
reports; it raises ``MCPEvalError`` (whose text names places and labels) for a refusal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError, describe
from ..governance import audit
from ..privacy.grammar import valid_identifier, valid_tool
from ..schemacheck import SchemaChecker
from .schemas import INPUTS, OUTPUTS

__all__ = ["SPAWN_TOOLS", "Tool", "ToolContext", "ToolFailure", "ToolResult", "call_tool", "tool_list"]

#: The tools that launch server processes (listed and callable only with ``--allow-spawn``).
SPAWN_TOOLS = ("run_probe", "scaffold", "score", "verify_finding")
#: The tools that write to the capture root or start processes: each call goes through ``_after_tool``.
ACTION_TOOLS = (*SPAWN_TOOLS, "record_annotation")


@dataclass(frozen=True)
class ToolResult:
    """A tool's answer: text lines for the model, structured data for programs (or None)."""

    text: str
    structured: dict[str, Any] | None = None
    counts: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The MCP ``CallToolResult`` object."""
        result: dict[str, Any] = {"content": [{"type": "text", "text": self.text}]}
        if self.structured is not None:
            result["structuredContent"] = self.structured
        return result


class ToolFailure(Exception):
    """A tool call refused or failed; ``str()`` is the safe JSON-RPC error message."""


@dataclass
class ToolContext:
    """What the handlers share: the capture root, whether spawning is allowed, and the spawn slot.

    Attributes:
        root: the resolved capture root.
        allow_spawn: ``--allow-spawn`` was given.
        slot: the spawn slot (``spawn_tools.SpawnSlot``): one run at a time, cancelled on stop.
    """

    root: Path
    allow_spawn: bool
    slot: Any = None


Handler = Callable[[ToolContext, dict[str, Any]], ToolResult]


@dataclass(frozen=True)
class Tool:
    """One tool: its name, description, handler, and schemas (from ``schemas.py``)."""

    name: str
    description: str
    handler: Handler

    @property
    def spawns(self) -> bool:
        """The tool launches server processes."""
        return self.name in SPAWN_TOOLS

    def listing(self) -> dict[str, Any]:
        """The ``tools/list`` entry."""
        entry: dict[str, Any] = {"name": self.name, "description": self.description,
                                 "inputSchema": INPUTS[self.name]}
        if self.name in OUTPUTS:
            entry["outputSchema"] = OUTPUTS[self.name]
        return entry


_CHECKERS = {name: SchemaChecker(schema) for name, schema in INPUTS.items()}


def disabled_message(name: str) -> str:
    """SPEC 13.1's text for a spawn tool called without ``--allow-spawn``."""
    return (f"{name} launches server processes and is disabled; restart `mcpeval serve` with "
            "--allow-spawn to enable it")


def _argument_error(name: str, arguments: Any) -> str | None:
    if not isinstance(arguments, dict):
        return f"{name}: arguments must be an object"
    violation = next(_CHECKERS[name].iter_errors(arguments), None)
    if violation is None:
        return None
    declared = INPUTS[name]["properties"]
    if violation.validator == "additionalProperties":
        return f"{name}: unknown argument (accepted: {', '.join(declared) or 'none'})"
    if violation.validator == "required":
        missing = [k for k in violation.validator_value if k not in arguments]
        return f"{name}: missing required argument {', '.join(missing)}"
    where = ".".join(str(p) for p in violation.path if isinstance(p, int) or valid_identifier(p))
    return f"{name}: argument {where or '(root)'} is invalid ({violation.validator})"


def tool_list(tools: tuple[Tool, ...], *, allow_spawn: bool) -> list[dict[str, Any]]:
    """The ``tools/list`` entries, in table order, spawn tools only when allowed."""
    return [t.listing() for t in tools if allow_spawn or not t.spawns]


def _after_tool(ctx: ToolContext, tool: str, outcome: str, counts: Mapping[str, int]) -> None:
    """Every writing or spawning tool call ends here, in the audit log (docs/governance.md):
    ``record_annotation`` as itself, the spawn tools as ``spawn`` with the tool's name as a label;
    ``outcome`` is ``ok``, ``refused`` or ``failed``, ``counts`` content-free.  Writing the record never
    fails the call (``audit.record`` prints one warning line instead)."""
    action = "record_annotation" if tool == "record_annotation" else "spawn"
    audit.record(ctx.root, action=action, outcome="done" if outcome == "ok" else outcome,
                 reason=None if outcome == "ok" else f"serve-{outcome}",
                 labels={"tool": tool}, counts={k: v for k, v in counts.items() if isinstance(v, int)})


def call_tool(tools: tuple[Tool, ...], ctx: ToolContext, name: Any, arguments: Any) -> dict[str, Any]:
    """Run one ``tools/call`` and return its result object.

    Raises:
        ToolFailure: an unknown or disabled tool, invalid arguments, or a refusal or failure of the tool
            (the message is ``errors.describe``'s safe text).
    """
    tool = next((t for t in tools if t.name == name), None) if isinstance(name, str) else None
    if tool is None:
        shown = f" {name}" if isinstance(name, str) and valid_tool(name) else ""
        raise ToolFailure(f"unknown tool{shown}")
    if tool.spawns and not ctx.allow_spawn:
        raise ToolFailure(disabled_message(tool.name))
    problem = _argument_error(tool.name, {} if arguments is None else arguments)
    action = tool.name in ACTION_TOOLS
    if problem is not None:
        if action:
            _after_tool(ctx, tool.name, "refused", {})
        raise ToolFailure(problem)
    try:
        result = tool.handler(ctx, dict(arguments or {}))
    except Exception as exc:
        if action:
            _after_tool(ctx, tool.name, "refused" if isinstance(exc, UsageError) else "failed", {})
        raise ToolFailure(str(exc) if isinstance(exc, ToolFailure) else describe(exc)) from None
    if action:
        _after_tool(ctx, tool.name, "ok", result.counts)
    return result.to_json()
