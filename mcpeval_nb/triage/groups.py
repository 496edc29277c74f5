"""What ``promote`` scores, read from ``index.db``: the failure groups and the evidence around them.

A group is the real ``tools/call`` failures of one (server, tool, template id).  Its fields come from
three scans of ``index.db`` (failures, calls per label, the failures' windows joined to their neighbours'
labels), aggregated with numpy and plain dictionaries; nothing is read row by row through SQL.
"""

from __future__ import annotations

import sqlite3
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np

from .index.encode import LabelRow

__all__ = ["ANNOTATED", "Evidence", "Group", "GroupKey", "read_groups"]

#: The annotation kinds that mark a failure (its class, and a severity step).
ANNOTATED = ("false-success", "blocked-optimal-path")
Labels = dict[int, LabelRow]
#: ``(server, tool, template id)``
GroupKey = tuple[str, str | None, str | None]
#: A ``WHERE`` tail on ``r.ts_ms`` and its parameters (``--since`` / ``--until``).
Span = tuple[str, list[int]]


@dataclass
class Group:
    """One (server, tool, template) group being scored."""

    server: str
    tool: str | None
    template_id: str | None
    ids: list[int] = field(default_factory=list)
    sessions: set[int] = field(default_factory=set)
    codes: list[str | None] = field(default_factory=list)
    retryable: set[int | None] = field(default_factory=set)
    last_ms: int | None = None
    args: Counter[int] = field(default_factory=Counter)


def _span(since_ms: int | None, until_ms: int | None) -> Span:
    where, params = "", []
    if since_ms is not None:
        where += " AND r.ts_ms >= ?"
        params.append(since_ms)
    if until_ms is not None:
        where += " AND r.ts_ms < ?"
        params.append(until_ms)
    return where, params


def _labels(db: sqlite3.Connection) -> Labels:
    return {
        code: (server, method, tool, outcome, kind)
        for code, server, method, tool, outcome, kind in db.execute(
            "SELECT id, server, method, tool, outcome, kind FROM call_labels"
        )
    }


def _groups(
    db: sqlite3.Connection,
    labels: Labels,
    span: Span,
) -> dict[GroupKey, Group]:
    failing = [
        c
        for c, (_, method, _, outcome, kind) in labels.items()
        if outcome == "error" and method == "tools/call" and kind == "real"
    ]
    groups: dict[GroupKey, Group] = {}
    if not failing:
        return groups
    marks = ", ".join(str(c) for c in failing)
    cursor = db.execute(
        "SELECT r.id, r.labels, e.err_template_id, e.err_code, e.err_retryable, r.session, "
        "r.ts_ms, r.args FROM call_rows r LEFT JOIN call_errors e ON e.call_id = r.id "
        f"WHERE r.labels IN ({marks}){span[0]}",
        span[1],
    )
    for call_id, label, template, code, retryable, session, ts, args in cursor:
        server, _, tool, _, _ = labels[label]
        group = groups.get((server, tool, template))
        if group is None:
            group = groups[(server, tool, template)] = Group(server, tool, template)
        group.ids.append(call_id)
        group.sessions.add(session)
        group.codes.append(code)
        group.retryable.add(retryable)
        group.args[args] += 1
        if ts is not None and (group.last_ms is None or ts > group.last_ms):
            group.last_ms = ts
    return groups


def _call_counts(
    db: sqlite3.Connection,
    labels: Labels,
    span: Span,
) -> Counter[tuple[str, str | None]]:
    real = [c for c, (_, method, _, _, kind) in labels.items() if method == "tools/call" and kind == "real"]
    counts: Counter[tuple[str, str | None]] = Counter()
    if real:  # every call: counted by the index; in a span: counted here
        marks = ", ".join(map(str, real))
        query = (f"SELECT id, calls FROM call_labels WHERE id IN ({marks})" if not span[0] else
                 f"SELECT r.labels, COUNT(*) FROM call_rows r WHERE r.labels IN ({marks}){span[0]} "
                 "GROUP BY r.labels")
        for label, n in db.execute(query, span[1]):
            server, _, tool, _, _ = labels[label]
            if n:
                counts[(server, tool)] += n
    return counts


