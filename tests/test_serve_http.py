"""serve's HTTP side over raw sockets: SPEC 13.1's handling order, statuses and bodies, with nothing
executed for any refused request (the body of every refused request would record an annotation)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcpeval_nb as me
from tests.serve_support import annotations, exchange, request, rpc, seed_call, serving

ANNOTATE = rpc("tools/call", name="record_annotation",
               arguments={"session": "s1", "seq": 1, "kind": "workaround", "note": "from a refused request"})


@pytest.fixture
def server(root: Path) -> Iterator[me.FindingsServer]:
    seed_call(root, "s1", 1)
    with serving(root, timeout_s=1.0) as running:
        yield running


def _refused(server: me.FindingsServer, root: Path, got: tuple[int, dict[str, str], bytes], status: int,
             message: str) -> None:
    code, headers, body = got
    assert (code, json.loads(body)) == (status, {"error": message})
    assert headers["content-type"] == "application/json" and headers["connection"] == "close"
    assert annotations(root) == []


def test_an_accepted_request_executes_once_and_answers_json(server: me.FindingsServer, root: Path) -> None:
    code, headers, body = request(server.address, ANNOTATE)
    assert code == 200 and headers["content-type"] == "application/json"
    assert headers["connection"] == "close" and int(headers["content-length"]) == len(body)
    assert json.loads(body)["result"]["content"][0]["text"].startswith("recorded workaround annotation")
    assert len(annotations(root)) == 1


@pytest.mark.parametrize("host", ["evil.example", "localhost.evil.com", "127.0.0.1.nip.io",
                                  "evil.com@127.0.0.1",
                                  "127.0.0.1@evil.com", "user:pw@localhost", "localhost.", "10.0.0.1",
                                  "[::2]:80", "127.0.0.1/x", "127.0.0.1#", "127.0.0.1?q", "127.0.0.1\\"])
def test_a_host_that_is_not_loopback_is_403(server: me.FindingsServer, root: Path, host: str) -> None:
    _refused(server, root, request(server.address, ANNOTATE, headers={"Host": host}), 403,
             "Host is not a loopback host")


@pytest.mark.parametrize("host", ["LOCALHOST", "Localhost:8940", "127.0.0.1", "127.1.2.3:1", "[::1]:8940"])
def test_uppercase_and_ported_loopback_hosts_pass(server: me.FindingsServer, root: Path, host: str) -> None:
    code, _, _ = request(server.address, ANNOTATE, headers={"Host": host})
    assert code == 200 and len(annotations(root)) == 1


def test_a_missing_host_is_400_and_a_repeated_one_too(server: me.FindingsServer, root: Path) -> None:
    _refused(server, root, request(server.address, ANNOTATE, headers={"Host": None}), 400,
             "Host header is required")
    port = server.address[1]
    raw = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: 127.0.0.1:{port}\r\n"
           f"Content-Type: application/json\r\nContent-Length: {len(ANNOTATE)}\r\n\r\n").encode() + ANNOTATE
    _refused(server, root, exchange(server.address, raw), 400,
             "Host, Origin, and Content-Type may appear only once")


@pytest.mark.parametrize("origin", ["null", "http://evil.example", "https://localhost.evil.com",
                                    "http://127.0.0.1.nip.io", "file://localhost", "ws://127.0.0.1"])
def test_a_foreign_origin_is_403(server: me.FindingsServer, root: Path, origin: str) -> None:
    _refused(server, root, request(server.address, ANNOTATE, headers={"Origin": origin}), 403,
             "Origin is not a loopback origin")


def test_a_loopback_origin_passes(server: me.FindingsServer, root: Path) -> None:
    code, _, _ = request(server.address, ANNOTATE, headers={"Origin": "http://localhost:3000"})
    assert code == 200


def test_the_origin_is_judged_before_the_host(server: me.FindingsServer, root: Path) -> None:
    _refused(server, root, request(server.address, ANNOTATE, headers={"Origin": "null", "Host": None}), 403,
             "Origin is not a loopback origin")


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/jsonx",
                                          "application/x-www-form-urlencoded"])
def test_a_post_without_json_content_type_is_415(server: me.FindingsServer, root: Path,
                                                 content_type: str | None) -> None:
    _refused(server, root, request(server.address, ANNOTATE, headers={"Content-Type": content_type}), 415,
             "Content-Type must be application/json")


def test_content_type_parameters_and_case_are_accepted(server: me.FindingsServer, root: Path) -> None:
    code, _, _ = request(server.address, ANNOTATE,
                         headers={"Content-Type": " Application/JSON ; charset=utf-8"})
    assert code == 200


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH"])
def test_methods_other_than_post_are_405(server: me.FindingsServer, root: Path, method: str) -> None:
    _refused(server, root, request(server.address, ANNOTATE, method=method), 405, "POST only")


def test_a_body_that_is_not_json_is_400(server: me.FindingsServer, root: Path) -> None:
    for body in (b"{not json", b"\xff\xfe", b""):
        _refused(server, root, request(server.address, body), 400, "invalid JSON body")


@pytest.mark.parametrize("raw", [
    b"POST /mcp HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n",
    b"POST  /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: x\r\n\r\n",
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n",
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: 1\r\n\r\n",
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\xc3\xa9\r\n\r\n",
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\n{}",
])
def test_unparsable_requests_are_400_invalid_request(server: me.FindingsServer, root: Path,
                                                     raw: bytes) -> None:
    _refused(server, root, exchange(server.address, raw), 400, "invalid request")


def test_headers_past_16_kib_are_400_and_just_under_pass(server: me.FindingsServer, root: Path) -> None:
    port = server.address[1]
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(ANNOTATE)}\r\n")
    pad = 16 * 1024 - len(head) - len("X-Pad: ")
    fits = (head + "X-Pad: " + "a" * pad + "\r\n\r\n").encode() + ANNOTATE
    over = (head + "X-Pad: " + "a" * (pad + 1) + "\r\n\r\n").encode() + ANNOTATE
    _refused(server, root, exchange(server.address, over), 400, "invalid request")
    assert exchange(server.address, fits)[0] == 200


def test_a_body_past_1_mib_is_400_before_it_is_read(server: me.FindingsServer, root: Path) -> None:
    port = server.address[1]
    raw = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
           f"Content-Length: {1024 * 1024 + 1}\r\n\r\n").encode()
    _refused(server, root, exchange(server.address, raw), 400, "invalid request")


def test_a_slow_client_past_the_deadline_gets_400_and_nothing_runs(server: me.FindingsServer,
                                                                   root: Path) -> None:
    port = server.address[1]
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(ANNOTATE)}\r\n\r\n").encode()
    started = time.monotonic()
    # The rest never comes: the server's 1 s deadline answers; no upper bound on a loaded machine (a
    # server that never answered would leave the read to time out, an error).
    with socket.create_connection(server.address, timeout=120) as sock:
        sock.sendall(head + ANNOTATE[:10])
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert time.monotonic() - started > 0.9
    status, _, body = answer.partition(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 400 Bad Request") and json.loads(body) == {"error": "invalid request"}
    assert annotations(root) == []


def test_notifications_are_acknowledged_with_202_null(server: me.FindingsServer) -> None:
    for body in (b'{"jsonrpc":"2.0","method":"notifications/initialized"}', b'{"jsonrpc":"2.0","id":null}'):
        code, _, answer = request(server.address, body)
        assert (code, answer) == (202, b"null")


def test_jsonrpc_errors_for_unknown_and_missing_methods(server: me.FindingsServer) -> None:
    unknown = {"code": -32601, "message": "unknown method resources/list"}
    for body, error in ((rpc("resources/list", 7), unknown),
                        (rpc("bad method!", 8), {"code": -32601, "message": "unknown method"}),
                        (b'{"jsonrpc":"2.0","id":9}', {"code": -32600, "message": "invalid request"})):
        code, _, answer = request(server.address, body)
        reply = json.loads(answer)
        assert code == 200 and reply["error"] == error and reply["id"] == json.loads(body)["id"]


def test_initialize_answers_spec_protocol_and_tools_capability(server: me.FindingsServer) -> None:
    body = rpc("initialize", protocolVersion="2025-06-18", capabilities={})
    code, _, answer = request(server.address, body)
    result = json.loads(answer)["result"]
    assert code == 200 and result["protocolVersion"] == "2025-06-18"
    assert result["capabilities"] == {"tools": {}} and result["serverInfo"]["name"] == "mcpeval-nb"


def test_every_request_target_is_served_alike(server: me.FindingsServer) -> None:
    port = server.address[1]
    body = rpc("ping")
    for target, status in (("/", 200), ("/anything", 200), (f"http://127.0.0.1:{port}/mcp", 200)):
        raw = (f"POST {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
        assert exchange(server.address, raw)[0] == status
