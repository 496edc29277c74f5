"""The demo's probe step: a manifest and the readiness battery against fixture servers, several times.

Every full run appends a readiness trend point, so the capture root gets a history with a change in it:
the ``counter`` server is probed clean, clean, in its ``broken`` mode (scores drop), then clean again
with ``confirm_read_only`` (a measurement-profile change: the trends mark that point as not
comparable); the ``broken`` server is probed twice.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mcpeval_nb import ProbeOptions, ProbeReport, run_probes

__all__ = ["MANIFEST", "PLAN", "QUICK_PLAN", "ProbeRun", "probe_runs"]

Say = Callable[[str], None]
_SERVERS = Path(__file__).resolve().parent.parent / "testing" / "servers"
#: The demo manifest (read-only cases against the fixture counter server).
MANIFEST = Path(__file__).resolve().parents[2] / "data" / "manifests" / "probe-fixture.manifest.json"


@dataclass(frozen=True)
class ProbeRun:
    """One planned run: server label, fixture file, mode argument, read-only attestation."""

    server: str
    fixture: str
    mode: tuple[str, ...] = ()
    confirm_read_only: bool = False


PLAN = (
    ProbeRun("counter", "probe_clean.py"),
    ProbeRun("counter", "probe_clean.py"),
    ProbeRun("counter", "probe_clean.py", ("broken",)),
    ProbeRun("counter", "probe_clean.py", confirm_read_only=True),
    ProbeRun("broken", "probe_broken.py"),
    ProbeRun("broken", "probe_broken.py"),
)

#: A shorter plan with the same features (a drop and a profile change), for test set-up.
QUICK_PLAN = (PLAN[0], PLAN[2], PLAN[3])


def probe_runs(root: Path, *, say: Say, manifest: Path = MANIFEST,
               plan: tuple[ProbeRun, ...] = PLAN) -> list[ProbeReport]:
    """Run ``plan`` with the standard battery; each full run records its trend point.

    Args:
        root: the capture root (synthetic call records and the trend history go here).
        say: progress lines.
        manifest: the manifest every run uses.
        plan: the runs (``PLAN`` or ``QUICK_PLAN``).

    Returns:
        The reports, in run order.
    """
    reports = []
    for i, run in enumerate(plan, start=1):
        argv = [sys.executable, str(_SERVERS / run.fixture), *run.mode]
        options = ProbeOptions(server=run.server, root=root, confirm_read_only=run.confirm_read_only)
        report = run_probes(argv, manifest=manifest, options=options)  # a full run records its trend point
        score = "-" if report.readiness is None else report.readiness.score
        gate = report.gate or {"passed": 0, "total": 0}
        say(f"probe {i}/{len(plan)}: {run.server} gate {gate['passed']}/{gate['total']} readiness {score}")
        reports.append(report)
    return reports
