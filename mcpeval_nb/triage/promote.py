"""``promote``: group the indexed failures, score each group and promote the recurring ones (SPEC 12.2).

A group is the real ``tools/call`` failures of one (server, tool, template id).  Its fields come from
three scans of ``index.db`` (failures, calls per label, the failures' windows joined to their neighbours'
labels), aggregated with numpy and plain dictionaries; nothing is read row by row through SQL.  Every
group becomes an ``issues`` row; a group seen in at least two sessions whose score reaches the threshold
is promoted: a ``findings`` row and, in ``lifecycle.db``, an ``open`` lifecycle (kept when it exists).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..tables.load import SkippedLine
from .lifecycle import lifecycle, now_ms
from .scoring import factors, finding_id, resolve_threshold

__all__ = ["Group", "PromoteResult", "format_last_seen", "promote_groups"]

ANNOTATED = ("false-success", "blocked-optimal-path")


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


@dataclass(frozen=True)
class PromoteResult:
    """What ``promote`` did: promoted and total issues, why the others were not, and the threshold."""

    promoted: int
    issues: int
    single_session: int
    below: int
    threshold: float
    threshold_source: str
    #: Journal lines the index refresh before promotion could not use and went past (``SkippedLine``).
    skipped_lines: tuple[SkippedLine, ...] = ()

    def line(self) -> str:
        """SPEC 12.2's output line."""
        parts = []
        if self.single_session:
            parts.append(f"{self.single_session} seen in one session only")
        if self.below:
            parts.append(f"{self.below} below threshold {self.threshold:.6f}")
        tail = f" ({', '.join(parts)})" if parts else ""
        return f"promoted {self.promoted} of {self.issues} issues{tail}"


def format_last_seen(ms: int | None) -> str | None:
    """An RFC 3339 UTC timestamp with as many fractional digits as needed (0 or 3; SPEC 0.6 AutoSi)."""
    if ms is None:
        return None
    when = dt.datetime.fromtimestamp(ms / 1000, dt.UTC).replace(microsecond=(ms % 1000) * 1000)
    text = when.strftime("%Y-%m-%dT%H:%M:%S")
    return f"{text}.{ms % 1000:03d}Z" if ms % 1000 else f"{text}Z"


def _span(since_ms: int | None, until_ms: int | None) -> tuple[str, list[int]]:
    where, params = "", []
    if since_ms is not None:
        where += " AND r.ts_ms >= ?"
        params.append(since_ms)
    if until_ms is not None:
        where += " AND r.ts_ms < ?"
        params.append(until_ms)
    return where, params


def _labels(db: sqlite3.Connection) -> dict[int, tuple[str, str, str | None, str, str]]:
    return {
        code: (server, method, tool, outcome, kind)
        for code, server, method, tool, outcome, kind in db.execute(
            "SELECT id, server, method, tool, outcome, kind FROM call_labels"
        )
    }


def _groups(
    db: sqlite3.Connection,
    labels: dict[int, tuple[str, str, str | None, str, str]],
    span: tuple[str, list[int]],
) -> dict[tuple[str, str | None, str | None], Group]:
    failing = [
        c
        for c, (_, method, _, outcome, kind) in labels.items()
        if outcome == "error" and method == "tools/call" and kind == "real"
    ]
    groups: dict[tuple[str, str | None, str | None], Group] = {}
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
    labels: dict[int, tuple[str, str, str | None, str, str]],
    span: tuple[str, list[int]],
) -> Counter[tuple[str, str | None]]:
    real = [c for c, (_, method, _, _, kind) in labels.items() if method == "tools/call" and kind == "real"]
    counts: Counter[tuple[str, str | None]] = Counter()
    if real:
        for label, n in db.execute(
            f"SELECT r.labels, COUNT(*) FROM call_rows r WHERE r.labels IN "
            f"({', '.join(map(str, real))}){span[0]} GROUP BY r.labels",
            span[1],
        ):
            server, _, tool, _, _ = labels[label]
            counts[(server, tool)] += n
    return counts


@dataclass(frozen=True)
class _Neighbourhood:
    real: dict[int, int]
    recovered: set[int]
    tools: dict[int, set[str]]


def _neighbours(
    db: sqlite3.Connection,
    labels: dict[int, tuple[str, str, str | None, str, str]],
    failures: dict[int, str | None],
) -> _Neighbourhood:
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
    return _Neighbourhood(real, recovered, tools)


def _median(values: list[int]) -> float:
    return float(statistics.median(values))


def _klass(group: Group, codes: list[str], annotated: dict[int, set[str]], recovered: bool) -> str:
    kinds = set().union(*(annotated.get(i, set()) for i in group.ids))
    if len(codes) > 1:
        return "unstable-error-code"
    if "false-success" in kinds:
        return "false-success"
    if "blocked-optimal-path" in kinds:
        return "blocked-optimal-path"
    if group.retryable == {1}:
        return "recovers-on-retry" if recovered else "retry-did-not-recover"
    return "recurring-error"


