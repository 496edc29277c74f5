"""The demo's capture step: real MCP servers behind the real recording shim, driven by a scripted client.

Each server runs as ``mcpeval-nb shim --server <label> --root <root> -- <server command>``; the client
is the package's bounded MCP session (``McpSession``) over that shim's stdio, so every frame crosses the
real shim, correlator, privacy boundary and journal writer.  The script mixes successes, tool errors
(``isError`` results), protocol errors (an unknown method, an unknown tool, invalid arguments) and a
notification, then annotates one failed call the way a reviewer would.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpeval_nb import StdioTarget, TransportError, annotate, open_store
from mcpeval_nb.transport import McpSession

__all__ = ["CaptureSummary", "capture_sessions"]

Say = Callable[[str], None]
_SDK_DEMO = Path(__file__).resolve().parent.parent / "testing" / "servers" / "sdk_demo.py"


@dataclass(frozen=True)
class CaptureSummary:
    """What the scripted sessions did: tool calls made per server and the annotations written."""

    calls: dict[str, int]
    annotations: int


def _shim(root: Path, label: str, server: list[str]) -> StdioTarget:
    argv = [sys.executable, "-m", "mcpeval_nb", "shim", "--server", label, "--root", str(root), "--", *server]
    return StdioTarget(tuple(argv))


def _demo_script(session: McpSession) -> int:
    """Calls against the SDK demo server: (tool, arguments) pairs, repeated for a latency spread."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for i in range(12):
        calls.append(("navigate", {"url": f"https://docs.example.com/guide/{i}", "waitUntil": "commit"}))
        calls.append(("echo", {"text": f"hello number {i}"}))
        if i % 3 == 0:
            calls.append(("navigate", {"url": "https://shop.example.org/cart", "waitUntil": "networkIdle"}))
            calls.append(("big", {"size": 2000 + 1000 * i}))
        if i % 4 == 0:
            calls.append(("fail", {"message": f"order {1000 + i} could not be found"}))
            calls.append(("notify", {"message": f"progress {i}"}))
    calls.append(("navigate", {"url": "https://docs.example.com", "waitUntil": "sometime"}))  # invalid enum
    calls.append(("missing_tool", {"anything": 1}))  # unknown tool
    for tool, arguments in calls:
        session.call_tool(tool, arguments)
    session.request("demo/no-such-method", {})  # a protocol error: method not found
    return len(calls)


def _time_script(session: McpSession) -> int:
    calls: list[tuple[str, dict[str, Any]]] = []
    for zone in ("Europe/Paris", "America/New_York", "Asia/Tokyo", "UTC"):
        calls.append(("get_current_time", {"timezone": zone}))
    calls.append(("convert_time", {"source_timezone": "Europe/Paris", "time": "09:30",
                                   "target_timezone": "Asia/Tokyo"}))
    calls.append(("get_current_time", {"timezone": "Mars/Olympus_Mons"}))  # a tool error
    calls.append(("convert_time", {"source_timezone": "UTC", "time": "25:99", "target_timezone": "UTC"}))
    for tool, arguments in calls:
        session.call_tool(tool, arguments)
    return len(calls)


def _run(target: StdioTarget, script: Callable[[McpSession], int]) -> int:
    with McpSession.connect(target, timeout=60.0) as session:
        session.initialize(capabilities={})
        session.list_tools()
        return script(session)


def _annotate_first_error(root: Path) -> int:
    calls = open_store(root).calls.to_pylist()
    failed = [c for c in calls if c["outcome"] == "error" and c["tool"] == "fail"]
    if not failed:
        return 0
    first = failed[0]
    annotate(first["session"], int(first["seq"]), "workaround", "agent retried with another order id",
             root=root)
    return 1


def capture_sessions(root: Path, *, say: Say, time_server: bool = True) -> CaptureSummary:
    """Record scripted sessions with the SDK demo server and (when installed) ``mcp-server-time``.

    Args:
        root: the capture root to write.
        say: progress lines (stderr in the terminal).
        time_server: also record a session with ``mcp-server-time`` (when installed).

    Returns:
        Calls made per server label and annotations written.

    Raises:
        TransportError: a server or the shim failed to start or answer.
    """
    made: dict[str, int] = {}
    say("capture: SDK demo server behind the stdio shim")
    made["demo"] = _run(_shim(root, "demo", [sys.executable, str(_SDK_DEMO)]), _demo_script)
    if not time_server:
        pass
    elif importlib.util.find_spec("mcp_server_time") is None:  # installed with the test extra
        say("capture: mcp-server-time not installed, skipped")
    else:
        say("capture: mcp-server-time behind the stdio shim")
        try:
            made["time"] = _run(_shim(root, "time", [sys.executable, "-m", "mcp_server_time",
                                                     "--local-timezone", "UTC"]), _time_script)
        except TransportError as exc:
            say(f"capture: mcp-server-time failed ({exc.reason}), skipped")
    return CaptureSummary(calls=made, annotations=_annotate_first_error(root))
