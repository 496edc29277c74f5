"""The bounded clients against the real PyPI ``mcp`` SDK server (``MCPServer``) on stdio and HTTP."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpeval_nb.transport import HttpTarget, McpSession, StdioTarget

from .transport_helpers import assert_reaped, child_pid, free_port, listening_process
from .transport_sdk_peer import CANARY

PEER = str(Path(__file__).with_name("transport_sdk_peer.py"))


@pytest.fixture(scope="module")
def sdk_stdio() -> Iterator[McpSession]:
    session = McpSession.connect(StdioTarget((sys.executable, PEER, "stdio")), timeout=120.0)
    try:
        yield session
    finally:
        pid = child_pid(session)
        session.close()
        assert_reaped(pid)


@pytest.fixture(scope="module")
def sdk_http() -> Iterator[McpSession]:
    port = free_port()
    with listening_process([sys.executable, PEER, "http", str(port)], port), \
            McpSession.connect(HttpTarget(f"http://127.0.0.1:{port}/mcp"), timeout=120.0) as session:
        yield session


@pytest.fixture(params=["stdio", "http"])
def sdk(request: pytest.FixtureRequest) -> McpSession:
    session: McpSession = request.getfixturevalue(f"sdk_{request.param}")
    if session.protocol_version is None:
        session.initialize()
    return session


def test_sdk_server_handshake_negotiates_2025_06_18(sdk: McpSession) -> None:
    assert sdk.protocol_version == "2025-06-18"
    assert "tools" in sdk.server_capabilities


def test_sdk_server_catalog_lists_its_tools(sdk: McpSession) -> None:
    catalog = sdk.list_tools()
    assert catalog.names == ["echo", "explode"]
    assert catalog.get("echo") is not None and catalog.get("echo")["inputSchema"]["type"] == "object"


def test_sdk_server_tool_results_and_tool_errors_are_classified(sdk: McpSession) -> None:
    ok = sdk.call_tool("echo", {"text": CANARY})
    failed = sdk.call_tool("explode", {})
    assert ok.kind == "success" and ok.result["content"][0]["text"] == CANARY
    assert (failed.kind, failed.code, failed.payload["code"]) == ("tool-error", -32000, "tool-error")
    assert CANARY not in repr(ok) + repr(failed)


def test_sdk_server_answers_ping_with_an_object(sdk: McpSession) -> None:
    assert sdk.ping().result == {}


def test_sdk_server_refuses_an_unknown_method_with_a_json_rpc_error(sdk: McpSession) -> None:
    response = sdk.request("mcpeval/unknown")
    assert response.error is not None and response.error.code == -32601
