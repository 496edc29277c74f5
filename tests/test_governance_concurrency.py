"""Erase while real shims append to the same journal: no record that was not erased is lost or doubled.

Four real ``mcpeval-nb shim`` processes (each in front of the echo fixture) and one appender that
behaves like the Rust tool (open, blocking exclusive flock, one write, close, per record) append to
today's journal while erases of a victim session run in a loop, each after a fresh batch of victim
records.  A copy renamed over the journal would lose the records of an appender waiting on the old
file's lock; the in-place rewrite must not.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

from mcpeval_nb import append_records, erase
from tests import waiting

from .governance_support import calls, census, token
from .shim_helpers import call, run, shim_argv

SHIMS = 4
PER_SHIM = 3000
RUSTY = 3000

_RUST_STYLE = r"""
import fcntl, os, sys
from mcpeval_nb import CallRecord
from mcpeval_nb.journal import encode_line
path, day, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(1, n + 1):
    line = encode_line(CallRecord(ts=day + "T00:00:00.000Z", session="rusty", seq=i, server="r",
                                  method="tools/call", outcome="ok"))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)  # blocks without a deadline, as the Rust tool's lock does
    os.write(fd, line)
    os.close(fd)
"""


def test_four_shims_and_a_rust_style_appender_lose_nothing_to_concurrent_erases(tmp_path: Path) -> None:
    day = dt.datetime.now(dt.UTC).date().isoformat()
    journal = tmp_path / "store" / f"calls-{day}.jsonl"
    append_records(tmp_path, calls("victim", "v", 200, day=day))
    stdin = b"".join(call(i, "echo", text="x") for i in range(1, PER_SHIM + 1))
    results: list[int] = []

    def shim(k: int) -> None:
        done = run(shim_argv(server=f"w{k}"), stdin, timeout=300,
                   env={"MCPEVAL_HOME": str(tmp_path), "MCPEVAL_SESSION": f"shim-{k}"})
        results.append(done.returncode)

    threads = [threading.Thread(target=shim, args=(k,)) for k in range(SHIMS)]
    rusty = subprocess.Popen([sys.executable, "-c", _RUST_STYLE, str(journal), day, str(RUSTY)],
                             env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    for thread in threads:
        thread.start()
    erases = removed = 0
    while any(t.is_alive() for t in threads) or rusty.poll() is None:
        removed += erase(tmp_path, session="victim").removed["calls"]
        erases += 1
        append_records(tmp_path, calls("victim", "v", 200, day=day, start=erases * 1000))
    for thread in threads:
        thread.join()
    assert waiting.exited(rusty, stall_s=60) == 0 and results == [0] * SHIMS
    removed += erase(tmp_path, session="victim").removed["calls"]
    assert erases >= 3, "the erases did not overlap the appends"
    assert removed == 200 * (erases + 1)
    found = census(tmp_path)
    assert not any(session == token("victim") for _, session, _ in found)
    for name, count in [*((f"shim-{k}", PER_SHIM) for k in range(SHIMS)), ("rusty", RUSTY)]:
        mine = Counter({seq: n for (_, session, seq), n in found.items() if session == token(name)})
        assert sorted(mine) == list(range(1, count + 1)), f"{name} lost records"
        assert set(mine.values()) == {1}, f"{name} has doubled records"
