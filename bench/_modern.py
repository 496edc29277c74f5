"""2026-07-28 traffic for ``bench_shim``: a modern request and a multi round-trip operation, stdio and HTTP.

A *modern request* is a ``tools/call`` carrying the per-request ``_meta`` envelope and a ``traceparent``
(and over HTTP the ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and ``traceparent`` headers).
An *MRTR operation* is the echo fixture's ``mrtr`` tool: a call answered ``input_required`` with a
``requestState``, then its retry with ``inputResponses`` and that state, answered with the result: two
round trips, timed together.  Over HTTP each round trip is one POST on a fresh connection (shim-http
serves one request per connection), against the scripted loopback upstream of the shim-http tests,
directly, through a bare relay (``_http_relay``) and through ``mcpeval-nb shim-http``.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["HTTP_CASES", "STDIO_CASES", "http_rows"]

TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}, "traceparent": TRACEPARENT}
ANSWERS = {"q": {"action": "accept", "content": {"answer": "yes"}}}


def _message(msg_id: int, tool: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": META, **extra}}


def _stdio_modern(conn: Any) -> float:
    return float(conn.round_trip(lambda i: json.dumps(_message(
        i, "navigate", {"url": "https://example.com/a", "waitUntil": "commit"})).encode() + b"\n"))


def _stdio_mrtr(conn: Any) -> float:
    first = conn.next_id + 1
    elapsed = conn.round_trip(lambda i: json.dumps(_message(i, "mrtr", {"q": "x"})).encode() + b"\n")
    return float(elapsed + conn.round_trip(lambda i: json.dumps(_message(
        i, "mrtr", {"q": "x"}, inputResponses=ANSWERS, requestState=f"s-{first}")).encode() + b"\n"))


#: (case, one sample on a ``bench_shim.Connection``: seconds).
STDIO_CASES: tuple[tuple[str, Callable[[Any], float]], ...] = (
    ("modern tools/call", _stdio_modern), ("MRTR operation", _stdio_mrtr))


class _Post:
    def __init__(self, url: str) -> None:
        self.host_port, _, path = url.removeprefix("http://").partition("/")
        self.path = "/" + path
        self.next_id = 0

    def round_trip(self, msg: dict[str, Any]) -> float:
        body = json.dumps(msg).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                   "Mcp-Name": msg["params"]["name"], "traceparent": TRACEPARENT}
        host, port = self.host_port.split(":")
        start = time.perf_counter()
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        conn.request("POST", self.path, body=body, headers=headers)
        answer = conn.getresponse().read()
        elapsed = time.perf_counter() - start
        conn.close()
        if not answer.startswith(b'{"jsonrpc"'):
            raise RuntimeError("unexpected answer from the upstream")
        return elapsed


def _http_modern(post: _Post) -> float:
    post.next_id += 1
    return post.round_trip(_message(post.next_id, "lookup", {"q": "x"}))


def _http_mrtr(post: _Post) -> float:
    post.next_id += 2
    first = post.next_id - 1
    return (post.round_trip(_message(first, "mrtr", {"q": "x"}))
            + post.round_trip(_message(post.next_id, "mrtr", {"q": "x"}, inputResponses=ANSWERS,
                                       requestState=f"s-{first}")))


#: (case, one sample against an endpoint: seconds).
HTTP_CASES: tuple[tuple[str, Callable[[_Post], float]], ...] = (
    ("modern request", _http_modern), ("MRTR operation", _http_mrtr))


@contextmanager
def _shim_http(upstream: str, home: str) -> Iterator[str]:
    env = {**os.environ, "MCPEVAL_HOME": home, "MCPEVAL_SESSION": "bench"}
    proc = subprocess.Popen([sys.executable, "-m", "mcpeval_nb", "shim-http", "--server", "bench", "--listen",
                             "127.0.0.1:0", "--upstream", upstream], stderr=subprocess.PIPE, env=env)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline().decode()
        yield line.rsplit(" ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


Percentile = Callable[[list[float], float], float]


def http_rows(n: int, warmup: int, pct: Percentile) -> list[tuple[str, int, dict[str, float]]]:
    """Each HTTP case: direct, relay and shim-http round trips rotated, percentiles in ms."""
    from bench._http_relay import relay
    from tests.shim_http_upstream import upstream

    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-shim-http-") as home, upstream() as up, \
            relay(up.url) as relayed, _shim_http(up.url, home) as shimmed:
        posts = {"direct": _Post(up.url), "relay": _Post(relayed), "shim": _Post(shimmed)}
        for name, sample in HTTP_CASES:
            print(f"bench_shim: shim-http {name}: {n} samples per endpoint ...", file=sys.stderr, flush=True)
            times: dict[str, list[float]] = {k: [] for k in posts}
            names = list(posts)
            for i in range(warmup + n):
                for key in names[i % 3:] + names[:i % 3]:
                    elapsed = sample(posts[key])
                    if i >= warmup:
                        times[key].append(elapsed)
            rows.append((name, n, _percentiles(times, pct)))
    return rows


def _percentiles(times: dict[str, list[float]], pct: Percentile) -> dict[str, float]:
    out = {f"{k}_{q}": pct(v, f) for k, v in times.items() for q, f in (("p50", 0.5), ("p95", 0.95))}
    for q in ("p50", "p95"):
        out[f"added_{q}"] = out[f"shim_{q}"] - out[f"direct_{q}"]
        out[f"recording_{q}"] = out[f"shim_{q}"] - out[f"relay_{q}"]
    return out
