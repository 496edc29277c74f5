"""serve under load, loopback only and bounded in count and time: 1,000 sequential requests and 50
concurrent clients against a real ``mcpeval-nb serve`` process leave its resident set flat, its thread
count unchanged and no child process behind; SIGTERM then stops it cleanly (exit 0)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests import waiting
from tests.serve_support import call, children, request, rpc, seeded_root

SEQUENTIAL = 1000
CLIENTS = 50
ROUNDS = 4
#: Growth allowed between the warmed-up resident set and the one after the load (allocator noise).
RSS_SLACK_KIB = 4 * 1024


def _status(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    raise AssertionError(key)


def test_sequential_and_concurrent_load_keeps_the_server_flat(tmp_path: Path) -> None:
    root = seeded_root(tmp_path / "root")
    proc = subprocess.Popen([sys.executable, "-m", "mcpeval_nb", "serve", "--listen", "127.0.0.1:0",
                             "--root", str(root)], stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith("mcpeval-nb serve: listening on http://127.0.0.1:"), line
        address = ("127.0.0.1", int(line.rsplit(":", 1)[1].split("/")[0]))
        bodies = [rpc("tools/list", 1), rpc("ping", 2),
                  rpc("tools/call", 3, name="get_readiness_trends", arguments={})]

        def client(n: int) -> int:
            found = 0
            for _ in range(ROUNDS):
                reply = call(address, "list_findings", {} if n % 2 else {"state": "open"})
                found += len(reply["result"]["structuredContent"]["findings"]) > 0
            return found

        for i in range(100):  # warm-up: imports, caches, every worker's allocator arena
            assert request(address, bodies[i % 3])[0] == 200
        with ThreadPoolExecutor(CLIENTS) as pool:
            assert sum(pool.map(client, range(CLIENTS))) == CLIENTS * ROUNDS
        warmed, threads = _status(proc.pid, "VmRSS"), _status(proc.pid, "Threads")
        started = time.monotonic()
        for i in range(SEQUENTIAL):
            status, _, body = request(address, bodies[i % 3])
            assert status == 200 and json.loads(body)["id"] == i % 3 + 1
        sequential_s = time.monotonic() - started
        after_sequential = _status(proc.pid, "VmRSS")
        started = time.monotonic()
        with ThreadPoolExecutor(CLIENTS) as pool:
            answered = sum(pool.map(client, range(CLIENTS)))
        concurrent_s = time.monotonic() - started
        after_concurrent = _status(proc.pid, "VmRSS")
        print(f"serve load: rss warmed {warmed} KiB, after {SEQUENTIAL} sequential {after_sequential} KiB "
              f"({sequential_s:.1f} s), after {CLIENTS} clients x {ROUNDS} {after_concurrent} KiB "
              f"({concurrent_s:.1f} s); threads {threads} -> {_status(proc.pid, 'Threads')}")
        assert answered == CLIENTS * ROUNDS
        assert after_sequential - warmed < RSS_SLACK_KIB and after_concurrent - warmed < RSS_SLACK_KIB
        assert _status(proc.pid, "Threads") == threads and children(proc.pid) == set()
        proc.send_signal(signal.SIGTERM)
        assert waiting.exited(proc, stall_s=20) == 0
        assert proc.stderr.read() == ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
