"""Why a finding ranks where it does (``explain_finding``) and what happened around its failures
(``failure_windows``).  Both read only ``index.db``: labels, counts, offsets, latencies, shapes.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from ..htmltext import lines_html
from ..root import RootLike
from .findings import get_finding, reading
from .rows import Finding
from .scoring import HALF_LIFE_DAYS, MS_PER_DAY, Factors

__all__ = ["Explanation", "FactorRow", "explain_finding", "failure_windows"]

Z = 1.959963984540054
_FAILED = ("l.outcome = 'error' AND l.method = 'tools/call' AND l.kind = 'real' AND l.server IS ? "
           "AND l.tool IS ? AND e.err_template_id IS ?")


def _failures(template: str | None) -> str:
    """The ids of a finding's failed calls (parameters: server, tool, template id).  With a template id
    the search starts from the error rows (5 % of the calls), else from every call (a failure without
    an error row has no template)."""
    if template is None:
        return ("SELECT r.id FROM call_rows r JOIN call_labels l ON l.id = r.labels "
                f"LEFT JOIN call_errors e ON e.call_id = r.id WHERE {_FAILED}")
    return ("SELECT r.id FROM call_errors e JOIN call_rows r ON r.id = e.call_id "
            f"JOIN call_labels l ON l.id = r.labels WHERE {_FAILED}")


@dataclass(frozen=True)
class FactorRow:
    """One factor of a score: its value, its formula, and the inputs that produced it."""

    name: str
    value: float
    formula: str
    inputs: dict[str, Any]


@dataclass(frozen=True)
class Explanation:
    """A finding's score taken apart (``score = confidence × recency × cost × blast``).

    Attributes:
        finding: the finding's row. factors: confidence, recency, cost, blast in that order.
        tools: the tools its failures' windows touched (the blast inputs).
        promoted: whether it crossed both promotion bars; reasons: one line per bar.
    """

    finding: Finding
    factors: tuple[FactorRow, ...]
    tools: tuple[str, ...]
    promoted: bool
    reasons: tuple[str, ...]

    @property
    def score(self) -> float:
        """The product of the factors, in the reference's order (equals the stored score)."""
        c, r, k, b = (f.value for f in self.factors)
        return c * r * k * b

    def table(self) -> pa.Table:
        """``factor``, ``value``, ``formula``, ``inputs`` (``name=value`` pairs) per factor."""
        return pa.table(
            {
                "factor": [f.name for f in self.factors],
                "value": [f.value for f in self.factors],
                "formula": [f.formula for f in self.factors],
                "inputs": [", ".join(f"{k}={v}" for k, v in f.inputs.items()) for f in self.factors],
            }
        )

    def lines(self) -> list[str]:
        """A plain-text explanation, one factor per line."""
        f = self.finding
        out = [
            f"{f.finding_id} {f.server}/{f.tool or 'unlisted'} score={self.score:.6f} "
            f"threshold={f.threshold:.6f} class={f.klass}"
        ]
        out += [
            f"  {row.name}={row.value:.6f}  {row.formula}  ("
            + ", ".join(f"{k}={v}" for k, v in row.inputs.items())
            + ")"
            for row in self.factors
        ]
        return out + [f"  {reason}" for reason in self.reasons]

    def _repr_html_(self) -> str:
        """How a notebook cell shows it (the same lines as the CLI prints)."""
        return lines_html("why this finding ranks where it does", self.lines())

def _tools(db: sqlite3.Connection, f: Finding) -> tuple[str, ...]:
    rows = db.execute(
        f"SELECT DISTINCT l.tool FROM windows w JOIN call_rows n ON n.id = w.neighbour_id "
        f"JOIN call_labels l ON l.id = n.labels WHERE l.tool IS NOT NULL AND w.failure_id IN "
        f"({_failures(f.err_template_id)})",
        (f.server, f.tool, f.err_template_id),
    ).fetchall()
    return tuple(sorted({r[0] for r in rows} | ({f.tool} if f.tool else set())))


