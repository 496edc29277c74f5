"""Benchmark: redaction check and share export over a large synthetic store, against ``cat`` as the floor.

Builds (once, cached under ``build/bench/review/``) a store of realistic journal lines: call records
written by the real encoder (varied tools, sessions, shaped args, error infos), an annotations file and a
probe history, ~1 GiB by default.  Then, in the same run and on the same warm page cache, it times
``cat store/**/*.jsonl > /dev/null`` (the floor), ``check_redaction`` and ``export_share`` (each in a fresh
child process, timed inside the child after its imports, with the child's peak RSS and its RSS after
imports) and prints MB/s, ratios to ``cat`` and memory.

Run: ``python -m bench.bench_review [--mb N]`` (``python -m bench`` runs every bench module).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "build" / "bench" / "review"
FORMAT = 1

_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
kind, root, dest = sys.argv[1], sys.argv[2], sys.argv[3]
from mcpeval_nb import ShareOptions, check_redaction, export_share
def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
base = rss_mb()
t = time.perf_counter()
c = time.process_time()
if kind == "doctor":
    report = check_redaction(root)
    done, detail = report.bytes_scanned, {"flagged": len(report.flagged), "files": report.files_scanned}
else:
    result = export_share(root, dest=dest, options=ShareOptions(force=True, include_probe_history=True))
    done, detail = result.bytes_read, {"records": result.records, "files": len(result.files)}
elapsed = time.perf_counter() - t
cpu = time.process_time() - c
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": elapsed, "cpu_seconds": cpu, "bytes": done, "rss_after_import_mb": base,
                  "peak_rss_mb": peak, **detail}))
"""


def _block(target: int) -> bytes:
    """About ``target`` bytes of varied, valid, clean journal lines from the real encoder."""
    from mcpeval_nb import CallRecord

    tools = ["get_weather", "search_docs", "create_issue", "list_files", "read_resource", "run_query"]
    lines, size, seq = [], 0, 0
    while size < target:
        tool = tools[seq % len(tools)]
        error = None
        if seq % 17 == 0:
            error = {"code": -32602, "kind": "jsonrpc", "template_id": f"{seq:016x}"}
        args = {"city": "str<32", "days": f"num:{seq % 9}", "units": "enum:metric",
                "filters": {"since": "str<8", "tags": ["str<8", "str<32"], "exact": "bool:true"}}
        record = CallRecord(ts=f"2026-11-{1 + seq % 28:02d}T01:02:03.{seq % 1000:03d}Z",
                            session=f"session-{seq % 97}", seq=seq, server="bench-server",
                            method="tools/call", tool=tool, args=args, latency_ms=seq % 700,
                            outcome="error" if error else "ok", error=error, shim_self_us=80 + seq % 50)
        line = (record.sanitized().encode() + "\n").encode()
        lines.append(line)
        size += len(line)
        seq += 1
    return b"".join(lines)


def _annotations(count: int) -> bytes:
    from mcpeval_nb import AnnotationRecord

    out = []
    for i in range(count):
        rec = AnnotationRecord(ts="2026-11-02T00:00:00.000Z", session=f"s{i % 50}", seq=i, kind="workaround",
                               note="agent retried with a narrower query" if i % 3 == 0 else "")
        out.append((rec.sanitized().encode() + "\n").encode())
    return b"".join(out)


