"""A real writer process appends while the store loads and refreshes: no torn or lost records."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mcpeval_nb import open_store
from tests.waiting import tree_cpu, until

WRITER = r"""
import sys
from mcpeval_nb import CallRecord, append_records
root, total = sys.argv[1], int(sys.argv[2])
for start in range(1, total + 1, 25):
    append_records(root, [CallRecord(ts="2026-08-04T12:00:00.000Z", session="writer", seq=i, server="demo",
                                     method="tools/call", tool="t", args={"q": "x" * (i % 300)},
                                     latency_ms=i, outcome="ok", shim_self_us=1, kind="real")
                          for i in range(start, min(total, start + 24) + 1)])
"""


def test_refresh_while_a_writer_appends_sees_every_record_once_in_order(root: Path) -> None:
    total = 1500
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(root), str(total)])
    try:
        store = open_store(root)
        def refreshed_until_done() -> bool:
            if (root / "store").exists():
                store.refresh()
            return writer.poll() is not None

        # refresh for as long as the writer works, however slowly (tests/waiting.py)
        assert until(refreshed_until_done, progress=lambda: tree_cpu(writer.pid)) and writer.wait() == 0
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait(timeout=10)
    store.refresh()
    assert store.calls.column("seq").to_pylist() == list(range(1, total + 1))
    assert store.calls.column("latency_ms").to_pylist() == list(range(1, total + 1))
