"""Helpers for the doctor and share tests: stores built with the real writer plus hand-written lines."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

from mcpeval_nb import AnnotationRecord, CallRecord, TrendPoint, append_record, append_records
from tests import waiting

DAY = "2026-11-30"
TS = f"{DAY}T01:02:03.456Z"


def call(seq: int, *, session: str = "sess-a", tool: str = "get_weather") -> CallRecord:
    """A realistic call record (shaped args, latency, ok outcome)."""
    return CallRecord(ts=TS, session=session, seq=seq, server="weather", method="tools/call", tool=tool,
                      args={"city": "Lisbon", "days": 3, "units": "metric"}, latency_ms=40 + seq,
                      outcome="ok", shim_self_us=90)


def clean_store(root: Path, *, calls: int = 5, note: str = "") -> Path:
    """Calls, one annotation (with ``note``) and one trend point, all through ``append_record``."""
    append_records(root, [call(seq) for seq in range(calls)])
    append_record(root, AnnotationRecord(ts=TS, session="sess-a", seq=1, kind="workaround", note=note))
    append_record(root, TrendPoint(ts=TS, server="weather", passed=True, cases_total=4, cases_passed=4,
                                   score=97))
    return root / "store"


def append_raw(path: Path, text: str | bytes) -> int:
    """Append hand-written bytes (a foreign or hand-edited journal); returns the new line count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8") if isinstance(text, str) else text
    with open(path, "ab") as fh:
        fh.write(data)
    return path.read_bytes().count(b"\n")


def tree_bytes(top: Path) -> dict[str, bytes]:
    """Every regular file under ``top`` (relative path -> bytes), plus directories as ``<dir>/``."""
    out: dict[str, bytes] = {}
    if not top.exists():
        return out
    for dirpath, dirnames, filenames in os.walk(top):
        rel = os.path.relpath(dirpath, top)
        for name in dirnames:
            out[os.path.normpath(os.path.join(rel, name)) + "/"] = b""
        for name in filenames:
            out[os.path.normpath(os.path.join(rel, name))] = Path(dirpath, name).read_bytes()
    return out


def run_cli(*args: str, root: Path) -> subprocess.CompletedProcess[str]:
    """Run the ``mcpeval-nb`` CLI in this process (MCPEVAL_HOME=root), capturing stdout and stderr."""
    from mcpeval_nb.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.environ.get("MCPEVAL_HOME")
    os.environ["MCPEVAL_HOME"] = str(root)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:
                code = exc.code
    finally:
        if old is None:
            del os.environ["MCPEVAL_HOME"]
        else:
            os.environ["MCPEVAL_HOME"] = old
    return subprocess.CompletedProcess(list(args), int(code or 0), out.getvalue(), err.getvalue())


def run_cli_process(*args: str, root: Path, env: dict[str, str] | None = None,
                    timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``python -m mcpeval_nb`` as a real process with MCPEVAL_HOME=root."""
    full_env = dict(os.environ, MCPEVAL_HOME=str(root), **(env or {}))
    return waiting.run([sys.executable, "-m", "mcpeval_nb", *args], capture_output=True, text=True,
                       env=full_env, stall_s=timeout, check=False)
