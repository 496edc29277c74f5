"""Helpers for the probe tests: fixture commands started by path (fast), manifests, free ports."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any

import mcpeval_nb
from mcpeval_nb.testing import servers
from tests import waiting

SERVERS = Path(servers.__file__).resolve().parent
CANARY = "CANARY"


def fixture(name: str, *args: str) -> list[str]:
    """argv that starts fixture server ``name`` by path (the package is not imported: quick start)."""
    return [sys.executable, str(SERVERS / f"{name}.py"), *args]


def free_port() -> int:
    """A loopback TCP port the OS just handed out (closed again)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def case(case_id: str, probe: str, **fields: Any) -> dict[str, Any]:
    """A read-only manifest case."""
    return {"id": case_id, "probe": probe, "access": "read_only", **fields}


#: The sandbox ``writer_case`` names: the fixture servers keep their state in their own memory.
SANDBOXES = {"fixture": {"description": "the fixture server's own in-memory state"}}


def writer_case(case_id: str, probe: str, **fields: Any) -> dict[str, Any]:
    """A mutating case in the ``fixture`` sandbox: needed for tools annotated as writers (the probe
    fixtures' ``break_session`` and ``recover_session``), with ``sandboxes=SANDBOXES`` in the manifest and
    ``allow_mutation=True`` on the run."""
    return {"id": case_id, "probe": probe, "access": "mutating", "sandbox": "fixture", **fields}


def manifest(*cases: dict[str, Any], timeout_ms: int | None = None, **extra: Any) -> dict[str, Any]:
    """A version-1 manifest with these cases."""
    doc: dict[str, Any] = {"version": 1, "probes": list(cases), **extra}
    if timeout_ms is not None:
        doc["timeout_ms"] = timeout_ms
    return doc


def run(command: list[str] | str, doc: dict[str, Any], *, progress: Any = None,
        **options: Any) -> mcpeval_nb.ProbeReport:
    """Run ``doc`` against ``command`` with journaling and the readiness battery off unless asked."""
    options.setdefault("journal", False)
    options.setdefault("battery", None)
    options.setdefault("server", "fixture")
    return mcpeval_nb.run_probes(command, manifest=doc, options=mcpeval_nb.ProbeOptions(**options),
                                 progress=progress)


def verdicts(report: mcpeval_nb.ProbeReport) -> dict[str, tuple[bool, str | None, int | None]]:
    """case id -> (passed, reason, first_failure)."""
    return {c.id: (c.passed, c.reason, c.first_failure) for c in report.cases}


def run_cli(*args: str, root: Path, timeout: float = 120) -> Any:
    """``python -m mcpeval_nb ARGS`` as a real process with ``root`` as its ``MCPEVAL_HOME`` (a minimal
    environment); the completed process, text mode."""

    return waiting.run([sys.executable, "-m", "mcpeval_nb", *args], capture_output=True, text=True,
                       env={"MCPEVAL_HOME": str(root), "PATH": "/usr/bin:/bin"}, stall_s=timeout)
