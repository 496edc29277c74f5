"""serve's one call path: ``tools/list`` and ``tools/call`` over the tool table (``table.py``).

``tool_list`` is what ``tools/list`` answers (the table's order; the process-launching tools only with
``--allow-spawn``).  ``call_tool`` is the one way a tool runs: it refuses a disabled spawn tool with
SPEC's message, checks the arguments against the tool's input schema (messages name the argument and
the rule, never the value), runs the handler, and sends every writing or spawning call through
``_after_tool``.  ``ToolTable`` is the tool table as the protocol layer's ``rpc.Backend``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import UsageError, describe
from ..governance import audit
from ..privacy.grammar import valid_identifier, valid_tool
from .base import Tool, ToolContext, ToolFailure
from .rpc import server_info

__all__ = ["ToolTable", "call_tool", "disabled_message", "tool_list"]


def disabled_message(name: str) -> str:
    """SPEC 13.1's text for a spawn tool called without ``--allow-spawn``."""
    return (f"{name} launches server processes and is disabled; restart `mcpeval serve` with "
            "--allow-spawn to enable it")


def _argument_error(tool: Tool, arguments: Any) -> str | None:
    name = tool.name
    if not isinstance(arguments, dict):
        return f"{name}: arguments must be an object"
    violation = next(tool.checker.iter_errors(arguments), None)
    if violation is None:
        return None
    declared = tool.input["properties"]
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


def _after_tool(ctx: ToolContext, tool: Tool, outcome: str, counts: Mapping[str, int]) -> None:
    """Every writing or spawning tool call ends here, in the audit log (docs/governance.md): a spawn
    tool as ``spawn``, a writing tool as itself (``record_annotation``), the tool's name as a label;
    ``outcome`` is ``ok``, ``refused`` or ``failed``, ``counts`` content-free.  Writing the record never
    fails the call (``audit.record`` prints one warning line instead)."""
    audit.record(ctx.root, action="spawn" if tool.spawns else tool.name,
                 outcome="done" if outcome == "ok" else outcome,
                 reason=None if outcome == "ok" else f"serve-{outcome}",
                 labels={"tool": tool.name}, counts={k: v for k, v in counts.items() if isinstance(v, int)})


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
    problem = _argument_error(tool, {} if arguments is None else arguments)
    if problem is not None:
        if tool.audited:
            _after_tool(ctx, tool, "refused", {})
        raise ToolFailure(problem)
    try:
        result = tool.handler(ctx, dict(arguments or {}))
    except Exception as exc:
        if tool.audited:
            _after_tool(ctx, tool, "refused" if isinstance(exc, UsageError) else "failed", {})
        raise ToolFailure(str(exc) if isinstance(exc, ToolFailure) else describe(exc)) from None
    if tool.audited:
        _after_tool(ctx, tool, "ok", result.counts)
    return result.to_json()


class ToolTable:
    """serve's tools as the protocol layer's backend (``rpc.Backend``): its table and shared context.

    Args:
        tools: the tool table. ctx: the handlers' shared context.
    """

    def __init__(self, tools: tuple[Tool, ...], ctx: ToolContext) -> None:
        self.tools, self.ctx = tools, ctx

    def server_info(self) -> dict[str, str]:
        """``mcpeval-nb`` and the package version."""
        return server_info()

    def list_tools(self) -> list[dict[str, Any]]:
        """``tool_list`` of the table."""
        return tool_list(self.tools, allow_spawn=self.ctx.allow_spawn)

    def call_tool(self, name: Any, arguments: Any) -> dict[str, Any]:
        """``call_tool`` on the table (``ToolFailure`` is the backend's ``RpcFailure``)."""
        return call_tool(self.tools, self.ctx, name, arguments)
