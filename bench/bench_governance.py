"""Benchmark: ``erase`` over a large store, against ``cat`` (reading every byte) and ``cp`` (reading and
writing every byte, the least a copy-and-rename erase would cost) measured in the same run.

Builds (once, cached under ``build/bench/governance/``) a store of canonical call lines from the real
encoder: ``--days`` journals of 100 sessions each, ~``--mb`` MB in all.  Each erase runs in a fresh
child process on a fresh copy of the store, timed inside the child after its imports:

- ``erase-spread``: a session with records in every journal (the whole store is filtered and every
  journal is rewritten from the session's first record on);
- ``erase-recent``: a session that only appears in the last day (a scan of every journal, one tail
  rewritten);
- ``erase-unknown``: a session that is not there (the scan alone; no byte is written).

Run: ``python -m bench.bench_governance [--mb N] [--days N]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "build" / "bench" / "governance"
SESSIONS = 100

_CHILD = r"""
import json, sys, time
from mcpeval_nb import erase
root, session = sys.argv[1], sys.argv[2]
t = time.perf_counter()
result = erase(root, session=session)
print(json.dumps({"seconds": time.perf_counter() - t, "calls": result.removed["calls"],
                  "journals": len(result.files)}))
"""


def _build(root: Path, mb: int, days: int) -> None:
    from mcpeval_nb import CallRecord

    store = root / "store"
    store.mkdir(parents=True)
    per_day = mb * 1024 * 1024 // days
    for day in range(1, days + 1):
        lines, size, seq = [], 0, 0
        while size < per_day:
            seq += 1
            session = f"s{seq % SESSIONS}" if day < days or seq % SESSIONS else "recent-only"
            record = CallRecord(ts=f"2026-10-{day:02d}T01:02:03.{seq % 1000:03d}Z", session=session, seq=seq,
                                server="bench", method="tools/call", tool=f"tool_{seq % 7}",
                                args={"q": "str<32", "n": f"num:{seq % 9}"}, latency_ms=seq % 700,
                                outcome="ok", shim_self_us=80)
            line = (record.sanitized().encode() + "\n").encode()
            lines.append(line)
            size += len(line)
        (store / f"calls-2026-10-{day:02d}.jsonl").write_bytes(b"".join(lines))


def _timed(argv: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> None:
    """Build (or reuse) the store, run the three erases and the two floors, print the ratios."""
    parser = argparse.ArgumentParser(prog="bench_governance")
    parser.add_argument("--mb", type=int, default=256)
    parser.add_argument("--days", type=int, default=8)
    args = parser.parse_args(argv if argv is not None else sys.argv[1:] if __name__ == "__main__" else [])
    source = ROOT / f"store-{args.mb}mb-{args.days}d"
    if not source.exists():
        tmp = source.with_suffix(".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        _build(tmp, args.mb, args.days)
        tmp.rename(source)
    journals = sorted(str(p) for p in (source / "store").glob("*.jsonl"))
    size = sum(Path(p).stat().st_size for p in journals) / 1e6
    cat = _timed(["cat", *journals])
    copy_dir = ROOT / "cp-floor"
    shutil.rmtree(copy_dir, ignore_errors=True)
    cp = _timed(["cp", "-r", str(source / "store"), str(copy_dir)])
    shutil.rmtree(copy_dir, ignore_errors=True)
    print(f"store {size:.0f} MB in {len(journals)} journals; cat {cat:.2f} s, cp {cp:.2f} s")
    from mcpeval_nb import opaque_session

    for name, session in (("erase-spread", "s7"), ("erase-recent", "recent-only"), ("erase-unknown", "none")):
        work = ROOT / "work"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(source, work)
        out = subprocess.run([sys.executable, "-c", _CHILD, str(work), opaque_session(session)],
                             check=True, capture_output=True, text=True).stdout
        got = json.loads(out)
        print(f"{name}: {got['seconds']:.2f} s ({size / got['seconds']:.0f} MB/s), {got['calls']} calls from "
              f"{got['journals']} journal(s); {got['seconds'] / cat:.2f}x cat, {got['seconds'] / cp:.2f}x cp")
    shutil.rmtree(ROOT / "work", ignore_errors=True)


if __name__ == "__main__":
    main()
