"""Unanswered requests cannot grow a shim's memory: pending entries are bounded, ended exchanges dropped.

Figures (issue 15): 12,000 unanswered 3 KB requests grew the stdio recorder by ~300 MiB; 30 exchanges of
0.8 MB through shim-http that end without a JSON-RPC answer grew it from 24 to 323 MiB.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from mcpeval_nb.limits import MAX_PENDING_REQUESTS
from tests import waiting
from tests.shim_helpers import children, journal, shim_argv, wait_for, wait_progressing
from tests.shim_http_upstream import upstream


def _rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1])


def _wide_call(msg_id: int, keys: int, tool: str = "lookup") -> bytes:
    arguments = {f"field_{i:06d}_name": i for i in range(keys)}
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "tools/call",
                       "params": {"name": tool, "arguments": arguments}}).encode()


def _complete_lines(root: Path) -> int:
    """Journal lines written so far (a line being written is not yet counted)."""
    return sum(p.read_bytes().count(b"\n") for p in (root / "store").glob("calls-*.jsonl"))


def test_unanswered_requests_through_the_stdio_shim_keep_the_recorder_flat(root: Path) -> None:
    proc = subprocess.Popen(shim_argv("--no-answers"), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert proc.stdin is not None
    try:
        assert wait_for(lambda: len(children(proc.pid)) == 2)
        recorder = next(pid for pid in children(proc.pid)
                        if b"mcpeval_nb" in Path(f"/proc/{pid}/cmdline").read_bytes())
        sizes = []
        sent = 0
        for total in (2000, 12000):
            while sent < total:
                sent += 1
                proc.stdin.write(_wide_call(sent, 110) + b"\n")  # ~3 KB each
            proc.stdin.flush()
            # nothing is answered: every line is an evicted request (shaping 110 keys a request takes the
            # recorder, at nice 10, minutes on a loaded machine: wait as long as lines keep coming)
            assert wait_progressing(lambda: _complete_lines(root),
                                    lambda lines, t=total: lines == t - MAX_PENDING_REQUESTS)
            sizes.append(_rss_kib(recorder))
        proc.stdin.close()
        assert waiting.exited(proc, stall_s=60) == 0
    finally:
        proc.kill()
        proc.wait()
    growth_mib = (sizes[1] - sizes[0]) / 1024
    print(f"recorder RSS after 2,000 and 12,000 requests: {sizes[0] / 1024:.0f} -> {sizes[1] / 1024:.0f} MiB")
    assert growth_mib < 16, sizes  # before the bound: ~270 MiB more for the last 10,000 requests
    records = journal(root)
    assert len(records) == 12000 - MAX_PENDING_REQUESTS  # the rest were pending at exit
    assert {r["error"]["code"] for r in records} == {"capture-pending-evicted"}


def _post(port: int, body: bytes) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
        sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    return int(raw.split(b" ", 2)[1])


def test_exchanges_without_a_json_rpc_answer_keep_shim_http_flat(root: Path) -> None:
    with upstream() as up:
        argv = [sys.executable, "-m", "mcpeval_nb", "shim-http", "--server", "demo",
                "--listen", "127.0.0.1:0", "--upstream", up.url]
        proc = subprocess.Popen(argv, stderr=subprocess.PIPE)
        assert proc.stderr is not None
        try:
            port = int(proc.stderr.readline().decode().rsplit(":", 1)[1].split("/")[0])
            body = _wide_call(1, 32000, tool="text")  # ~0.8 MB; answered with a non-JSON body
            sizes = []
            for total in (10, 30):  # the first ten warm the allocator up
                while len(up.seen) < total:
                    assert _post(port, body) == 200
                assert wait_progressing(lambda: _complete_lines(root), lambda lines, t=total: lines == 2 * t)
                sizes.append(_rss_kib(proc.pid))
        finally:
            proc.terminate()
            proc.wait(30)
    growth_mib = (sizes[1] - sizes[0]) / 1024
    print(f"shim-http RSS after 10 and 30 exchanges: {sizes[0] / 1024:.0f} -> {sizes[1] / 1024:.0f} MiB")
    assert growth_mib < 32, sizes  # before: ~5 MiB more per exchange, for the life of the process
    assert [r["error"]["code"] for r in journal(root) if r["method"] == "tools/call"] == [
        "capture-exchange-ended"] * 30