def build_store(total_mb: int) -> Path:
    """Create (or reuse) the synthetic store; returns the capture root."""
    root = ROOT / f"store-{total_mb}mb"
    marker = root / "complete.json"
    if marker.exists() and json.loads(marker.read_text()).get("format") == FORMAT:
        return root
    shutil.rmtree(root, ignore_errors=True)
    store = root / "store"
    (store / "probes").mkdir(parents=True)
    block = _block(8 * 1024 * 1024)
    total = total_mb * 1024 * 1024
    per_file = max(total // 4, len(block))
    written = 0
    for day in range(1, 5):
        with open(store / f"calls-2026-11-{day:02d}.jsonl", "wb") as fh:
            size = 0
            while size < per_file and written < total:
                fh.write(block)
                size += len(block)
                written += len(block)
    (store / "annotations-2026-11-02.jsonl").write_bytes(_annotations(20000))
    point = {"ts": "2026-11-02T00:00:00.000Z", "server": "bench-server", "passed": True, "cases_total": 40,
             "cases_passed": 38, "score": 91}
    (store / "probes" / "history.jsonl").write_text("".join(json.dumps(point) + "\n" for _ in range(500)))
    marker.write_text(json.dumps({"format": FORMAT, "mb": total_mb}))
    return root


def _cat(root: Path) -> float:
    files = sorted(str(p) for p in (root / "store").rglob("*.jsonl"))
    start = time.perf_counter()
    with open(os.devnull, "wb") as null:
        subprocess.run(["cat", *files], stdout=null, check=True)
    return time.perf_counter() - start


def _calibrate() -> float:
    """Microseconds for ``sum(range(1000))``: how fast this Python is right now (a loaded machine is slow)."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(200):
            sum(range(1000))
        best = min(best, (time.perf_counter() - start) / 200 * 1e6)
    return best


def _child(kind: str, root: Path, dest: Path) -> dict[str, float]:
    proc = subprocess.run([sys.executable, "-c", _CHILD, kind, str(root), str(dest)], capture_output=True,
                          text=True, check=True, env=dict(os.environ, MCPEVAL_HOME=str(root)))
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _rules_cost(root: Path) -> dict[str, float]:
    """Share's per-chunk work on one 1 MiB chunk of call records with and without the read rules
    (``resanitise``), in this process, alternating, best of 7: the rules' CPU share of the export."""
    from mcpeval_nb.limits import SHARE_READ_BYTES
    from mcpeval_nb.review.sharework import process_chunk

    path = sorted((root / "store").glob("calls-*.jsonl"))[0]
    with open(path, "rb") as fh:
        data = fh.read(SHARE_READ_BYTES)
    data = data[:data.rfind(b"\n") + 1]
    best = {"": float("inf"), "calls": float("inf")}
    for _ in range(7):
        for kind in best:
            start = time.process_time()
            process_chunk(data, path=path, relpath=path.name, first_line=1, tail=False, annotation=False,
                          drop_note=False, kind=kind)
            best[kind] = min(best[kind], time.process_time() - start)
    return {"normalise_only_cpu_ms": round(best[""] * 1e3, 2),
            "with_read_rules_cpu_ms": round(best["calls"] * 1e3, 2),
            "read_rules_vs_normalise_only": round(best["calls"] / best[""], 3)}


def run(total_mb: int) -> dict[str, object]:
    """Build the store, then time cat, doctor and share side by side; print and return the figures."""
    root = build_store(total_mb)
    size = sum(p.stat().st_size for p in (root / "store").rglob("*.jsonl"))
    dest = ROOT / f"envelope-{total_mb}mb"
    _cat(root)  # warm the page cache
    cat_s = min(_cat(root) for _ in range(3))
    doctor = _child("doctor", root, dest)
    share = _child("share", root, dest)
    cat_after = min(_cat(root) for _ in range(2))
    mb = size / 1e6
    figures: dict[str, object] = {
        "store_mb": round(mb, 1),
        "cat_mb_s": round(mb / min(cat_s, cat_after), 1),
        "doctor_mb_s": round(doctor["bytes"] / 1e6 / doctor["seconds"], 1),
        "share_mb_s": round(share["bytes"] / 1e6 / share["seconds"], 1),
        "doctor_cpu_mb_s": round(doctor["bytes"] / 1e6 / doctor["cpu_seconds"], 1),
        "share_cpu_mb_s": round(share["bytes"] / 1e6 / share["cpu_seconds"], 1),
        "load_average": round(os.getloadavg()[0], 2),
        "python_sum_range_1000_us": round(_calibrate(), 1),
        "doctor_peak_rss_mb": round(doctor["peak_rss_mb"], 1),
        "doctor_rss_after_import_mb": round(doctor["rss_after_import_mb"], 1),
        "share_peak_rss_mb": round(share["peak_rss_mb"], 1),
        "share_rss_after_import_mb": round(share["rss_after_import_mb"], 1),
        "doctor_flagged": doctor["flagged"],
        "share_records": share["records"],
    }
    figures.update(_rules_cost(root))
    figures["doctor_vs_cat"] = round(float(figures["doctor_mb_s"]) / float(figures["cat_mb_s"]), 4)  # type: ignore[arg-type]
    figures["share_vs_cat"] = round(float(figures["share_mb_s"]) / float(figures["cat_mb_s"]), 4)  # type: ignore[arg-type]
    shutil.rmtree(dest, ignore_errors=True)
    print(json.dumps(figures, indent=2))
    return figures


def main(argv: list[str] | None = None) -> None:
    """Entry point: ``--mb`` sets the store size (default 1024)."""
    parser = argparse.ArgumentParser(prog="bench.bench_review")
    parser.add_argument("--mb", type=int, default=int(os.environ.get("BENCH_REVIEW_MB", "1024")))
    args = parser.parse_args([] if argv is None else argv)
    print(f"review benchmark: {args.mb} MiB synthetic store under {ROOT}", file=sys.stderr)
    run(args.mb)


if __name__ == "__main__":
    main(sys.argv[1:])
