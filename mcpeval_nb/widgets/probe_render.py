"""HTML of the probe panel's results: the case table and the readiness summary (labels and numbers)."""

from __future__ import annotations

from collections.abc import Sequence

from mcpeval_nb import ProbeReport

from ._html import VERDICT_COLOURS, badge, esc, table
from .probe_state import CaseRow

__all__ = ["case_table", "readiness_html"]


def case_table(rows: Sequence[CaseRow]) -> str:
    """One row per case: id, kind, verdict badge, attempts, reason label, measurements, fixed hint."""
    if not rows:
        return ""
    body = [(r.id, r.probe, badge(r.verdict, VERDICT_COLOURS.get(r.verdict, "#6e7781")),
             "" if r.attempts is None else r.attempts, r.reason or "", r.measurements, r.hint or "")
            for r in rows]
    return table(("case", "probe", "verdict", "attempts", "reason", "measurements", "hint"), body,
                 raw_columns=(2,), css_class="mcpeval-verdicts")


def readiness_html(report: ProbeReport | None) -> str:
    """The readiness score, its areas and every lost check (or why readiness could not complete)."""
    if report is None:
        return ""
    if report.readiness_error is not None:
        return f"<p>Readiness could not complete: <code>{esc(report.readiness_error)}</code></p>"
    r = report.readiness
    if r is None:
        return ""
    era = " <small>protocol 2026-07-28 (stateless)</small>" if report.modern else ""
    head = f"<h4>Readiness {esc(r.score)}/100 <small>({esc(r.standard)})</small>{era}</h4>"
    area_rows = [(a.name, a.weight, a.score) for a in r.areas]
    lost = [(a.name, c.id, c.tool or "", c.observed, c.reason, c.hint) for a in r.areas for c in a.checks]
    out = head + table(("area", "weight", "score"), area_rows, css_class="mcpeval-areas")
    if lost:
        out += "<p><b>Lost checks</b></p>" + table(
            ("area", "check", "tool", "observed", "reason", "hint"), lost, css_class="mcpeval-lost")
    return out
