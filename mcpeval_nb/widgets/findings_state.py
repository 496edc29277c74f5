"""What the findings panel shows, apart from the widgets: rows, the selected finding's detail, jobs.

Everything here is a label, a count, a score, a template id or a shape token: it is computed from the
public API (``findings``, ``explain_finding``, ``failure_windows``, ``finding_history``,
``generate_manifest``), which reads only ``index.db`` and ``lifecycle.db``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from mcpeval_nb import (
    MCPEvalError,
    describe,
    explain_finding,
    failure_windows,
    finding_history,
    findings,
    generate_manifest,
)

__all__ = ["FindingRow", "FindingsDetail", "FindingsState"]


@dataclass(frozen=True)
class FindingRow:
    """One finding as the table shows it."""

    finding_id: str
    severity: str
    klass: str
    score: float
    rate: float
    rate_low: float
    rate_high: float
    sessions: int
    last_seen: str
    state: str
    where: str

    @property
    def label(self) -> str:
        """The selector's text: severity, class, server/tool and the id's tail."""
        return f"{self.severity} {self.klass} {self.where} #{self.finding_id[-6:]}"


@dataclass
class FindingsDetail:
    """The selected finding: its explanation lines, windows, history and generate preview."""

    finding_id: str
    explanation: list[str] = field(default_factory=list)
    windows: pa.Table | None = None
    history: list[tuple[str, str, str]] = field(default_factory=list)
    preview: str = ""
    fills: list[str] = field(default_factory=list)
    preview_error: str = ""


@dataclass
class FindingsState:
    """The panel's state.

    Attributes:
        root: the capture root. rows: the findings shown. table: the ``findings`` table (for the chart).
        selected: the finding in the detail view. detail: its detail. status: one short line.
        busy: a job name while one runs. done / total: the running job's progress in bytes.
        confirmed: the read-only attestation for Generate. output: the manifest path to write.
        generated: the path written by the last Generate.
    """

    root: Path
    rows: list[FindingRow] = field(default_factory=list)
    table: pa.Table | None = None
    selected: str | None = None
    detail: FindingsDetail | None = None
    status: str = "loading..."
    busy: str = ""
    done: int = 0
    total: int = 0
    confirmed: bool = False
    output: str = ""
    generated: str = ""

    def load(self) -> None:
        """Read the findings and the selected finding's detail (the first finding when none is)."""
        try:
            table = findings(self.root)
        except MCPEvalError as exc:
            self.rows, self.table, self.detail = [], None, None
            self.status = describe(exc)
            return
        self.table = table
        self.rows = [_row(r) for r in table.to_pylist()]
        ids = [r.finding_id for r in self.rows]
        if self.selected not in ids:
            self.selected = ids[0] if ids else None
        self.status = (
            f"{len(self.rows)} promoted finding(s)"
            if self.rows
            else "no promoted findings: re-index and re-promote (or lower the threshold)"
        )
        self.detail = None if self.selected is None else self.detail_of(self.selected)

    def detail_of(self, finding_id: str) -> FindingsDetail:
        """The detail view of one finding."""
        detail = FindingsDetail(finding_id)
        detail.explanation = explain_finding(self.root, finding_id).lines()
        detail.windows = failure_windows(self.root, finding_id, limit=20)
        detail.history = [
            (r["ts"].strftime("%Y-%m-%d %H:%M:%S"), r["probe_id"], "pass" if r["passed"] else "fail")
            for r in finding_history(self.root, finding_id).to_pylist()
        ]
        try:
            generated = generate_manifest(self.root, finding_id)
        except MCPEvalError as exc:
            detail.preview_error = describe(exc)
        else:
            detail.preview = generated.manifest_text()
            detail.fills = generated.stdout_lines(self.output or "the manifest")[1:]
        return detail

    def generate(self) -> str:
        """Write the selected finding's manifest (needs the attestation); returns the status line."""
        if self.selected is None or not self.confirmed or not self.output:
            return "tick the read-only attestation and name an output file first"
        generate_manifest(self.root, self.selected, confirm_read_only=True, output=self.output)
        self.generated = self.output
        return f"wrote {self.output}"


def _row(r: dict[str, Any]) -> FindingRow:
    ts = r["last_seen"]
    return FindingRow(
        finding_id=r["finding_id"],
        severity=r["severity"],
        klass=r["class"],
        score=r["score"],
        rate=r["rate"],
        rate_low=r["confidence"],
        rate_high=r["rate_high"],
        sessions=r["sessions"],
        last_seen="unknown" if ts is None else ts.strftime("%Y-%m-%d %H:%M"),
        state=r["state"],
        where=f"{r['server']}/{r['tool'] or 'unlisted'}",
    )