@dataclass(frozen=True)
class Neighbourhood:
    """Per failure: its real neighbours, whether a later neighbour of its tool succeeded, the tools around."""

    real: dict[int, int]
    recovered: set[int]
    tools: dict[int, set[str]]


def _neighbours(
    db: sqlite3.Connection,
    labels: Labels,
    failures: dict[int, str | None],
) -> Neighbourhood:
    """Per failure: real neighbours, whether a later neighbour of its tool succeeded, neighbour tools."""
    rows = np.array(
        db.execute(
            "SELECT w.failure_id, w.offset, n.labels FROM windows w JOIN call_rows n ON n.id = w.neighbour_id"
        ).fetchall(),
        dtype=np.int64,
    ).reshape(-1, 3)
    ours = np.fromiter(failures, dtype=np.int64, count=len(failures))
    rows = rows[np.isin(rows[:, 0], ours)]
    size = max(labels, default=0) + 1
    is_real = np.zeros(size, dtype=bool)
    is_ok = np.zeros(size, dtype=bool)
    for code, (_, _, _, outcome, kind) in labels.items():
        is_real[code], is_ok[code] = kind == "real", outcome == "ok"
    fail, offset, label = rows[:, 0], rows[:, 1], rows[:, 2]
    real = dict(Counter(fail[is_real[label]].tolist()))
    recovered: set[int] = set()
    tools: dict[int, set[str]] = defaultdict(set)
    for f, o, lab in zip(fail.tolist(), offset.tolist(), label.tolist(), strict=True):
        tool = labels[lab][2]
        if tool is not None:
            tools[f].add(tool)
            if o > 0 and is_ok[lab] and tool == failures[f]:
                recovered.add(f)
    return Neighbourhood(real, recovered, tools)


@dataclass(frozen=True)
class Evidence:
    """Everything scoring a group reads besides the group.

    Attributes:
        calls: real ``tools/call`` calls per (server, tool). near: the failures' windows.
        annotated: the ``ANNOTATED`` kinds on each failed call. shapes: argument shape texts by code.
    """

    calls: Counter[tuple[str, str | None]]
    near: Neighbourhood
    annotated: dict[int, set[str]]
    shapes: dict[int, str]


def _annotated(db: sqlite3.Connection) -> dict[int, set[str]]:
    annotated: dict[int, set[str]] = defaultdict(set)
    for call_id, kind in db.execute(
        "SELECT call_id, kind FROM annotations WHERE call_id IS NOT NULL AND kind "
        f"IN ('{ANNOTATED[0]}', '{ANNOTATED[1]}')"
    ):
        annotated[call_id].add(kind)
    return annotated


def _shapes(db: sqlite3.Connection, groups: dict[GroupKey, Group]) -> dict[int, str]:
    codes = sorted({a for g in groups.values() for a in g.args if a})
    return dict(db.execute("SELECT id, value FROM strings WHERE id IN (SELECT value FROM json_each(?))",
                           (str(codes),)))


def read_groups(db: sqlite3.Connection, *, since_ms: int | None,
                until_ms: int | None) -> tuple[dict[GroupKey, Group], Evidence]:
    """Every failure group of the index (failures and calls in ``[since, until)``) and its evidence."""
    labels = _labels(db)
    span = _span(since_ms, until_ms)
    groups = _groups(db, labels, span)
    failures = {i: g.tool for g in groups.values() for i in g.ids}
    evidence = Evidence(calls=_call_counts(db, labels, span), near=_neighbours(db, labels, failures),
                        annotated=_annotated(db), shapes=_shapes(db, groups))
    return groups, evidence