def explain_finding(root: RootLike, finding_id: str) -> Explanation:
    """Each factor of a finding's score with the inputs that produced it.

    Raises:
        FindingsError: no usable index, or no such finding in the last promotion.
    """
    f = get_finding(root, finding_id)
    with reading(root) as (_base, db):
        tools = _tools(db, f)
    age = max(0, f.promoted_at - f.last_seen_ms) / MS_PER_DAY
    inputs = Factors(failures=f.failures, calls=f.calls, age_days=age, cost_calls=f.cost, blast_tools=f.blast)
    rows = (
        FactorRow(
            "confidence",
            inputs.confidence,
            "Wilson lower bound of failures/calls",
            {"failures": f.failures, "calls": f.calls, "rate": round(f.rate, 6), "z": Z},
        ),
        FactorRow(
            "recency",
            inputs.recency,
            "0.5 ** (age_days / 14)",
            {
                "last_seen": f.last_seen or "unknown",
                "age_days": round(age, 3),
                "half_life_days": HALF_LIFE_DAYS,
            },
        ),
        FactorRow("cost", inputs.cost, "log2(1 + median window size)", {"median_window_calls": f.cost}),
        FactorRow("blast", inputs.blast, "1 + log2(tools touched)", {"tools": f.blast}),
    )
    reasons = (
        f"sessions={f.sessions} (promotion needs at least 2)",
        f"score {'>=' if f.score >= f.threshold else '<'} threshold {f.threshold:.6f}",
    )
    return Explanation(
        finding=f,
        factors=rows,
        tools=tools,
        promoted=f.sessions >= 2 and f.score >= f.threshold,
        reasons=reasons,
    )


WINDOW_SCHEMA = pa.schema(
    [
        ("failure_id", pa.int64()),
        ("offset", pa.int64()),
        ("call_id", pa.int64()),
        ("ts", pa.string()),
        ("method", pa.string()),
        ("tool", pa.string()),
        ("outcome", pa.string()),
        ("latency_ms", pa.int64()),
        ("kind", pa.string()),
        ("err_template_id", pa.string()),
        ("args", pa.string()),
    ],
    metadata={b"mcpeval_nb.schema": b"mcpeval-nb.failure-windows/1"},
)


def failure_windows(root: RootLike, finding_id: str, *, limit: int | None = 50) -> pa.Table:
    """The calls around a finding's most recent failures: offset (0 is the failure), tool, outcome,
    latency and the argument shape, never more.

    Args:
        root: the capture root. finding_id: the finding. limit: most recent failures to include
            (None: all).

    Raises:
        FindingsError: no usable index, or no such finding.
    """
    f = get_finding(root, finding_id)
    with reading(root) as (_base, db):
        tail = "" if limit is None else f" ORDER BY r.ts_ms DESC, r.id DESC LIMIT {int(limit)}"
        ids = [r[0] for r in db.execute(_failures(f.err_template_id) + tail,
                                        (f.server, f.tool, f.err_template_id))]
        marks = ", ".join(str(i) for i in ids) or "NULL"
        rows = db.execute(
            "SELECT x.failure_id, x.offset, c.id, c.ts, c.method, c.tool, c.outcome, c.latency_ms, c.kind, "
            "c.err_template_id, c.args FROM (SELECT failure_id, neighbour_id AS call, offset FROM windows "
            f"WHERE failure_id IN ({marks}) UNION ALL "
            f"SELECT id, id, 0 FROM call_rows WHERE id IN ({marks})) x "
            "JOIN calls c ON c.id = x.call ORDER BY x.failure_id, x.offset"
        ).fetchall()
    return pa.Table.from_pylist(
        [dict(zip(WINDOW_SCHEMA.names, r, strict=True)) for r in rows], schema=WINDOW_SCHEMA
    )
