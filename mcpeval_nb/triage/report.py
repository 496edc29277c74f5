"""Promoted findings as rows, an Arrow table, and the three renderings of ``findings`` (SPEC 12.5).

A finding is its last promotion's ``issues`` row joined to its lifecycle (``lifecycle.db``).  JSON keeps
SPEC's struct order (``finding_id`` ... ``repro``, then ``class``, ``hint``, ``err_codes``,
``retryable``); the agent format is SPEC's three lines per finding; Markdown is a table (ours).  Every
value is a label, a count, a score, a template id or a shaped argument token: nothing else exists in
``index.db``.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from ..analysis.outcomes import wilson_interval
from ..jsonfmt import dumps, loads
from .lifecycle import LifecycleRow
from .scoring import severity

__all__ = [
    "FIELDS",
    "FINDINGS_SCHEMA",
    "HINTS",
    "NO_FINDINGS",
    "Finding",
    "load_findings",
    "render",
    "table_of",
]

NO_FINDINGS = "no promoted findings; run mcpeval promote --threshold 0 to see every issue"
HINTS = {
    "recurring-error": "the same failure recurs across sessions: reproduce it with generate, fix it, then "
    "run verify until it closes",
    "unstable-error-code": "one failure answers with more than one error code: return one stable code",
    "false-success": "calls reported success but were annotated false-success: assert the result "
    "(generate --expect)",
    "blocked-optimal-path": "the agent was kept off its best path: state what the call should return "
    "(generate --expect)",
    "recovers-on-retry": "a retry of the same tool succeeded: the failure is transient, fix its cause",
    "retry-did-not-recover": "the error says retryable but retries did not recover: fix the cause or "
    "stop marking it retryable",
}
FIELDS = (
    "finding_id",
    "state",
    "probe_id",
    "consecutive_passes",
    "server",
    "tool",
    "err_code",
    "err_template_id",
    "failures",
    "calls",
    "sessions",
    "last_seen",
    "cost",
    "blast",
    "rate",
    "confidence",
    "recency",
    "score",
    "threshold",
    "severity",
    "repro",
    "class",
    "hint",
    "err_codes",
    "retryable",
)
_ISSUE_COLUMNS = (
    "finding_id",
    "server",
    "tool",
    "err_code",
    "err_codes",
    "err_template_id",
    "failures",
    "calls",
    "sessions",
    "last_seen",
    "last_seen_ms",
    "cost",
    "blast",
    "rate",
    "confidence",
    "recency",
    "score",
    "threshold",
    "class",
    "retryable",
    "annotated",
    "args",
    "promoted_at",
)


@dataclass(frozen=True)
class Finding:
    """One promoted finding (JSON-valued fields as compact JSON text)."""

    finding_id: str
    state: str
    probe_id: str | None
    consecutive_passes: int
    server: str | None
    tool: str | None
    err_code: str | None
    err_template_id: str | None
    failures: int
    calls: int
    sessions: int
    last_seen: str | None
    last_seen_ms: int
    cost: float
    blast: int
    rate: float
    confidence: float
    recency: float
    score: float
    threshold: float
    severity: str
    repro: str | None
    klass: str
    err_codes: str
    retryable: int | None
    annotated: bool
    promoted_at: int

    @property
    def hint(self) -> str:
        """The remediation hint of the finding's class."""
        return HINTS.get(self.klass, HINTS["recurring-error"])

    @property
    def rate_high(self) -> float:
        """The Wilson interval's upper bound (``confidence`` is its lower bound)."""
        return wilson_interval(self.failures, self.calls)[1]

    def to_json(self) -> dict[str, Any]:
        """The ``findings --format json`` object, in SPEC's field order."""
        return {
            "finding_id": self.finding_id,
            "state": self.state,
            "probe_id": self.probe_id,
            "consecutive_passes": self.consecutive_passes,
            "server": self.server,
            "tool": self.tool,
            "err_code": None if self.err_code is None else loads(self.err_code),
            "err_template_id": self.err_template_id,
            "failures": self.failures,
            "calls": self.calls,
            "sessions": self.sessions,
            "last_seen": self.last_seen,
            "cost": self.cost,
            "blast": self.blast,
            "rate": self.rate,
            "confidence": self.confidence,
            "recency": self.recency,
            "score": self.score,
            "threshold": self.threshold,
            "severity": self.severity,
            "repro": None if self.repro is None else loads(self.repro),
            "class": self.klass,
            "hint": self.hint,
            "err_codes": loads(self.err_codes),
            "retryable": None if self.retryable is None else bool(self.retryable),
        }

    def agent_lines(self) -> list[str]:
        """SPEC 12.5's agent lines; the ``repro`` line only when arguments were recorded (as the
        reference prints them: a finding without recorded arguments has no repro line)."""
        lines = [
            f"finding {self.finding_id} {self.server}/{self.tool or 'unlisted'} state={self.state} "
            f"probe={self.probe_id or 'none'} consecutive_passes={self.consecutive_passes} "
            f"severity={self.severity} score={self.score:.6f} threshold={self.threshold:.6f} "
            f"rate={self.rate:.6f} confidence={self.confidence:.6f} recency={self.recency:.6f} "
            f"failures={self.failures}/{self.calls} sessions={self.sessions} cost={self.cost:.1f} "
            f"blast={self.blast}",
            f"  cause code={self.err_code or 'null'} template_id={self.err_template_id or 'none'} "
            f"last_seen={self.last_seen or 'unknown'}",
        ]
        return lines + ([f"  repro={self.repro}"] if self.repro is not None else [])


