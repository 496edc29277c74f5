"""Benchmark: a store past memory, analysed by DuckDB in bounded memory; incremental Parquet; Dask.

Run ``python -m bench.bench_scale [--calls N] [--days D] [--memory-limit 512MB]``.  The store (default
12,000,000 call records, about 4 GB of JSONL over 30 days) is generated once and cached under
``build/bench/scale-<N>``: canonical lines are written directly from templates that the real writer
produced (``append_records``), and a sample of each day is read back through the real reader, which must
return exactly the records the templates describe.  Every measurement runs in a fresh child process and
reports its own peak RSS (``ru_maxrss``):

* ``estimate``: one day's journal loaded in memory: the calls table's bytes per row times the store's
  rows, the size the in-memory path would need (before the analysis functions' pandas frames).
* ``export``: ``Store.to_parquet`` into a fresh dataset (the full export).
* ``duckdb``: ``DuckDBEngine`` over that dataset with ``memory_limit`` set: latency summary per (server,
  tool, method), outcome rates per (server, tool), error templates, the per-day template trend.
* ``read_json``: DuckDB's own ``read_json`` over the raw JSONL doing the per-(server, tool) latency
  percentiles and outcome counts (what a user would try first), same memory limit.
* ``incremental``: one more day appended, then ``Store.to_parquet`` into the exported dataset: against
  ``export`` (goal: at least 10x faster).
* ``dask`` against ``duckdb_same``: latency summary per (server, tool) on a 2-worker ``LocalCluster``
  and on DuckDB, same dataset (Dask is for more machines, not for speed on one).

Figures go to stdout and ``build/bench/scale-<N>.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

BUILD = Path(__file__).resolve().parent.parent / "build" / "bench"
_SESSIONS = 4096
_SERVERS = 8
_TOOLS = 24

_CHILD = r"""
import json, resource, sys, time, os
step, root, dest, limit = sys.argv[1:5]
t = time.perf_counter()
out = {}
if step == "estimate":
    import pyarrow as pa
    from mcpeval_nb.tables.load import LoadReport, load_file
    from mcpeval_nb.journal.listing import journals
    from mcpeval_nb.journal.proof import Snapshot
    from mcpeval_nb.journal.snapshot import Cursor
    from pathlib import Path
    with Snapshot(journals(Path(root), "calls")[0].path) as snap:
        table = pa.Table.from_batches(list(load_file("calls", snap, Cursor(), errors="raise",
                                                     report=LoadReport())))
    out = {"rows": table.num_rows, "table_bytes": table.nbytes}
elif step in ("export", "incremental"):
    from mcpeval_nb import open_store
    e = open_store(root).to_parquet(dest)
    out = {"rows": e.rows, "files": e.files, "rewrote": e.rewrote, "kept": e.kept}
elif step in ("duckdb", "duckdb_same"):
    from mcpeval_nb import duckdb_engine
    spill = os.path.join(os.path.dirname(dest), "duck-tmp")
    with duckdb_engine(dest, memory_limit=limit, temp_directory=spill) as e:
        if step == "duckdb":
            out = {"latency_rows": e.latency_summary().num_rows,
                   "outcome_rows": e.outcome_rates().num_rows,
                   "templates": e.error_templates().num_rows, "daily": e.template_daily().num_rows}
        else:
            start = time.perf_counter()
            out = {"latency_rows": e.latency_summary(by=("server", "tool")).num_rows}
            out["query_s"] = time.perf_counter() - start
elif step == "read_json":
    import duckdb
    con = duckdb.connect(config={"memory_limit": limit, "autoinstall_known_extensions": False,
                                 "temp_directory": os.path.join(os.path.dirname(dest), "duck-tmp")})
    rows = con.execute(
        "SELECT server, tool, count(*) AS n, quantile_cont(latency_ms, [0.5, 0.9, 0.95, 0.99]) AS q, "
        "max(latency_ms), count(*) FILTER (WHERE outcome = 'ok') AS ok, "
        "count(*) FILTER (WHERE outcome = 'error') AS err "
        f"FROM read_json('{root}/store/calls-*.jsonl', format = 'newline_delimited') "
        "WHERE latency_ms IS NOT NULL GROUP BY ALL").fetchall()
    out = {"latency_rows": len(rows)}
