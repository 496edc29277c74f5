"""Benchmark: ``open_store(...).calls`` against the native JSON reader and pandas, side by side.

Run ``python -m bench.bench_loader [--rounds N]``.  The store is a synthetic capture root of 1,000,000
call records written through the real writer (``synthetic_store``: 4 servers, 12 tools, 7 days), cached
under ``build/bench/store-1m`` between runs (generating it takes several minutes).  Every measurement
runs in a fresh child process after the files are in the page cache:

* ``ours``: ``open_store(root).calls`` with every check on (4 MiB line bound, tolerant tail, re-sanitised
  fields, per-line fallback to the reference reader).
* ``fallback``: the same, as installed without a C compiler (no compiled scanner: pyarrow strategies).
* ``native``: ``pyarrow.json.read_json`` per journal with an explicit schema of the scalar fields
  (``args``/``error`` ignored: it does less than we do, and enforces none of our guarantees).
* ``pandas``: ``pandas.read_json(lines=True)`` (default engine) on one day's journal, as MB/s.

Peak memory is the child's Arrow pool peak (``pyarrow.default_memory_pool().max_memory()``) and its
RSS growth (``ru_maxrss`` minus the RSS before loading), both against the final table's ``nbytes``.
``refresh()`` is timed in this process after appending 1,000 records (through the writer) to a copy.
Goals (issue 4): ours >= 0.8x native throughput, >= 5x pandas, peak <= 2x table, refresh < 50 ms.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench._stores import cached_synthetic

ROOT = Path(__file__).resolve().parent.parent / "build" / "bench"
STORE = ROOT / "store-1m"
PARAMS = {"calls": 1_000_000, "servers": 4, "tools": 12, "days": 7, "error_rate": 0.05, "seed": 1}

_CHILD = r"""
import json, resource, sys, time, glob
def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096
import pyarrow as pa, pyarrow.json as pj, pandas as pd
from mcpeval_nb import open_store
from mcpeval_nb.tables.rebuild import PARSE_SCHEMA
mode, root = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(root + "/store/calls-*.jsonl"))
before = rss()
t = time.perf_counter()
if mode in ("ours", "fallback"):
    from mcpeval_nb.tables import canon
    if mode == "fallback":
        canon._MODULE = None  # as installed without a C compiler: the pyarrow strategies
    elif not canon.available():
        raise SystemExit("the compiled scanner is not built; run `make setup`")
    table = open_store(root).calls
    size = sum(__import__("os").path.getsize(f) for f in files)
elif mode == "native":
    opts = pj.ParseOptions(explicit_schema=PARSE_SCHEMA, unexpected_field_behavior="ignore")
    table = pa.concat_tables([pj.read_json(f, read_options=pj.ReadOptions(block_size=1 << 23),
                                           parse_options=opts) for f in files])
    size = sum(__import__("os").path.getsize(f) for f in files)
else:
    frame = pd.read_json(files[0], lines=True)
    table = pa.table({"rows": pa.nulls(len(frame))})
    size = __import__("os").path.getsize(files[0])
seconds = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"mode": mode, "seconds": seconds, "bytes": size, "rows": table.num_rows,
                  "table_bytes": table.nbytes, "pool_peak": pa.default_memory_pool().max_memory(),
                  "rss_growth": max(0, peak - before)}))
"""


def child(mode: str, root: Path) -> dict[str, float]:
    """Run one measurement in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", _CHILD, mode, str(root)], capture_output=True, text=True,
                          timeout=900, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def warm(root: Path) -> None:
    """Read every journal once so all modes start from the page cache."""
    for path in sorted((root / "store").rglob("*.jsonl")):
        with path.open("rb") as fh:
            while fh.read(1 << 24):
                pass


def refresh_ms(root: Path, rounds: int) -> list[float]:
    """Milliseconds of ``refresh()`` after appending 1,000 records, on a copy of the store."""
    from mcpeval_nb import CallRecord, append_records, open_store
    copy = ROOT / "refresh-copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root / "store", copy / "store")
    store = open_store(copy)
    _ = store.calls
    out = []
    for r in range(rounds):
        records = [CallRecord(ts="2026-08-07T23:59:59.000Z", session=f"refresh-{r}", seq=i + 1,
                              server="server-0", method="tools/call", tool="tool_1", args={"q": "str<32"},
                              latency_ms=i % 300,
                              outcome="ok", shim_self_us=12, kind="real") for i in range(1000)]
        append_records(copy, records)
        t = time.perf_counter()
        added = store.refresh()
        out.append((time.perf_counter() - t) * 1000)
        assert added == 1000, added
    shutil.rmtree(copy, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> None:
    """Run the loader benchmark and print the figures (also written to build/bench/loader.json)."""
    parser = argparse.ArgumentParser(prog="bench_loader")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv or [])
    root = cached_synthetic(STORE, PARAMS)
    warm(root)
    runs: dict[str, list[dict[str, float]]] = {"ours": [], "native": [], "fallback": []}
    for _ in range(args.rounds):  # alternate, so all see the same machine load
        for mode in ("native", "ours", "fallback"):
            runs[mode].append(child(mode, root))
    pandas = child("pandas", root)
    best = {m: min(r, key=lambda x: x["seconds"]) for m, r in runs.items()}
    mbps = {m: b["bytes"] / b["seconds"] / 1e6 for m, b in best.items()}
    mbps["pandas"] = pandas["bytes"] / pandas["seconds"] / 1e6
    ours = best["ours"]
    refresh = refresh_ms(root, 5)
    figures = {
        "rows": ours["rows"], "journal_mb": ours["bytes"] / 1e6,
        "ours_s": ours["seconds"], "native_s": best["native"]["seconds"],
        "ours_mb_s": mbps["ours"], "native_mb_s": mbps["native"], "pandas_mb_s": mbps["pandas"],
        "ours_vs_native": mbps["ours"] / mbps["native"], "ours_vs_pandas": mbps["ours"] / mbps["pandas"],
        "fallback_mb_s": mbps["fallback"], "fallback_vs_native": mbps["fallback"] / mbps["native"],
        "table_mb": ours["table_bytes"] / 1e6, "pool_peak_mb": ours["pool_peak"] / 1e6,
        "rss_growth_mb": ours["rss_growth"] / 1e6,
        "pool_peak_vs_table": ours["pool_peak"] / ours["table_bytes"],
        "rss_growth_vs_table": ours["rss_growth"] / ours["table_bytes"],
        "native_rss_growth_mb": best["native"]["rss_growth"] / 1e6,
        "refresh_ms_median": statistics.median(refresh), "refresh_ms_max": max(refresh),
    }
    for key, value in figures.items():
        print(f"{key:>22}: {value:,.3f}" if isinstance(value, float) else f"{key:>22}: {value:,}")
    (ROOT / "loader.json").write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
