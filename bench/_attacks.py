"""Hostile-load cases for ``bench_shim`` (issue 15), each against a named baseline measured in the same run.

* ``unanswered``: 12,000 requests of ~3 KB through ``shim`` to a server that never answers, against the
  same requests answered (baseline): the recorder's RSS after 2,000 and after 12,000.
* ``unanswered-http``: 30 exchanges of ~0.8 MB through ``shim-http`` answered with a non-JSON body (no
  JSON-RPC answer), against the same exchanges answered with JSON (baseline): RSS after 5 and 30.
* ``burst``: N small notifications written by a server through ``shim``, against the server writing them
  to a pipe directly (baseline): records journaled, records lost, records per second sustained.
* ``streams``: ping round trips through ``shim-http`` to the SDK's Streamable HTTP server with 0, 8 and
  32 idle GET event streams open, against pings sent to the server directly (baseline).
"""

from __future__ import annotations

import json
import os
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mcpeval_nb.testing.servers import echo, sdk_demo

__all__ = ["burst", "streams", "unanswered", "unanswered_http"]


def rss_mib(pid: int) -> float:
    """A process's resident set, MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def _lines(root: Path) -> int:
    count = 0
    for path in (root / "store").glob("calls-*.jsonl"):
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 24):
                count += chunk.count(b"\n")
    return count


def _wait(predicate: Any, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out")
        time.sleep(0.05)


def _wide_call(msg_id: int, keys: int, tool: str) -> bytes:
    arguments = {f"field_{i:06d}_name": i for i in range(keys)}
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "tools/call",
                       "params": {"name": tool, "arguments": arguments}}).encode()


def _shim(root: Path, *server_args: str) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "mcpeval_nb", "shim", "--server", "bench", "--root", str(root), "--",
            sys.executable, echo.__file__, *server_args]
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "MCPEVAL_HOME": str(root)})


def _recorder_pid(shim_pid: int) -> int:
    for _ in range(200):
        for task in Path(f"/proc/{shim_pid}/task").glob("*"):
            for pid in (task / "children").read_text().split():
                if b"mcpeval_nb" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return int(pid)
        time.sleep(0.05)
    raise RuntimeError("no recorder child")


def unanswered(n: int = 12000) -> dict[str, tuple[float, float]]:
    """Recorder RSS (MiB) after 2,000 and after ``n`` requests, answered and unanswered."""
    out: dict[str, tuple[float, float]] = {}
    for name, args, expect in (("answered", (), lambda k: k), ("unanswered", ("--no-answers",), None)):
        with tempfile.TemporaryDirectory(prefix="bench-unanswered-") as home:
            root = Path(home)
            proc = _shim(root, *args)
            assert proc.stdin is not None
            recorder, sizes, sent = _recorder_pid(proc.pid), [], 0
            for total in (2000, n):
                while sent < total:
                    sent += 1
                    proc.stdin.write(_wide_call(sent, 110, "navigate") + b"\n")
                proc.stdin.flush()
                want = total if expect is not None else total - 1024
                _wait(lambda w=want, r=root: _lines(r) >= w)
                sizes.append(rss_mib(recorder))
            proc.stdin.close()
            proc.wait(60)
            out[name] = (sizes[0], sizes[1])
    return out


@contextmanager
def _upstream() -> Iterator[Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.shim_http_upstream import upstream

    with upstream() as up:
        yield up


def _post(port: int, body: bytes, headers: str = "") -> tuple[int, bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                     f"Accept: application/json, text/event-stream\r\nConnection: close\r\n{headers}"
                     f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    return int(raw.split(b" ", 2)[1]), raw


def _shim_http(root: Path, upstream: str) -> tuple[subprocess.Popen[bytes], int]:
    argv = [sys.executable, "-m", "mcpeval_nb", "shim-http", "--server", "bench", "--root", str(root),
            "--listen", "127.0.0.1:0", "--upstream", upstream]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, env={**os.environ, "MCPEVAL_HOME": str(root)})
    assert proc.stderr is not None
    line = proc.stderr.readline().decode()
    return proc, int(line.rsplit(":", 1)[1].split("/")[0])


def unanswered_http(n: int = 30) -> dict[str, tuple[float, float]]:
    """shim-http RSS (MiB) after 5 and ``n`` exchanges of ~0.8 MB, answered with JSON or with text."""
    out: dict[str, tuple[float, float]] = {}
    with _upstream() as up:
        for name, tool, per in (("answered", "lookup", 1), ("unanswered", "text", 2)):
            with tempfile.TemporaryDirectory(prefix="bench-http-") as home:
                root = Path(home)
                proc, port = _shim_http(root, up.url)
                body, sizes, done = _wide_call(1, 32000, tool), [], 0
                for total in (5, n):
                    while done < total:
                        _post(port, body)
                        done += 1
                    up.seen.clear()
                    _wait(lambda t=total, p=per, r=root: _lines(r) >= t * p)
                    sizes.append(rss_mib(proc.pid))
                proc.terminate()
                proc.wait(60)
                out[name] = (sizes[0], sizes[1])
    return out


def burst(n: int = 500_000) -> dict[str, float]:
    """Notifications written directly and through the shim: seconds, records, records lost, records/s."""
    server = [sys.executable, echo.__file__, "--notify-burst", str(n)]
    start = time.perf_counter()
    direct = subprocess.run(server, stdout=subprocess.PIPE, check=True).stdout.count(b"\n")
    direct_s = time.perf_counter() - start
    with tempfile.TemporaryDirectory(prefix="bench-burst-") as home:
        start = time.perf_counter()
        proc = _shim(Path(home), "--notify-burst", str(n))
        _, err = proc.communicate(timeout=1200)
        shim_s = time.perf_counter() - start
        records = _lines(Path(home))
    return {"direct_s": direct_s, "direct_lines": direct, "shim_s": shim_s, "records": records,
            "lost": n - records, "records_per_s": records / shim_s, "stderr_lines": err.count(b"\n")}


def _sdk_server() -> tuple[subprocess.Popen[bytes], str]:
    proc = subprocess.Popen([sys.executable, sdk_demo.__file__, "http", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 60)
    if not ready:
        raise RuntimeError("the SDK server did not start")
    url = proc.stdout.readline().decode().strip()
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    for _ in range(600):  # the URL is printed just before the listener is up
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    return proc, url


_INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})


def _session(port: int) -> str:
    _, raw = _post(port, _INIT.encode())
    head = raw.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    fields = (line.partition(":") for line in head.split("\r\n"))
    sid = next(v.strip() for k, _, v in fields if k.lower() == "mcp-session-id")
    _post(port, b'{"jsonrpc":"2.0","method":"notifications/initialized"}', f"Mcp-Session-Id: {sid}\r\n")
    return sid


def _open_stream(port: int) -> socket.socket:
    sid = _session(port)
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n"
                 f"Mcp-Session-Id: {sid}\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(4096)
    return sock


def _pings(port: int, sid: str, n: int) -> tuple[float, float, float]:
    body = b'{"jsonrpc":"2.0","id":7,"method":"ping"}'
    times = []
    for _ in range(n):
        start = time.perf_counter()
        _post(port, body, f"Mcp-Session-Id: {sid}\r\nMCP-Protocol-Version: 2025-06-18\r\n")
        times.append((time.perf_counter() - start) * 1000)
    ordered = sorted(times)
    return statistics.median(times), ordered[int(0.95 * (len(times) - 1))], ordered[-1]


def streams(n: int = 100) -> dict[str, tuple[float, float, float]]:
    """Ping p50/p95/max (ms), the first ping right after the streams opened: direct, and through
    shim-http with 0, 8 and 32 open event streams."""
    server, url = _sdk_server()
    out: dict[str, tuple[float, float, float]] = {}
    try:
        direct = int(url.rsplit(":", 1)[1].split("/")[0])
        out["direct"] = _pings(direct, _session(direct), n)
        with tempfile.TemporaryDirectory(prefix="bench-streams-") as home:
            proc, port = _shim_http(Path(home), url)
            sid = _session(port)  # before the streams open: the pings measure the starvation alone
            opened: list[socket.socket] = []
            try:
                for count in (0, 8, 32):
                    while len(opened) < count:
                        opened.append(_open_stream(port))
                    out[f"shim, {count} streams"] = _pings(port, sid, n)
            finally:
                for sock in opened:
                    sock.close()
                proc.terminate()
                proc.wait(30)
    finally:
        server.terminate()
        server.wait(30)
    return out
