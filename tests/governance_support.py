"""Helpers for the governance tests: small stores with known sessions, and a census of the journals."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from mcpeval_nb import AnnotationRecord, CallRecord, append_records, opaque_session
from tests import waiting

CANARY = "CANARY-gov-5d1e"


def calls(session: str, server: str, n: int, *, day: str = "2026-08-01", start: int = 1) -> list[CallRecord]:
    """``n`` ok calls of one session, seq ``start``.., on ``day``."""
    return [CallRecord(ts=f"{day}T12:00:00.000Z", session=session, seq=i, server=server,
                       method="tools/call", tool="t", args={"n": i}, outcome="ok")
            for i in range(start, start + n)]


def note(session: str, seq: int, *, day: str = "2026-08-02", text: str = CANARY) -> AnnotationRecord:
    return AnnotationRecord(ts=f"{day}T12:00:00.000Z", session=session, seq=seq, kind="workaround",
                            note=text)


def seed(root: Path, sessions: dict[str, str], n: int, days: tuple[str, ...] = ("2026-08-01",)) -> None:
    """``n`` calls per (session -> server) per day, and one annotation per session."""
    records: list[Any] = []
    for day in days:
        for session, server in sessions.items():
            records += calls(session, server, n, day=day)
    records += [note(session, 1) for session in sessions]
    append_records(root, records)


def census(root: Path) -> Counter[tuple[str, str, int]]:
    """(kind, session token, seq) -> how many times it is in the store (blank lines must not exist)."""
    found: Counter[tuple[str, str, int]] = Counter()
    for path in sorted((root / "store").glob("*.jsonl")):
        kind = "annotation" if path.name.startswith("annotations-") else "call"
        for line in path.read_bytes().split(b"\n")[:-1]:
            assert line.strip(), f"blank line left in {path.name}"
            record = json.loads(line)
            found[(kind, record["session"], record.get("seq"))] += 1
    return found


def token(raw: str) -> str:
    return opaque_session(raw)


def store_bytes(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / "store").rglob("*")) if p.is_file()}


def cli(*argv: str, env: dict[str, str] | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a child process."""
    return waiting.run([sys.executable, "-m", "mcpeval_nb", *argv], capture_output=True, text=True,
                       stall_s=timeout, env={**os.environ, **(env or {})})
