"""``make demo``: the most complete main job that exists.

Stage 1 (foundation): replay recorded raw JSON-RPC exchanges (``data/demo/exchanges.jsonl``: canary
strings, tool errors, protocol errors, a notification, unparsed frames) through the correlator and the
privacy boundary into a fresh capture root with the real writer, then read the journal back through the
reader and print a per-tool summary.  Nothing printed comes from a payload.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from pathlib import Path

from . import Correlator, append_record, load_salt, read_records
from .home import store_dir

__all__ = ["main", "replay_exchanges", "summarize"]

REPO = Path(__file__).resolve().parent.parent


def replay_exchanges(exchanges: Path, root: Path, *, server: str = "demo",
                     session: str = "demo-session") -> int:
    """Feed recorded frames through a correlator and append the records; returns how many."""
    salt = load_salt(root)
    correlator = Correlator(server=server, session=session, salt=salt)
    written = 0
    with open(exchanges, encoding="utf-8") as fh:
        for line in fh:
            ex = json.loads(line)
            frame = ex["frame"].encode("utf-8")
            if ex["direction"] == "outbound":
                record = correlator.on_outbound(frame, now_ms=ex["at_ms"])
            else:
                record = correlator.on_inbound(frame, now_ms=ex["at_ms"])
            if record is not None:
                append_record(root, record)
                written += 1
    return written


def summarize(root: Path) -> list[str]:
    """Per (method, tool) counts, errors and median latency, read back through the journal reader."""
    rows: dict[tuple[str, str], list[tuple[str, int | None]]] = {}
    for path in sorted(store_dir(root).glob("calls-*.jsonl")):
        for entry in read_records(path):
            rec = entry.record
            rows.setdefault((rec.method, rec.tool or "-"), []).append((rec.outcome, rec.latency_ms))
    lines = [f"{'method':<22} {'tool':<18} {'calls':>5} {'errors':>6} {'p50 ms':>7}"]
    for (method, tool), calls in sorted(rows.items()):
        lats = [lat for _, lat in calls if lat is not None]
        p50 = f"{statistics.median(lats):.0f}" if lats else "-"
        errors = sum(1 for outcome, _ in calls if outcome == "error")
        lines.append(f"{method:<22} {tool:<18} {len(calls):>5} {errors:>6} {p50:>7}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Build ``build/demo/root`` from the recorded exchanges and print the summary."""
    parser = argparse.ArgumentParser(prog="python -m mcpeval_nb.demo")
    parser.add_argument("--out", type=Path, default=REPO / "build" / "demo")
    args = parser.parse_args(argv)
    root = args.out / "root"
    if root.exists():
        shutil.rmtree(root)
    count = replay_exchanges(REPO / "data" / "demo" / "exchanges.jsonl", root)
    print(f"replayed recorded exchanges into {root}: {count} call records", file=sys.stderr)
    for line in summarize(root):
        print(line)
    print(f"\ncapture root: {root}\njournals:     {store_dir(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
