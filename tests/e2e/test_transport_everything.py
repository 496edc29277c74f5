"""The bounded clients against npm ``@modelcontextprotocol/server-everything`` (stdio and Streamable HTTP)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcpeval_nb.transport import HttpTarget, McpSession, StdioTarget

from ..transport_helpers import assert_reaped, child_pid, free_port, listening_process
from .conftest import everything_command

pytestmark = pytest.mark.e2e
CANARY = "CANARY-everything-e2e-62b0"


@pytest.fixture(scope="module")
def everything_stdio_session() -> Iterator[McpSession]:
    session = McpSession.connect(StdioTarget(tuple(everything_command("stdio"))), timeout=120.0)
    try:
        yield session
    finally:
        pid = child_pid(session)
        session.close()
        assert_reaped(pid)


@pytest.fixture(scope="module")
def everything_http_session() -> Iterator[McpSession]:
    port = free_port()
    with listening_process(everything_command("streamableHttp"), port, {"PORT": str(port)}), \
            McpSession.connect(HttpTarget(f"http://127.0.0.1:{port}/mcp"), timeout=120.0) as session:
        yield session


@pytest.fixture(params=["stdio", "http"])
def everything(request: pytest.FixtureRequest) -> McpSession:
    session: McpSession = request.getfixturevalue(f"everything_{request.param}_session")
    if session.protocol_version is None:
        session.initialize()
    return session


def test_everything_handshake_negotiates_2025_06_18_and_declares_tools(everything: McpSession) -> None:
    assert everything.protocol_version == "2025-06-18"
    assert "tools" in everything.server_capabilities


def test_everything_catalog_lists_thirteen_unique_tools(everything: McpSession) -> None:
    catalog = everything.list_tools()
    assert len(catalog.tools) == 13 and len(set(catalog.names)) == 13
    assert {"echo", "get-sum"} <= set(catalog.names)


def test_everything_tool_calls_succeed_and_unknown_tools_are_tool_errors(everything: McpSession) -> None:
    echo = everything.call_tool("echo", {"message": CANARY})
    total = everything.call_tool("get-sum", {"a": 2, "b": 3})
    unknown = everything.call_tool("mcpeval-unknown-tool", {})
    assert echo.ok and CANARY in echo.result["content"][0]["text"]
    assert total.ok and "5" in total.result["content"][0]["text"]
    assert unknown.kind in ("tool-error", "rpc-error")
    assert CANARY not in repr(echo) + repr(unknown)


def test_everything_answers_ping(everything: McpSession) -> None:
    assert everything.ping().result == {}


def test_everything_progress_notifications_are_buffered_during_a_long_call(everything: McpSession) -> None:
    params = {"name": "trigger-long-running-operation", "arguments": {"duration": 0.3, "steps": 3},
              "_meta": {"progressToken": "p1"}}
    response = everything.request("tools/call", params)
    assert response.ok
    assert [n["method"] for n in everything.notifications].count("notifications/progress") == 3
