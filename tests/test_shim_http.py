"""shim-http in process against a real loopback upstream: provenance checks, relaying, capture."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpeval_nb import HTTPShim, HTTPShimOptions, UsageError
from tests.shim_helpers import journal, store_bytes, wait_for
from tests.shim_http_upstream import CANARY, Upstream, upstream


@pytest.fixture
def up() -> Iterator[Upstream]:
    with upstream() as server:
        yield server


@pytest.fixture
def shim(root: Path, up: Upstream) -> Iterator[HTTPShim]:
    with HTTPShim(HTTPShimOptions(server="demo", listen="127.0.0.1:0", upstream=up.url, root=root,
                                  session="s1")) as running:
        yield running


def exchange(shim: HTTPShim, data: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes, read the whole response (the shim closes the connection)."""
    with socket.create_connection(shim.address, timeout=120) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    raw = b"".join(chunks)
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def post(shim: HTTPShim, payload: object, *, headers: dict[str, str] | None = None) -> tuple[
        int, dict[str, str], bytes]:
    body = json.dumps(payload).encode()
    base = {"Host": f"127.0.0.1:{shim.address[1]}", "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream", "Content-Length": str(len(body))}
    lines = [f"{k}: {v}" for k, v in {**base, **(headers or {})}.items()]
    return exchange(shim, ("POST /mcp HTTP/1.1\r\n" + "\r\n".join(lines) + "\r\n\r\n").encode() + body)


