"""serve on both protocol eras: server/discover, stateless 2026-07-28 requests and their header checks,
results with resultType and cache hints, the 2025 handshake unchanged, the spawn gate in every era, and
the official SDK client (legacy, auto, 2026-07-28) and this package's own client against it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mcpeval_nb as me
from mcpeval_nb.transport import HttpTarget, McpSession
from mcpeval_nb.transport.negotiate import open_session
from tests.processes import stop
from tests.serve_support import request, sdk, serving

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[me.FindingsServer]:
    with serving(tmp_path_factory.mktemp("serve-eras") / "root") as running:
        yield running


def _modern(server: me.FindingsServer, method: str, *, meta: dict[str, Any] | None = None,
            headers: dict[str, str | None] | None = None, **params: Any) -> tuple[int, dict[str, Any]]:
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": method,
                       "params": {**params, "_meta": META if meta is None else meta}}).encode()
    base: dict[str, str | None] = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if method == "tools/call":
        base["Mcp-Name"] = params.get("name")
    status, _, raw = request(server.address, body, headers={**base, **(headers or {})})
    return status, json.loads(raw)


def test_discover_names_both_eras_with_cache_hints(server: me.FindingsServer) -> None:
    status, answer = _modern(server, "server/discover")
    result = answer["result"]
    assert status == 200 and result["supportedVersions"] == [MODERN, "2025-06-18"]
    assert result["resultType"] == "complete" and result["capabilities"] == {"tools": {}}
    assert result["ttlMs"] > 0 and result["cacheScope"] == "public"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcpeval-nb"


def test_modern_tools_list_and_call_carry_result_type(server: me.FindingsServer) -> None:
    _, listed = _modern(server, "tools/list")
    assert listed["result"]["resultType"] == "complete" and "ttlMs" in listed["result"]
    assert listed["result"]["tools"][0]["name"] == "list_findings"
    _, called = _modern(server, "tools/call", name="get_readiness_trends", arguments={})
    assert called["result"]["resultType"] == "complete" and called["result"]["content"]


@pytest.mark.parametrize(("headers", "why"), [
    ({"Mcp-Method": None}, "Mcp-Method"), ({"Mcp-Method": "tools/list"}, "Mcp-Method"),
    ({"MCP-Protocol-Version": None}, "MCP-Protocol-Version"), ({"Mcp-Name": "list_findings"}, "Mcp-Name"),
    ({"Mcp-Name": None}, "Mcp-Name")])
def test_a_header_that_is_missing_or_disagrees_with_the_body_is_refused(server: me.FindingsServer,
                                                                       headers: dict[str, str | None],
                                                                       why: str) -> None:
    status, answer = _modern(server, "tools/call", headers=headers, name="get_readiness_trends", arguments={})
    assert status == 400 and answer["error"]["code"] == -32020 and why in answer["error"]["message"]


def test_a_base64_encoded_name_header_is_decoded_before_comparing(server: me.FindingsServer) -> None:
    encoded = "=?base64?Z2V0X3JlYWRpbmVzc190cmVuZHM=?="  # get_readiness_trends
    status, answer = _modern(server, "tools/call", headers={"Mcp-Name": encoded},
                             name="get_readiness_trends", arguments={})
    assert status == 200 and answer["result"]["resultType"] == "complete"


def test_an_unsupported_version_is_refused_with_the_supported_list(server: me.FindingsServer) -> None:
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    status, answer = _modern(server, "tools/list", meta=meta, headers={"MCP-Protocol-Version": "2099-01-01"})
    assert status == 400 and answer["error"]["code"] == -32022
    assert answer["error"]["data"]["supported"] == [MODERN, "2025-06-18"]


def test_meta_without_capabilities_is_invalid_params(server: me.FindingsServer) -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN}
    status, answer = _modern(server, "tools/list", meta=meta)
    assert status == 400 and answer["error"]["code"] == -32602


def test_ping_is_not_a_modern_method(server: me.FindingsServer) -> None:
    status, answer = _modern(server, "ping")
    assert status == 404 and answer["error"]["code"] == -32601


def test_the_spawn_gate_holds_in_the_modern_era(server: me.FindingsServer) -> None:
    _, answer = _modern(server, "tools/call", name="run_probe", arguments={"manifest": {}, "url": "x"})
    assert answer["error"]["code"] == -32000 and "--allow-spawn" in answer["error"]["message"]


def test_legacy_answers_are_unchanged(server: me.FindingsServer) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    status, _, raw = request(server.address, body, headers={"MCP-Protocol-Version": "2025-06-18"})
    assert status == 200 and b"resultType" not in raw and b"ttlMs" not in raw
    status, _, raw = request(server.address, b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
    assert (status, json.loads(raw)["result"]) == (200, {})


def test_get_and_delete_are_refused(server: me.FindingsServer) -> None:
    for method in ("GET", "DELETE"):
        status, _, _ = request(server.address, b"", method=method, headers={"Content-Type": None})
        assert status == 405


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-06-18"), ("auto", MODERN), (MODERN, MODERN)])
def test_the_sdk_client_calls_a_tool_in_every_mode(server: me.FindingsServer, mode: str,
                                                   version: str) -> None:
    async def work(client: Any) -> Any:
        listed = await client.list_tools()
        called = await client.call_tool("get_readiness_trends", {})
        refused = await _refusal(client)
        return client.protocol_version, [t.name for t in listed.tools], called.content[0].text, refused
    got, names, text, refused = sdk(server.url, work, mode=mode)
    assert got == version and "record_annotation" in names and "trend history" in text
    assert "--allow-spawn" in refused


async def _refusal(client: Any) -> str:
    from mcp.shared.exceptions import MCPError

    try:
        await client.call_tool("scaffold", {"url": "http://127.0.0.1:1/mcp"})
    except MCPError as exc:
        return str(exc)
    return ""


def test_this_packages_client_negotiates_the_modern_era_with_serve(server: me.FindingsServer) -> None:
    target = HttpTarget(server.url)
    with open_session(lambda: McpSession.connect(target), protocol="auto") as session:
        assert session.negotiated is not None and session.negotiated.modern
        assert session.list_tools().names[:2] == ["list_findings", "get_finding"]
        assert session.call_tool("get_readiness_trends", {}).ok


def test_allow_spawn_lists_the_same_tools_in_both_eras(tmp_path: Path) -> None:
    with serving(tmp_path / "root", allow_spawn=True) as running:
        legacy = sdk(running.url, _names, mode="legacy")
        modern = sdk(running.url, _names, mode=MODERN)
    assert legacy == modern and "run_probe" in modern


async def _names(client: Any) -> list[str]:
    return [t.name for t in (await client.list_tools()).tools]


def test_the_serve_command_answers_the_sdk_client_in_every_mode(tmp_path: Path) -> None:
    """``mcpeval-nb serve`` as a process (the command a user runs), not the in-process server."""
    proc = subprocess.Popen([sys.executable, "-m", "mcpeval_nb", "serve", "--listen", "127.0.0.1:0", "--root",
                             str(tmp_path / "root")], stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        url = proc.stderr.readline().strip().rsplit(" ", 1)[-1]
        assert url.startswith("http://127.0.0.1:"), url
        for mode, version in (("legacy", "2025-06-18"), ("auto", MODERN), (MODERN, MODERN)):
            got = sdk(url, _version_and_names, mode=mode)
            assert got[0] == version and "list_findings" in got[1], mode
    finally:
        stop(proc)
        if proc.stderr is not None:
            proc.stderr.close()


async def _version_and_names(client: Any) -> tuple[str, list[str]]:
    return client.protocol_version, await _names(client)