def _most_frequent(codes: list[str | None]) -> str | None:
    counts = Counter(c for c in codes if c is not None)
    if not counts:
        return None
    top = max(counts.values())
    return min(c for c, n in counts.items() if n == top)


def promote_groups(
    db: sqlite3.Connection,
    root: Path,
    *,
    threshold: float | None,
    since_ms: int | None,
    until_ms: int | None,
    at: int | None = None,
) -> PromoteResult:
    """Score every group in ``db`` (an open, writable index) and replace ``issues``/``findings``.

    Raises:
        UsageError: an invalid threshold. FindingsError: ``lifecycle.db`` is unusable.
    """
    limit, source = resolve_threshold(root, threshold)
    now = now_ms() if at is None else at
    labels = _labels(db)
    span = _span(since_ms, until_ms)
    groups = _groups(db, labels, span)
    calls = _call_counts(db, labels, span)
    failures = {i: g.tool for g in groups.values() for i in g.ids}
    near = _neighbours(db, labels, failures)
    annotated: dict[int, set[str]] = defaultdict(set)
    for call_id, kind in db.execute(
        "SELECT call_id, kind FROM annotations WHERE call_id IS NOT NULL AND kind "
        f"IN ('{ANNOTATED[0]}', '{ANNOTATED[1]}')"
    ):
        annotated[call_id].add(kind)
    shapes = sorted({a for g in groups.values() for a in g.args if a})
    strings = dict(
        db.execute(
            "SELECT id, value FROM strings WHERE id IN (SELECT value FROM json_each(?))", (str(shapes),)
        )
    )
    issues, promoted, single, below = [], [], 0, 0
    with lifecycle(root, write=True) as life:
        for key in sorted(groups, key=lambda k: (k[0], k[1] or "", k[2] or "")):
            group = groups[key]
            fid = finding_id(group.server, group.tool, None, group.template_id)
            life.migrate(fid, group.server, group.tool, group.template_id)
            codes = sorted({c for c in group.codes if c is not None})
            cost = _median([1 + near.real.get(i, 0) for i in group.ids])
            blast = len({group.tool} - {None} | set().union(*(near.tools.get(i, set()) for i in group.ids)))
            f = factors(
                failures=len(group.ids),
                calls=calls[(group.server, group.tool)],
                last_seen_ms=group.last_ms or 0,
                now_ms=now,
                cost_calls=cost,
                blast_tools=blast,
            )
            klass = _klass(group, codes, annotated, any(i in near.recovered for i in group.ids))
            is_annotated = any(annotated.get(i) for i in group.ids)
            args_code = min(group.args, key=lambda a: (-group.args[a], a))
            retry = 1 if group.retryable == {1} else (0 if group.retryable == {0} else None)
            issues.append(
                (
                    fid,
                    group.server,
                    group.tool,
                    _most_frequent(group.codes),
                    "[" + ",".join(codes) + "]",
                    group.template_id,
                    len(group.ids),
                    f.calls,
                    len(group.sessions),
                    format_last_seen(group.last_ms),
                    group.last_ms or 0,
                    cost,
                    max(1, blast),
                    len(group.ids) / f.calls,
                    f.confidence,
                    f.recency,
                    f.score,
                    limit,
                    klass,
                    retry,
                    int(is_annotated),
                    strings.get(args_code),
                    now,
                    since_ms,
                    until_ms,
                )
            )
            if len(group.sessions) < 2:
                single += 1
            elif f.score < limit:
                below += 1
            else:
                promoted.append(fid)
        db.execute("DELETE FROM findings")
        db.execute("DELETE FROM issues")
        db.executemany(
            "INSERT INTO issues (finding_id, server, tool, err_code, err_codes, err_template_id, "
            "failures, calls, sessions, last_seen, last_seen_ms, cost, blast, rate, confidence, "
            "recency, score, threshold, class, retryable, annotated, args, promoted_at, since_ms, "
            "until_ms) VALUES (" + ", ".join("?" * 25) + ")",
            issues,
        )
        db.executemany(
            "INSERT INTO findings (issue_id, finding_id) SELECT id, finding_id FROM issues "
            "WHERE finding_id = ?",
            [(fid,) for fid in promoted],
        )
        chosen = set(promoted)
        life.open_findings(
            [
                (fid, k[0], k[1], None, k[2])
                for fid, k in ((i[0], (i[1], i[2], i[5])) for i in issues if i[0] in chosen)
            ],
            at=now,
        )
    return PromoteResult(
        promoted=len(promoted),
        issues=len(issues),
        single_session=single,
        below=below,
        threshold=limit,
        threshold_source=source,
    )
