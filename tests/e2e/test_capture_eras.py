"""The official SDK client and server (``mcp`` 2.x) of both eras through each shim: the client sees what it
sees directly, every header it sent reaches the server, each operation is one record, and no canary (an
argument, an ``Mcp-Param-*`` value, a requestState, an elicitation answer, a URL-mode URL, a task result,
a bearer token) reaches the store."""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import Client
from mcp_types import ElicitResult

from mcpeval_nb import HTTPShim, HTTPShimOptions
from mcpeval_nb.privacy.ext import ABANDONED, TASK_CANCELLED
from mcpeval_nb.testing.servers._eras_tasks import TasksClient
from tests.eras_support import Call, Transcript, eras_argv, eras_http, run_calls
from tests.http_tap import tap
from tests.shim_helpers import journal, store_bytes

pytestmark = pytest.mark.e2e

CANARY = "CANARY-eras-8e27"
V = "2026-07-28"
CALLS: list[Call] = [
    ("echo", {"text": CANARY}),
    ("navigate", {"url": f"https://{CANARY}.example.com/", "waitUntil": "commit"}),
    ("fail", {"message": CANARY}), ("ask", {"rounds": 2}),
    ("visit", {"url": f"https://{CANARY}.example.org/p"}), ("confirm", {"item": CANARY}),
]


def _shim_argv(*server_args: str) -> list[str]:
    return [sys.executable, "-m", "mcpeval_nb", "shim", "--server", "eras", "--", *eras_argv(*server_args)]


def _tools(root: Path) -> list[dict[str, Any]]:
    return [r for r in journal(root) if r["method"] == "tools/call"]


def _same(direct: Transcript, shimmed: Transcript) -> None:
    assert (shimmed.version, shimmed.results, shimmed.asked) == (direct.version, direct.results, direct.asked)


def _no_canary(root: Path) -> None:
    assert CANARY.encode() not in store_bytes(root)
    assert b"CANARY" not in store_bytes(root)


@pytest.mark.parametrize(("era", "mode", "version"), [
    ("dual", "auto", V), ("dual", "legacy", "2025-11-25"), ("modern", V, V),
    ("legacy", "auto", "2025-11-25")])
def test_each_era_through_the_stdio_shim_answers_as_directly_one_record_per_call(
        root: Path, era: str, mode: str, version: str) -> None:
    calls = [*CALLS, ("job", {"ms": 20, "note": CANARY})]
    direct = run_calls(eras_argv("--era", era), calls, mode=mode, answer=CANARY)
    shimmed = run_calls(_shim_argv("--era", era), calls, mode=mode, answer=CANARY)
    _same(direct, shimmed)
    assert shimmed.version == version
    tools = _tools(root)
    assert [(r["tool"], r["outcome"]) for r in tools] == [
        ("echo", "ok"), ("navigate", "ok"), ("fail", "error"), ("ask", "ok"), ("visit", "ok"),
        ("confirm", "ok"), ("job", "ok")]
    if version == V:
        assert all(r["ext"]["protocol"] == V and r["ext"]["transport"] == "pipe" for r in tools)
        assert (tools[3]["ext"]["rounds"], tools[4]["ext"]["rounds"], tools[5]["ext"]["rounds"]) == (3, 2, 2)
        assert (tools[6]["ext"]["task"], tools[6]["ext"]["result_type"]) == ("completed", "task")
        assert not [r for r in journal(root) if r["method"].startswith("tasks/")]  # polls are not calls
    else:  # a legacy session: SPEC's bytes only (an auto client's discover probe was a modern request)
        assert {r["method"] for r in journal(root) if "ext" in r} <= {"server/discover"}
    _no_canary(root)


def test_a_legacy_session_through_the_stdio_shim_writes_only_specs_keys(root: Path) -> None:
    run_calls(_shim_argv(), [("echo", {"text": "x"}), ("fail", {"message": "y"})], mode="legacy")
    keys = ("ts", "session", "seq", "server", "method", "tool", "args", "latency_ms", "outcome", "error",
            "shim_self_us", "kind")
    lines = [line for p in sorted((root / "store").glob("calls-*.jsonl"))
             for line in p.read_text().splitlines()]
    assert lines and all(set(json.loads(line)) <= set(keys) for line in lines)
    for line in lines:  # struct order, compact, exactly as the writer of SPEC 2.1 renders it
        record = json.loads(line)
        spec = {k: record[k] for k in keys if k in record}
        assert line == json.dumps(spec, separators=(",", ":"), ensure_ascii=False)


@pytest.fixture
def modern_url() -> Iterator[str]:
    with eras_http() as url:
        yield url


def _http_shim(root: Path, upstream: str) -> HTTPShim:
    return HTTPShim(HTTPShimOptions(server="eras", listen="127.0.0.1:0", upstream=upstream, root=root))