elif step == "dask":
    from distributed import Client, LocalCluster
    from mcpeval_nb import dask_engine
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, memory_limit="2GiB") as cluster, Client(cluster) as client:
        start = time.perf_counter()
        engine = dask_engine(dest, client=client)
        out = {"latency_rows": engine.latency_summary(by=("server", "tool")).num_rows}
        out["query_s"] = time.perf_counter() - start
out["seconds"] = time.perf_counter() - t
out["peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps(out))
"""


def _templates() -> list[str]:
    """Canonical call lines written by the real writer, with placeholders for the varying fields."""
    import tempfile

    from mcpeval_nb import CallRecord, append_records, error_info
    from mcpeval_nb.privacy import shape

    salt = b"bench-scale-salt" * 2
    messages = ("connection to {h} refused after {n} ms", "rate limit exceeded: retry in {n} seconds",
                "element '{h}' not found on page {n}")
    records = []
    for tool in range(_TOOLS):
        args = shape({"query": "x" * (tool + 3), "limit": tool})
        records.append(CallRecord(ts="2026-01-01T00:00:00.000Z", session="session:" + "0" * 64, seq=777777777,
                                  server="SERVER", method="tools/call", tool=f"tool_{tool}", args=args,
                                  latency_ms=888888888, outcome="ok", shim_self_us=55, kind="real"))
        for k, message in enumerate(messages):
            err = error_info({"code": -32000 - k, "message": message.format(h=f"host{tool}", n=tool)}, salt)
            records.append(CallRecord(ts="2026-01-01T00:00:00.000Z", session="session:" + "0" * 64,
                                      seq=777777777, server="SERVER", method="tools/call",
                                      tool=f"tool_{tool}", args=args, latency_ms=888888888, outcome="error",
                                      error=err, shim_self_us=55, kind="real"))
    with tempfile.TemporaryDirectory() as tmp:
        append_records(tmp, records)
        lines = next(Path(tmp, "store").glob("calls-*.jsonl")).read_text().splitlines()
    out = []
    for line in lines:
        for old, new in (("%", "%%"), ("2026-01-01T00:00:00.000Z", "%(ts)s"), ("0" * 64, "%(session)s"),
                         ("777777777", "%(seq)d"), ("888888888", "%(latency)d"),
                         ('"SERVER"', '"%(server)s"')):
            line = line.replace(old, new)
        out.append(line + "\n")
    return out


def _write_day(root: Path, day: int, calls: int, templates: list[str], seed: int) -> None:
    import datetime as dt
    import random

    rng = random.Random(seed * 1_000_003 + day)
    date = dt.date(2026, 8, 1) + dt.timedelta(days=day)
    sessions = [f"{rng.getrandbits(256):064x}" for _ in range(_SESSIONS)]
    ok = [t for t in templates if '"outcome":"ok"' in t]
    bad = [t for t in templates if '"outcome":"ok"' not in t]
    path = root / "store" / f"calls-{date.isoformat()}.jsonl"
    with open(path, "w", buffering=1 << 24) as fh:
        lines = []
        for i in range(calls):
            ms = i * 86_400_000 // calls
            s, milli = divmod(ms, 1000)
            ts = f"{date.isoformat()}T{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{milli:03d}Z"
            template = rng.choice(bad) if rng.random() < 0.04 else rng.choice(ok)
            lines.append(template % {"ts": ts, "session": sessions[i % _SESSIONS], "seq": day * calls + i + 1,
                                     "latency": int(rng.lognormvariate(4.5, 0.8)),
                                     "server": f"server-{i % _SERVERS}"})
            if len(lines) >= 100_000:
                fh.write("".join(lines))
                lines = []
        fh.write("".join(lines))


def _check_sample(root: Path, templates: list[str]) -> None:
    """The real reader reads a sample of every day as the records the templates say."""
    from mcpeval_nb import read_records

    for path in sorted((root / "store").glob("calls-*.jsonl")):
        with open(path) as fh:
            head = [next(fh) for _ in range(1000)]
        sample = root / "sample" / "store" / path.name
        sample.parent.mkdir(parents=True, exist_ok=True)
        sample.write_text("".join(head))
        entries = list(read_records(sample))
        assert len(entries) == 1000, (path, len(entries))
        assert all(e.record.kind == "real" and e.record.tool is not None for e in entries)
        shutil.rmtree(root / "sample")


def ensure_store(calls: int, days: int) -> Path:
    """The cached store of ``calls`` records over ``days`` days (generated when absent)."""
    root = BUILD / f"scale-{calls}" / "root"
    marker = root.parent / "READY"
    params = {"calls": calls, "days": days, "version": 1}
    if marker.exists() and json.loads(marker.read_text()) == params:
        return root
    shutil.rmtree(root.parent, ignore_errors=True)
    (root / "store").mkdir(parents=True)
    templates = _templates()
    t = time.perf_counter()
    for day in range(days):
        _write_day(root, day, calls // days + (1 if day < calls % days else 0), templates, seed=1)
        print(f"generated day {day + 1}/{days} ({time.perf_counter() - t:.0f} s)", file=sys.stderr,
              flush=True)
    _check_sample(root, templates)
    marker.write_text(json.dumps(params))
    return root


def child(step: str, root: Path, dest: Path, limit: str) -> dict[str, float]:
    """One measurement in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", _CHILD, step, str(root), str(dest), limit],
                          capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:]
        print(f"{step} failed: {tail}", file=sys.stderr, flush=True)
        return {"failed": 1.0, "seconds": 0.0}
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"{step}: {result}", file=sys.stderr, flush=True)
    return result


