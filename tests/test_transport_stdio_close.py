"""Closing a stdio session follows MCP's stdio shutdown: the server's input ends first, SIGTERM only when
it has not exited, SIGKILL only after that.  A server run through the stdio shim therefore exits on its
own, after its recorder has drained (a SIGKILL of the process group used to cut that drain short)."""

from __future__ import annotations

import signal
from pathlib import Path

from mcpeval_nb.transport import McpSession, StdioTarget
from tests.shim_helpers import journal, shim_argv
from tests.transport_helpers import fixture_argv


def _session(argv: list[str]) -> McpSession:
    return McpSession.connect(StdioTarget(tuple(argv)), timeout=120.0)


def test_a_server_that_exits_at_end_of_input_is_never_signalled() -> None:
    session = _session(fixture_argv("echo"))
    session.request("tools/list", {})
    session.close()
    assert session._channel.returncode == 0  # type: ignore[attr-defined]  # its own exit, no signal


def test_a_server_that_ignores_end_of_input_gets_sigterm() -> None:
    session = _session(fixture_argv("echo", "--ignore-eof"))
    session.request("tools/list", {})
    session.close()
    assert session._channel.returncode == -signal.SIGTERM  # type: ignore[attr-defined]


def test_every_call_of_a_session_through_the_stdio_shim_is_journaled_when_it_closes(root: Path) -> None:
    session = _session(shim_argv())
    for _ in range(200):
        session.request("tools/call", {"name": "navigate", "arguments": {"waitUntil": "commit"}})
    session.close()
    assert session._channel.returncode == 0  # type: ignore[attr-defined]  # the shim exited on its own
    calls = [r for r in journal(root) if r.get("method") == "tools/call"]
    assert len(calls) == 200 and all(r["outcome"] == "ok" for r in calls)