@pytest.mark.parametrize(("era", "flags", "mode", "version"), [
    ("dual", (), "auto", V), ("dual", ("--json",), V, V), ("modern", (), "auto", V),
    ("dual", (), "legacy", "2025-11-25"), ("legacy", ("--json",), "auto", "2025-11-25")])
def test_each_era_through_shim_http_answers_as_directly_and_every_header_reaches_the_server(
        root: Path, era: str, flags: tuple[str, ...], mode: str, version: str) -> None:
    calls: list[Call] = [("echo", {"text": CANARY}), ("fail", {"message": CANARY}),
                         ("region", {"region": CANARY, "query": CANARY})]
    if version == V:
        calls += [("ask", {"rounds": 2}), ("visit", {"url": f"https://{CANARY}.example.org/"}),
                  ("job", {"ms": 20, "note": CANARY})]
    with eras_http("--era", era, *flags) as url, tap(url) as seen:
        direct = run_calls(url, calls, mode=mode, answer=CANARY)
        seen.seen.clear()
        sent: list[dict[str, str]] = []
        with _http_shim(root, seen.url) as shim:
            shimmed = run_calls(shim.url, calls, mode=mode, answer=CANARY, sent=sent)
    _same(direct, shimmed)
    arrived = seen.headers()
    owned = {"host", "content-length", "accept-encoding", "connection"}
    assert len(arrived) == len([h for h in sent if h.get("content-type") == "application/json"]) > 0
    for client, server in zip([h for h in sent if h.get("content-type") == "application/json"], arrived,
                              strict=True):
        assert {k: v for k, v in client.items() if k not in owned} == \
            {k: v for k, v in server.items() if k not in owned}
    if version == V:
        assert any(h.get("mcp-param-region") == CANARY for h in arrived)
        tools = _tools(root)
        assert [(r["tool"], r["outcome"]) for r in tools] == [
            ("echo", "ok"), ("fail", "error"), ("region", "ok"), ("ask", "ok"), ("visit", "ok"),
            ("job", "ok")]
        assert {r["ext"]["transport"] for r in tools} == {"tcp"} and tools[3]["ext"]["rounds"] == 3
        assert tools[0]["ext"]["address"] == "127.0.0.1"
    _no_canary(root)


def test_a_multi_round_trip_operation_is_one_record_whose_latency_is_the_clients(
        root: Path, modern_url: str) -> None:
    with _http_shim(root, modern_url) as shim:
        out = run_calls(shim.url, [("ask", {"rounds": 3})], mode=V, answer=CANARY, delay=0.6)
    (record,) = _tools(root)
    wall_ms = out.seconds[0] * 1000
    assert abs(record["latency_ms"] - wall_ms) <= 0.05 * wall_ms, (record["latency_ms"], wall_ms)
    assert record["ext"]["rounds"] == 4 and record["ext"]["wait_ms"] >= 3 * 600
    assert record["ext"]["wait_ms"] <= record["latency_ms"]
    _no_canary(root)


def _drive(url: str, step: Any) -> Any:
    async def main() -> Any:
        async def answer(_ctx: Any, _params: Any) -> ElicitResult:
            return ElicitResult(action="accept", content={"answer": CANARY})

        callback: Any = answer
        async with Client(url, mode=V, elicitation_callback=callback) as client:
            await client.list_tools()
            return await step(client)

    return anyio.run(main)


def test_a_tampered_request_state_is_flagged_and_an_abandoned_operation_recorded(
        root: Path, modern_url: str) -> None:
    async def tamper(client: Client) -> Any:
        first: Any = await client.session.call_tool("ask", {"rounds": 2}, allow_input_required=True)
        responses: Any = {"q1": ElicitResult(action="accept", content={"answer": CANARY})}
        try:
            return await client.session.call_tool("ask", {"rounds": 2}, allow_input_required=True,
                                                  input_responses=responses,
                                                  request_state=first.request_state + "x")
        except Exception as exc:
            return type(exc).__name__

    async def abandon(client: Client) -> Any:
        return await client.session.call_tool("ask", {"rounds": 2}, allow_input_required=True)

    with _http_shim(root, modern_url) as shim:
        _drive(shim.url, tamper)
        _drive(shim.url, abandon)
    tampered, abandoned = _tools(root)
    assert tampered["outcome"] == "error" and tampered["ext"]["flags"] == ["state-changed"]
    assert tampered["ext"]["rounds"] == 2
    assert abandoned["outcome"] == "unknown" and abandoned["error"] == {"code": ABANDONED}
    assert abandoned["ext"]["result_type"] == "input_required"
    _no_canary(root)