def main(argv: list[str] | None = None) -> None:
    """Run the scale benchmark and print the figures."""
    parser = argparse.ArgumentParser(prog="bench_scale")
    parser.add_argument("--calls", type=int, default=12_000_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--memory-limit", default="512MB")
    parser.add_argument("--skip-dask", action="store_true")
    args = parser.parse_args(argv or [])
    root = ensure_store(args.calls, args.days)
    work = root.parent / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    dest = work / "calls.parquet"
    size = sum(p.stat().st_size for p in (root / "store").glob("calls-*.jsonl"))
    figures: dict[str, object] = {"calls": args.calls, "jsonl_bytes": size, "memory_limit": args.memory_limit}
    est = child("estimate", root, dest, args.memory_limit)
    figures["in_memory_table_bytes_estimate"] = int(est["table_bytes"] / est["rows"] * args.calls)
    figures["export"] = child("export", root, dest, args.memory_limit)
    figures["duckdb"] = child("duckdb", root, dest, args.memory_limit)
    figures["read_json"] = child("read_json", root, dest, args.memory_limit)
    extra = root / "store" / "calls-2026-12-31.jsonl"
    try:
        _write_day(root, 152, args.calls // args.days, _templates(), seed=2)
        figures["incremental"] = child("incremental", root, dest, args.memory_limit)
    finally:
        extra.unlink(missing_ok=True)
    export_s, inc_s = figures["export"]["seconds"], figures["incremental"]["seconds"]  # type: ignore[index]
    figures["incremental_speedup"] = export_s / inc_s if inc_s else None
    figures["duckdb_same"] = child("duckdb_same", root, dest, args.memory_limit)
    if not args.skip_dask:
        figures["dask"] = child("dask", root, dest, args.memory_limit)
    print(json.dumps(figures, indent=2))
    (BUILD / f"scale-{args.calls}.json").write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
