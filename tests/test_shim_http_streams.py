"""shim-http with long-lived event streams open: requests are not starved, dead clients free their streams.

The upstream is the official SDK's ``MCPServer`` over Streamable HTTP (``sdk_demo http --json``): each
session may open one standalone GET event stream, which it keeps open and idle; and, for the 2026-07-28
revision, ``sdk_eras --era modern``, whose long-lived streams are ``subscriptions/listen`` POSTs.
"""

from __future__ import annotations

import json
import select
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpeval_nb import HTTPShim, HTTPShimOptions
from tests.e2e.capture_helpers import sdk_demo_command
from tests.shim_helpers import wait_for, wait_listening

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}}


@pytest.fixture(scope="module")
def upstream_url() -> Iterator[str]:
    server = subprocess.Popen(sdk_demo_command("http", "--json"), stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    assert server.stdout is not None
    try:
        ready, _, _ = select.select([server.stdout], [], [], 60)
        assert ready, "the SDK server did not start"
        url = server.stdout.readline().decode().strip()
        wait_listening(url)
        yield url
    finally:
        server.terminate()
        server.wait(10)


def _request(address: tuple[str, int], method: str, body: bytes = b"", headers: dict[str, str] | None = None,
             timeout: float = 10.0) -> socket.socket:
    sock = socket.create_connection(address, timeout=timeout)
    base = {"Host": f"127.0.0.1:{address[1]}", "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18", **(headers or {})}
    if method == "POST":
        base |= {"Content-Type": "application/json", "Content-Length": str(len(body))}
    head = f"{method} /mcp HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in base.items()) + "\r\n"
    sock.sendall(head.encode() + body)
    return sock


def _answer(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    raw = b""
    with sock:
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def _session(shim: HTTPShim) -> str:
    status, headers, _ = _answer(_request(shim.address, "POST", json.dumps(INIT).encode()))
    assert status == 200
    session = headers["mcp-session-id"]
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    assert _answer(_request(shim.address, "POST", note, {"Mcp-Session-Id": session}))[0] == 202
    return session


def _open_stream(shim: HTTPShim) -> socket.socket:
    sock = _request(shim.address, "GET",
                    headers={"Mcp-Session-Id": _session(shim), "Accept": "text/event-stream"})
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(4096)
    assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head
    return sock


def _options(upstream_url: str, root: Path, **extra: int) -> HTTPShimOptions:
    return HTTPShimOptions(server="demo", listen="127.0.0.1:0", upstream=upstream_url, root=root, **extra)


def _ping(shim: HTTPShim, session: str) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}).encode()
    # 3 s: well before the 5 s upstream idle timeout that used to free a worker held by a stream
    return _answer(_request(shim.address, "POST", body, {"Mcp-Session-Id": session}, timeout=3.0))[0]


@pytest.mark.parametrize("streams", [8, 32])
def test_requests_are_answered_while_many_event_streams_are_open(root: Path, upstream_url: str,
                                                                  streams: int) -> None:
    with HTTPShim(_options(upstream_url, root)) as shim:
        opened = [_open_stream(shim) for _ in range(streams)]
        try:
            assert shim.open_streams == streams
            session = _session(shim)
            assert [_ping(shim, session) for _ in range(10)] == [200] * 10
        finally:
            for sock in opened:
                sock.close()


def test_streams_whose_client_died_are_released_while_the_upstream_stays_silent(
        root: Path, upstream_url: str) -> None:
    # The upstream keeps its streams open and idle (no keep-alive events): nothing but the watcher
    # noticing the closed clients can release them, so no wall-clock bound is needed to prove it.
    with HTTPShim(_options(upstream_url, root)) as shim:
        opened = [_open_stream(shim) for _ in range(8)]
        assert shim.open_streams == 8
        for sock in opened:
            sock.close()
        assert wait_for(lambda: shim.open_streams == 0, timeout=120), shim.open_streams


def test_past_the_stream_bound_a_new_stream_is_refused_clearly(root: Path, upstream_url: str) -> None:
    with HTTPShim(_options(upstream_url, root, streams=2)) as shim:
        opened = [_open_stream(shim) for _ in range(2)]
        try:
            refused = _request(shim.address, "GET", headers={"Mcp-Session-Id": _session(shim),
                                                             "Accept": "text/event-stream"})
            assert _answer(refused)[0::2] == (503, b'{"error":"too many open event streams"}')
            assert _ping(shim, _session(shim)) == 200  # requests still pass
        finally:
            for sock in opened:
                sock.close()


MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}}


def _modern(shim: HTTPShim, msg_id: int, method: str, params: dict[str, object],
            timeout: float = 10.0) -> socket.socket:
    body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method,
                       "params": {**params, "_meta": MODERN}}).encode()
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    if method == "tools/call":
        headers["Mcp-Name"] = str(params["name"])
    return _request(shim.address, "POST", body, headers, timeout=timeout)


def test_requests_are_answered_while_many_subscriptions_listen_streams_are_open(root: Path) -> None:
    from tests.eras_support import eras_http
    from tests.shim_helpers import journal

    with eras_http("--era", "modern") as url, HTTPShim(_options(url, root)) as shim:
        opened = []
        for n in range(32):
            listen = {"notifications": {"toolsListChanged": True}}
            sock = _modern(shim, 100 + n, "subscriptions/listen", listen)
            head = b""
            while b"\r\n\r\n" not in head:
                head += sock.recv(4096)
            assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head
            opened.append(sock)
        try:
            assert wait_for(lambda: shim.open_streams == 32)
            calls = [_answer(_modern(shim, n, "tools/call", {"name": "echo", "arguments": {"text": "x"}},
                                     timeout=3.0))[0] for n in range(10)]
            assert calls == [200] * 10
        finally:
            for sock in opened:
                sock.close()
        assert wait_for(lambda: shim.open_streams == 0)
    listens = [r for r in journal(root) if r["method"] == "subscriptions/listen"]
    assert len(listens) == 32 and {r["outcome"] for r in listens} == {"ok"}