def test_task_flows_are_one_operation_each_with_their_terminal_status(root: Path, modern_url: str) -> None:
    with _http_shim(root, modern_url) as shim:
        jobs: list[Call] = [("job", {"ms": 1500, "note": CANARY}), ("job", {"ms": 30, "end": "failed"}),
                            ("job", {"ms": 30, "end": "input_required", "note": CANARY})]
        out = run_calls(shim.url, jobs, mode=V)
        run_calls(shim.url, [("job", {"ms": 60_000, "note": CANARY})], mode=V,
                  tasks=TasksClient(cancel_after=2))
    tools = _tools(root)
    # The operation's latency spans the task (1,500 ms of work, so polls included) and lies inside the
    # client's call_tool: bounds that hold however loaded the machine (a 5% tolerance on the difference
    # did not: the client's own scheduling delays are unbounded there).
    wall_ms = out.seconds[0] * 1000
    assert 1500 <= tools[0]["latency_ms"] <= wall_ms + 1, (tools[0]["latency_ms"], wall_ms)
    assert [(r["outcome"], r["ext"]["task"]) for r in tools] == [
        ("ok", "completed"), ("error", "failed"), ("ok", "completed"), ("unknown", "cancelled")]
    assert tools[3]["error"] == {"code": TASK_CANCELLED} and tools[1]["error"]["code"] == -32603
    assert all(r["ext"]["polls"] >= 1 and r["ext"]["result_type"] == "task" for r in tools)
    assert not [r for r in journal(root) if r["method"].startswith("tasks/")]
    _no_canary(root)


def test_oauth_discovery_and_an_authorised_call_pass_through_the_shim_and_the_token_never_is_stored(
        root: Path) -> None:
    import urllib.request

    with eras_http("--oauth") as url, _http_shim(root, url) as shim:
        shim_url = shim.url
        out = run_calls(shim_url, [("echo", {"text": "authorised"})], oauth=True)
        origin = shim_url.rsplit("/", 1)[0]
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"{origin}/.well-known/oauth-protected-resource/mcp", timeout=120) as answer:
            document = json.loads(answer.read())
    assert out.results[1]["content"][0]["text"] == "authorised"  # discovery accepted the shim's document
    assert document["resource"] == shim_url  # the resource the client reaches through the shim
    assert [s.rstrip("/") for s in document["authorization_servers"]] == [url.rsplit("/", 1)[0]]  # as it was
    assert [r["method"] for r in journal(root) if r["method"] == "tools/call"] == ["tools/call"]
    _no_canary(root)


def test_a_listen_stream_passes_through_and_a_get_stream_is_refused_by_a_modern_server(root: Path) -> None:
    events: list[Any] = []

    async def listen(client: Client) -> None:
        async with client.listen(tools_list_changed=True) as sub:
            await client.call_tool("touch", {})
            async for event in sub:
                events.append(type(event).__name__)
                break

    with eras_http("--era", "modern") as url, _http_shim(root, url) as shim:
        _drive(shim.url, listen)
        port = shim.address[1]
        with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
            sock.sendall(f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n"
                         .encode())
            status = sock.recv(4096).split(b" ", 2)[1]
    assert events and status == b"405"
    methods = [r["method"] for r in journal(root)]
    assert "notifications/subscriptions/acknowledged" in methods
    assert "notifications/tools/list_changed" in methods
    (listened,) = [r for r in journal(root) if r["method"] == "subscriptions/listen"]
    assert listened["outcome"] == "ok" and listened["ext"]["protocol"] == V


def test_a_header_that_disagrees_with_the_body_is_forwarded_and_flagged(root: Path, modern_url: str) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": CANARY}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": V, "io.modelcontextprotocol/clientCapabilities": {}}}})
    with _http_shim(root, modern_url) as shim:
        port = shim.address[1]
        head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                f"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {V}\r\n"
                f"Mcp-Method: tools/call\r\nMcp-Name: other\r\nContent-Length: {len(body)}\r\n\r\n")
        with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
            sock.sendall(head.encode() + body.encode())
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
    assert answer.split(b" ", 2)[1] == b"400" and b"-32020" in answer
    (record,) = _tools(root)
    assert record["outcome"] == "error" and record["error"]["code"] == -32020
    assert record["ext"]["flags"] == ["header-mismatch"]
    _no_canary(root)


def test_a_legacy_client_cannot_reach_a_modern_only_server_directly_nor_through_the_shim(root: Path) -> None:
    from tests.eras_support import refusal

    direct = refusal(eras_argv("--era", "modern"), mode="legacy")
    shimmed = refusal(_shim_argv("--era", "modern"), mode="legacy")
    assert "2026-07-28" in direct and "2026-07-28" in shimmed
    assert os.environ.get("MCPEVAL_HOME") == str(root)