def rpc(msg_id: object, method: str, **params: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


def flushed(shim: HTTPShim, count: int) -> None:
    assert wait_for(lambda: shim.recorder.written + shim.recorder.failed >= count)


@pytest.mark.parametrize(
    ("extra", "status", "body"),
    [
        ({"Origin": "http://evil.example"}, 403, b'{"error":"Origin is not a loopback origin"}'),
        ({"Origin": "null"}, 403, b'{"error":"Origin is not a loopback origin"}'),
        ({"Host": "evil.example"}, 403, b'{"error":"Host is not a loopback host"}'),
        ({"Content-Type": "text/plain"}, 415, b'{"error":"Content-Type must be application/json"}'),
    ],
)
def test_provenance_refusals_happen_before_anything_is_forwarded(
        shim: HTTPShim, up: Upstream, root: Path, extra: dict[str, str], status: int, body: bytes) -> None:
    code, headers, answer = post(shim, rpc(1, "tools/call", name="x", arguments={"k": CANARY}), headers=extra)
    assert (code, answer) == (status, body)
    assert headers["content-type"] == "application/json"
    assert up.seen == []
    assert journal(root) == []


def test_a_missing_or_repeated_host_is_a_400(shim: HTTPShim, up: Upstream) -> None:
    port = shim.address[1]
    missing = b"GET /mcp HTTP/1.1\r\nAccept: text/event-stream\r\n\r\n"
    assert exchange(shim, missing)[0::2] == (400, b'{"error":"Host header is required"}')
    twice = f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: localhost\r\n\r\n".encode()
    once = b'{"error":"Host, Origin, and Content-Type may appear only once"}'
    assert exchange(shim, twice)[0::2] == (400, once)
    assert up.seen == []


@pytest.mark.parametrize("request_bytes", [
    b"POST /mcp HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n",
    b"POST  /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Name: x\r\n\r\n",
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX: a\x01b\r\n\r\n",
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ten\r\n\r\n",
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 8388609\r\n\r\n",
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n",
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + b"a" * 70000 + b"\r\n\r\n",
])
def test_malformed_or_oversized_requests_get_an_empty_400(shim: HTTPShim, up: Upstream,
                                                         request_bytes: bytes) -> None:
    assert exchange(shim, request_bytes)[0::2] == (400, b"")
    assert up.seen == []


def test_json_calls_are_relayed_and_journaled_per_request_scope(shim: HTTPShim, up: Upstream,
                                                                root: Path) -> None:
    code, headers, body = post(shim, rpc(1, "tools/call", name="lookup", arguments={"q": CANARY}))
    assert code == 200 and json.loads(body)["id"] == 1
    assert headers["mcp-session-id"] == "session-abc"  # every end-to-end header is relayed; none journaled
    assert headers["set-cookie"] == f"secret={CANARY}" and headers["x-upstream-private"] == CANARY
    assert post(shim, rpc(1, "tools/call", name="lookup", arguments={}))[0] == 200  # same id, new scope
    flushed(shim, 2)
    records = journal(root)
    summary = [(r["seq"], r["tool"], r["outcome"]) for r in records]
    assert summary == [(1, "lookup", "ok"), (2, "lookup", "ok")]
    assert records[0]["args"] == {"q": "str<32"}
    assert CANARY.encode() not in store_bytes(root)


def test_sse_events_are_streamed_and_each_data_event_is_correlated(shim: HTTPShim, up: Upstream,
                                                                   root: Path) -> None:
    code, headers, body = post(shim, rpc("a", "tools/call", name="sse", arguments={}))
    assert code == 200 and headers["content-type"] == "text/event-stream"
    assert body.count(b"data: ") == 2 and CANARY.encode() in body
    flushed(shim, 2)
    assert [(r["method"], r["outcome"]) for r in journal(root)] == [
        ("notifications/progress", "unknown"), ("tools/call", "ok")]


def test_non_json_bodies_and_error_statuses_are_relayed_and_recorded_content_free(
        shim: HTTPShim, up: Upstream, root: Path) -> None:
    code, _, body = post(shim, rpc(1, "tools/call", name="text", arguments={}))
    assert (code, body) == (200, f"plain {CANARY}".encode())
    code, _, body = post(shim, rpc(2, "tools/call", name="status", arguments={}))
    assert code == 500 and CANARY.encode() in body
    code, headers, _ = post(shim, rpc(3, "tools/call", name="redirect", arguments={}))
    assert code == 302 and "location" not in headers
    assert [s[0] for s in up.seen] == ["POST"] * 3  # the redirect was not followed
    flushed(shim, 4)
    records = journal(root)
    assert [(r["method"], r["outcome"], r.get("error")) for r in records] == [
        ("unparsed/inbound", "unparsed", None),
        ("tools/call", "unknown", {"code": "capture-exchange-ended"}),  # the request the text answered
        ("tools/call", "error", records[2]["error"]),
        ("tools/call", "unknown", {"code": "capture-exchange-ended"})]  # the redirected one
    assert CANARY.encode() not in store_bytes(root)


def test_notifications_get_the_upstream_202_and_no_record(shim: HTTPShim, up: Upstream, root: Path) -> None:
    code, _, body = post(shim, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert (code, body) == (202, b"")
    assert journal(root) == []


def test_an_upstream_body_over_8_mib_aborts_the_exchange(shim: HTTPShim, up: Upstream, root: Path) -> None:
    assert post(shim, rpc(1, "tools/call", name="huge", arguments={}))[0::2] == (502, b"")
    flushed(shim, 2)
    assert [(r["method"], r["outcome"]) for r in journal(root)] == [("unparsed/inbound", "unparsed"),
                                                                    ("tools/call", "unknown")]


def test_an_unreachable_upstream_is_a_502(root: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    options = HTTPShimOptions(server="demo", listen="127.0.0.1:0", upstream=f"http://127.0.0.1:{port}/mcp",
                              root=root)
    with HTTPShim(options) as shim:
        assert post(shim, rpc(1, "ping"))[0::2] == (502, b"")


def test_end_to_end_request_headers_are_forwarded_and_authorization_stays_in_memory(
        root: Path, up: Upstream, capsys: pytest.CaptureFixture[str]) -> None:
    secret = f"Bearer {CANARY}-env"
    options = HTTPShimOptions(server="demo", listen="127.0.0.1:0", upstream=up.url, root=root,
                              authorization=secret)
    with HTTPShim(options) as shim:
        post(shim, rpc(1, "ping"), headers={"Cookie": "c=1", "X-Private": "p", "Mcp-Session-Id": "sid",
                                            "Mcp-Protocol-Version": "2025-06-18", "Origin": "http://localhost",
                                            "Connection": "close, X-Hop", "X-Hop": "h", "Keep-Alive": "1",
                                            "Accept-Encoding": "gzip", "Mcp-Param-Region": CANARY})
        post(shim, rpc(2, "ping"), headers={"Authorization": "Bearer relayed"})
        flushed(shim, 2)
    first, second = (dict((k.lower(), v) for k, v in seen[1].items()) for seen in up.seen)
    assert first["authorization"] == secret and second["authorization"] == "Bearer relayed"
    assert first["mcp-session-id"] == "sid" and first["mcp-protocol-version"] == "2025-06-18"
    assert first["origin"] == "http://localhost" and first["mcp-param-region"] == CANARY
    assert first["cookie"] == "c=1" and first["x-private"] == "p"
    assert not {"x-hop", "keep-alive", "connection"} & set(first)  # hop-by-hop, and what Connection names
    assert first["accept-encoding"] == "identity"  # the shim reads bodies to record them
    assert first["host"] == up.url.split("/")[2]
    captured = capsys.readouterr()
    assert CANARY not in captured.out + captured.err
    assert CANARY.encode() not in store_bytes(root)


def test_get_streams_are_relayed_and_their_notifications_recorded(shim: HTTPShim, up: Upstream,
                                                                  root: Path) -> None:
    port = shim.address[1]
    request = f"GET /mcp HTTP/1.1\r\nHost: localhost:{port}\r\nAccept: text/event-stream\r\n\r\n".encode()
    code, _headers, body = exchange(shim, request)
    assert code == 200 and b"notifications/message" in body
    flushed(shim, 1)
    assert [r["method"] for r in journal(root)] == ["notifications/message"]


def test_a_full_accept_queue_answers_503_at_once(root: Path, up: Upstream) -> None:
    options = HTTPShimOptions(server="demo", listen="127.0.0.1:0", upstream=up.url, root=root, workers=2,
                              queue=3, timeout_s=30)
    with HTTPShim(options) as shim:
        socks = [socket.create_connection(shim.address, timeout=120) for _ in range(10)]
        try:
            refused = []
            for sock in socks:
                sock.settimeout(0.5)
                try:
                    data = sock.recv(4096)
                except TimeoutError:
                    continue
                refused.append(data)
            assert 5 <= len(refused) <= 7  # 10 connections - 2 workers - 3 queued (+2 not yet picked up)
            assert all(d.startswith(b"HTTP/1.1 503 Service Unavailable\r\n") for d in refused)
            assert all(d.endswith(b"Content-Length: 0\r\nConnection: close\r\n\r\n") for d in refused)
        finally:
            for sock in socks:
                sock.close()


@pytest.mark.parametrize(("listen", "upstream_url", "message"), [
    ("0.0.0.0:0", "http://127.0.0.1:1/mcp", "shim-http must listen on a loopback address"),
    ("127.0.0.1:0", "https://example.com/mcp", "remote HTTP endpoints require --allow-remote-http"),
    ("127.0.0.1:0", f"http://u:{CANARY}@127.0.0.1/mcp",
     "HTTP endpoint must be a credential-free HTTP(S) URL without query or fragment"),
])
def test_bad_listen_addresses_and_upstreams_refuse_to_start(root: Path, listen: str, upstream_url: str,
                                                            message: str) -> None:
    with pytest.raises(UsageError) as info:
        HTTPShim(HTTPShimOptions(server="demo", listen=listen, upstream=upstream_url, root=root))
    assert str(info.value) == message


def test_concurrent_requests_with_the_same_id_are_paired_within_their_own_scope(shim: HTTPShim, up: Upstream,
                                                                                root: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def one(i: int) -> int:
        code, _, body = post(shim, rpc(1, "tools/call", name=f"tool{i}", arguments={"i": i}))
        assert json.loads(body)["id"] == 1
        return code

    with ThreadPoolExecutor(max_workers=6) as pool:
        assert list(pool.map(one, range(24))) == [200] * 24
    flushed(shim, 24)
    records = journal(root)
    assert sorted(r["tool"] for r in records) == sorted(f"tool{i}" for i in range(24))
    assert all(r["args"] == {"i": f"num:{r['tool'][4:]}"} for r in records)  # each answer met its request
    assert [r["seq"] for r in records] == list(range(1, 25))


@pytest.mark.parametrize("target", ["http://other.example/mcp", "http://127.0.0.1:1/mcp", "other.example:80",
                                    "*", "mcp"])
def test_a_request_target_that_is_not_a_path_is_refused_before_forwarding(
        shim: HTTPShim, up: Upstream, root: Path, target: str) -> None:
    body = json.dumps(rpc(1, "tools/call", name="x", arguments={"k": CANARY})).encode()
    head = (f"POST {target} HTTP/1.1\r\nHost: 127.0.0.1:{shim.address[1]}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
    code, _, answer = exchange(shim, head.encode() + body)
    assert (code, answer) == (400, b'{"error":"request target must be a path"}')
    assert up.seen == [] and journal(root) == []


def test_finished_exchanges_leave_no_connection_behind(shim: HTTPShim, up: Upstream) -> None:
    for i in range(5):
        assert post(shim, rpc(i, "tools/call", name="text", arguments={}))[0] == 200
    assert wait_for(lambda: not shim._active)
