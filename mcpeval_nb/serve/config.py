"""serve's options and the resolved configuration ``--print-config`` prints (like mcpd's ``config``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..governance.retention import configured_retention
from ..root import Root, RootLike
from ..root.layout import salt_path
from ..transport.policy import check_listen_address
from .table import SPAWN_TOOLS, TOOLS

__all__ = ["LOOPBACK_MESSAGE", "ServeConfig", "ServeOptions", "serve_config"]

LOOPBACK_MESSAGE = "findings servers must use a loopback address"
#: How ``--print-config`` names where the root came from (``Root.source``).
_SOURCES = {"flag": "--root", "MCPEVAL_HOME": "$MCPEVAL_HOME", "default": "default"}


@dataclass(frozen=True, kw_only=True)
class ServeOptions:
    """Options of one ``serve`` process.

    Attributes:
        listen: the loopback socket address (``127.0.0.1:0`` lets the OS pick a port).
        allow_spawn: list and allow the process-launching tools (``run_probe``, ``scaffold``, ``score``,
            ``verify_finding``).
        root: the capture root (default ``$MCPEVAL_HOME``, else ``~/.mcp-eval``).
        timeout_s: the request-read deadline (SPEC 13.1: 5 s).
    """

    listen: str
    allow_spawn: bool = False
    root: RootLike = None
    timeout_s: float = 5.0


@dataclass(frozen=True)
class ServeConfig:
    """The resolved configuration: where serve listens, which root and salt, which tools and why.

    Attributes:
        ip / port: the checked listen address (port 0: chosen when bound).
        root: the capture root; root_source: ``--root``, ``$MCPEVAL_HOME`` or ``default``.
        salt: the fingerprint salt's path (a secret: never share it).
        tools: the tools listed, in order; allow_spawn: whether the spawn tools are among them.
        retention_days: ``config.json``'s ``retention_days`` (None: unset), applied once at start and
            then hourly on its own thread (docs/governance.md).
    """

    ip: str
    port: int
    root: Path
    root_source: str
    salt: Path
    tools: tuple[str, ...]
    allow_spawn: bool
    retention_days: int | None = None

    def lines(self) -> list[str]:
        """What ``mcpeval-nb serve --print-config`` prints."""
        host = f"[{self.ip}]" if ":" in self.ip else self.ip
        spawn = ", ".join(SPAWN_TOOLS)
        why = (f"spawn tools enabled by --allow-spawn: {spawn} (never mutation, never remote HTTP, one run "
               "at a time)" if self.allow_spawn else
               f"spawn tools disabled: {spawn} (they launch server processes; pass --allow-spawn)")
        return [f"listen {host}:{self.port}",
                f"root {self.root} (from {self.root_source})",
                f"salt {self.salt} (the fingerprint secret: never share or commit it)",
                f"tools {', '.join(self.tools)}",
                why,
                (f"retention {self.retention_days} day(s) from config.json: applied at start, then hourly"
                 if self.retention_days is not None else "retention unset: nothing is ever deleted")]


def serve_config(options: ServeOptions) -> ServeConfig:
    """Check the options and resolve the configuration; nothing is bound, created or written.

    Raises:
        UsageError: the listen address is not a loopback socket address.
        JournalError: the capture root is unusable.
    """
    ip, port = check_listen_address(options.listen, what="serve", loopback_message=LOOPBACK_MESSAGE)
    home = Root.of(options.root)
    root, source = home.path, _SOURCES[home.source]
    tools = tuple(t.name for t in TOOLS if options.allow_spawn or not t.spawns)
    return ServeConfig(ip, port, root, source, salt_path(root), tools, options.allow_spawn,
                       configured_retention(root)[0])
