"""What serve's tools are made of: a ``Tool`` row, the context handlers share, their result and refusal.

``table.py`` holds one ``Tool`` per tool (like ``probe.kinds.table``); ``call.py`` runs them.  A handler
returns a ``ToolResult`` built from journal records, index rows and reports; it raises ``MCPEvalError``
(whose text names places and labels) or ``ToolFailure`` for a refusal.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..schemacheck import SchemaChecker
from .rpc import RpcFailure

__all__ = ["Handler", "Tool", "ToolContext", "ToolFailure", "ToolResult"]


@dataclass(frozen=True)
class ToolResult:
    """A tool's answer: text lines for the model, structured data for programs (or None), and the
    content-free counts its audit record carries."""

    text: str
    structured: dict[str, Any] | None = None
    counts: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The MCP ``CallToolResult`` object."""
        result: dict[str, Any] = {"content": [{"type": "text", "text": self.text}]}
        if self.structured is not None:
            result["structuredContent"] = self.structured
        return result


class ToolFailure(RpcFailure):
    """A tool call refused or failed: JSON-RPC -32000 whose message is ``str()`` (the safe text)."""

    def __init__(self, message: str) -> None:
        super().__init__(-32000, message)


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


@dataclass(frozen=True, eq=False)
class Tool:
    """One tool, everything serve knows about it.

    Attributes:
        name: the tool name (SPEC 13.1). description: what ``tools/list`` says it does.
        handler: ``(context, arguments) -> ToolResult``, run after the arguments passed ``input``.
        input: the arguments' JSON Schema (checked with ``schemacheck``: only its keywords).
        output: the ``structuredContent`` JSON Schema (None: the tool declares none).
        spawns: it launches server processes (listed and callable only with ``--allow-spawn``).
        writes: it writes to the capture root; every call of a writing or spawning tool is audited.
    """

    name: str
    description: str
    handler: Handler
    input: dict[str, Any]
    output: dict[str, Any] | None = None
    spawns: bool = False
    writes: bool = False

    @property
    def audited(self) -> bool:
        """Every call goes to ``audit.jsonl`` (docs/governance.md)."""
        return self.spawns or self.writes

    @functools.cached_property
    def checker(self) -> SchemaChecker:
        """The checker of ``input``."""
        return SchemaChecker(self.input)

    def listing(self) -> dict[str, Any]:
        """The ``tools/list`` entry."""
        entry: dict[str, Any] = {"name": self.name, "description": self.description,
                                 "inputSchema": self.input}
        if self.output is not None:
            entry["outputSchema"] = self.output
        return entry