def _sort_key(f: Finding) -> tuple[Any, ...]:
    return (-f.score, f.server or "", f.tool or "", f.err_code or "", f.err_template_id or "")


def load_findings(
    db: sqlite3.Connection,
    life: dict[str, LifecycleRow],
    *,
    promoted: bool = True,
    state: str | None = None,
    since_ms: int | None = None,
    until_ms: int | None = None,
) -> list[Finding]:
    """The last promotion's findings (or every issue with ``promoted=False``), sorted as SPEC says.

    Args:
        db: an open index. life: lifecycle rows by finding id. state: keep only this lifecycle state.
        since_ms / until_ms: keep findings last seen in ``[since, until)`` (an extension).
    """
    join = "JOIN findings f ON f.issue_id = i.id" if promoted else ""
    rows = db.execute(f"SELECT {', '.join('i.' + c for c in _ISSUE_COLUMNS)} FROM issues i {join}").fetchall()
    out = []
    for row in rows:
        values = dict(zip(_ISSUE_COLUMNS, row, strict=True))
        lc = life.get(values["finding_id"])
        current = lc.state if lc is not None else "open"
        if state is not None and current != state:
            continue
        if since_ms is not None and values["last_seen_ms"] < since_ms:
            continue
        if until_ms is not None and values["last_seen_ms"] >= until_ms:
            continue
        probe = lc.probe_id if lc is not None else None
        rank = severity(
            values["score"],
            values["threshold"],
            annotated=bool(values["annotated"]),
            probed=probe is not None,
        )
        out.append(
            Finding(
                finding_id=values["finding_id"],
                state=current,
                probe_id=probe,
                consecutive_passes=lc.consecutive_passes if lc is not None else 0,
                server=values["server"],
                tool=values["tool"],
                err_code=values["err_code"],
                err_template_id=values["err_template_id"],
                failures=values["failures"],
                calls=values["calls"],
                sessions=values["sessions"],
                last_seen=values["last_seen"],
                last_seen_ms=values["last_seen_ms"],
                cost=values["cost"],
                blast=values["blast"],
                rate=values["rate"],
                confidence=values["confidence"],
                recency=values["recency"],
                score=values["score"],
                threshold=values["threshold"],
                severity=rank,
                repro=values["args"],
                klass=values["class"],
                err_codes=values["err_codes"],
                retryable=values["retryable"],
                annotated=bool(values["annotated"]),
                promoted_at=values["promoted_at"],
            )
        )
    return sorted(out, key=_sort_key)


FINDINGS_SCHEMA = pa.schema(
    [
        ("finding_id", pa.string()),
        ("state", pa.string()),
        ("probe_id", pa.string()),
        ("consecutive_passes", pa.int64()),
        ("server", pa.string()),
        ("tool", pa.string()),
        ("err_code", pa.string()),
        ("err_template_id", pa.string()),
        ("failures", pa.int64()),
        ("calls", pa.int64()),
        ("sessions", pa.int64()),
        ("last_seen", pa.timestamp("ms", tz="UTC")),
        ("cost", pa.float64()),
        ("blast", pa.int64()),
        ("rate", pa.float64()),
        ("confidence", pa.float64()),
        ("recency", pa.float64()),
        ("score", pa.float64()),
        ("threshold", pa.float64()),
        ("severity", pa.string()),
        ("repro", pa.string()),
        ("class", pa.string()),
        ("hint", pa.string()),
        ("err_codes", pa.string()),
        ("retryable", pa.bool_()),
        ("rate_high", pa.float64()),
    ],
    metadata={b"mcpeval_nb.schema": b"mcpeval-nb.findings/1"},
)


def table_of(findings: list[Finding]) -> pa.Table:
    """The findings as a ``FINDINGS_SCHEMA`` table (JSON-valued columns as compact JSON text)."""
    rows = []
    for f in findings:
        row = {name: getattr(f, name) for name in FIELDS if name not in ("class", "hint", "last_seen")}
        row.update(
            {
                "class": f.klass,
                "hint": f.hint,
                "rate_high": f.rate_high,
                "last_seen": None if f.last_seen is None else f.last_seen_ms,
                "retryable": None if f.retryable is None else bool(f.retryable),
            }
        )
        rows.append(row)
    return pa.Table.from_pylist(rows, schema=FINDINGS_SCHEMA)


def render(findings: list[Finding], fmt: str) -> str:
    """``agent`` lines, a Markdown table, or pretty JSON (each with a trailing newline)."""
    if fmt == "json":
        return dumps([f.to_json() for f in findings], sort_keys=False, indent=2) + "\n"
    if fmt == "md":
        head = [
            "| finding | server/tool | class | severity | state | score | rate | failures | sessions | "
            "last seen |",
            "| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |",
        ]
        body = [
            f"| `{f.finding_id}` | {f.server}/{f.tool or 'unlisted'} | {f.klass} | {f.severity} | "
            f"{f.state} | {f.score:.3f} | {f.rate:.1%} | {f.failures}/{f.calls} | {f.sessions} | "
            f"{f.last_seen or 'unknown'} |"
            for f in findings
        ]
        return "\n".join(["# Findings", "", *head, *body]) + "\n"
    return "".join(line + "\n" for f in findings for line in f.agent_lines())
