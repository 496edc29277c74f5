"""The demo's findings step: a broken fixture server captured, promoted, fixed and verified closed.

``fixture-counter`` is the package's ``probe_clean`` fixture server in ``broken`` mode behind the real
shim: every session's third ``read_counter`` call fails, so the failure recurs across sessions and is
promoted.  The demo then writes the reproducing manifest, verifies it against the still-broken server
(red: ``fix-claimed``), "fixes" the server (``clean`` mode) and verifies three times (``verifying``,
``verifying``, ``closed``).  Tests use ``capture_broken_sessions`` and ``REPRO_MANIFEST`` too.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpeval_nb import (
    PromoteResult,
    StdioTarget,
    VerifyResult,
    build_index,
    promote,
    render_findings,
    verify_finding,
)
from mcpeval_nb.testing import server_command
from mcpeval_nb.transport import McpSession

__all__ = ["FIXTURE_LABEL", "REPRO_MANIFEST", "FindingsDemo", "capture_broken_sessions", "findings_step"]

Say = Callable[[str], None]
FIXTURE_LABEL = "fixture-counter"
#: The case that reproduces the fixture's finding: five reads, the third of which fails while broken.
REPRO_MANIFEST: dict[str, Any] = {
    "version": 1,
    "sandboxes": {},
    "probes": [
        {
            "id": "repeat-read",
            "probe": "degradation-over-n",
            "access": "read_only",
            "tool": "read_counter",
            "arguments": {},
            "max_attempts": 5,
        }
    ],
}


@dataclass(frozen=True)
class FindingsDemo:
    """What the step did: the promotion, the finding verified, and each verify run."""

    promotion: PromoteResult
    finding_id: str | None
    runs: tuple[VerifyResult, ...]


def capture_broken_sessions(
    root: Path, *, sessions: int = 4, mode: str = "broken", label: str = FIXTURE_LABEL
) -> int:
    """Record ``sessions`` scripted sessions with ``probe_clean <mode>`` behind the real stdio shim.

    Each session reads the counter three times with a status call after each read (in ``broken`` mode the
    third read fails).  Returns the tool calls made.

    Raises:
        TransportError: the shim or the server failed.
    """
    made = 0
    for _ in range(sessions):
        argv = (
            sys.executable,
            "-m",
            "mcpeval_nb",
            "shim",
            "--server",
            label,
            "--root",
            str(root),
            "--",
            *server_command("probe_clean", mode),
        )
        with McpSession.connect(StdioTarget(argv), timeout=60.0) as session:
            session.initialize(capabilities={})
            session.list_tools()
            for _ in range(3):
                session.call_tool("read_counter", {})
                session.call_tool("describe_status", {})
                made += 2
    return made


def findings_step(root: Path, *, say: Say) -> FindingsDemo:
    """Capture the broken fixture, index, promote, then verify its finding until it closes.

    Raises:
        TransportError: a server failed. FindingsError: the index or lifecycle could not be used.
    """
    calls = capture_broken_sessions(root)
    say(f"findings: {calls} tool calls captured from {FIXTURE_LABEL} (probe_clean broken) behind the shim")
    say(f"findings: {build_index(root).line()}")
    promotion = promote(root)
    say(f"findings: {promotion.line()}")
    found = [
        line.split()[1]
        for line in render_findings(root).splitlines()
        if line.startswith("finding ") and f" {FIXTURE_LABEL}/read_counter " in line
    ]
    if not found:
        return FindingsDemo(promotion, None, ())
    finding = found[0]
    manifest = root.parent / "repro.manifest.json"
    manifest.write_text(json.dumps(REPRO_MANIFEST, indent=2) + "\n", encoding="utf-8")
    runs = []
    for mode in ("broken", "clean", "clean", "clean"):
        result = verify_finding(
            root, finding, case="repeat-read", manifest=manifest, target=server_command("probe_clean", mode)
        )
        say(f"findings: verify against probe_clean {mode}: {result.lines()[0]}")
        runs.append(result)
    return FindingsDemo(promotion, finding, tuple(runs))
