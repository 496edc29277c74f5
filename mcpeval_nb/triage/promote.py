"""``promote``: score every failure group of the index and promote the recurring ones (SPEC 12.2).

Every group (``groups.read_groups``) becomes an ``Issue`` (``rows``), scored by ``scoring``; an issue
seen in at least two sessions whose score reaches the threshold is promoted: a ``findings`` row and, in
``lifecycle.db``, an ``open`` lifecycle (kept when it exists).  ``promote`` first brings the index up to
date, under the index lock it holds for both.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..clock import Moment, format_ms_auto, now_ms, parse_moment
from ..governance.erasure import recover
from ..htmltext import lines_html
from ..root import Root, RootLike
from ..tables.load import SkippedLine
from .groups import Evidence, Group, read_groups
from .index.build import build_locked, index_lock
from .index.database import INDEX_FILE, connect, transaction
from .index.ingest import ReadOptions
from .lifecycle import lifecycle
from .mirror import adopt_from_index, mirror_into_index
from .rows import Issue, insert_issues
from .scoring import factors, finding_id, resolve_threshold, severity

__all__ = ["PromoteResult", "finding_class", "promote", "promote_groups"]


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

    def _repr_html_(self) -> str:
        """How a notebook cell shows it (the same lines as the CLI prints)."""
        return lines_html("promote", [self.line()])

def finding_class(group: Group, codes: list[str], annotated: dict[int, set[str]], recovered: bool) -> str:
    """The group's class, first match (SPEC 12.2): several codes, annotated false-success, annotated
    blocked-optimal-path, all retryable (recovered or not), else ``recurring-error``."""
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


def _agreed(flags: set[int | None]) -> bool | None:
    """True when every failure was retryable, False when none was, else None (mixed or unknown)."""
    return True if flags == {1} else (False if flags == {0} else None)


@dataclass(frozen=True)
class _Scoring:
    """One promotion's fixed inputs: the evidence, the threshold, the time and the window."""

    evidence: Evidence
    threshold: float
    now: int
    since_ms: int | None
    until_ms: int | None

    def issue(self, group: Group, *, probed: bool) -> Issue:
        """The group's ``issues`` row: its counts, factors, score, class and severity (``probed``: its
        lifecycle has a bound probe)."""
        near, ids = self.evidence.near, group.ids
        codes = sorted({c for c in group.codes if c is not None})
        cost = float(statistics.median([1 + near.real.get(i, 0) for i in ids]))
        blast = len({group.tool} - {None} | set().union(*(near.tools.get(i, set()) for i in ids)))
        f = factors(failures=len(ids), calls=self.evidence.calls[(group.server, group.tool)],
                    last_seen_ms=group.last_ms or 0, now_ms=self.now, cost_calls=cost, blast_tools=blast)
        recovered = any(i in near.recovered for i in ids)
        annotated = any(self.evidence.annotated.get(i) for i in ids)
        return Issue(
            finding_id=finding_id(group.server, group.tool, None, group.template_id),
            server=group.server, tool=group.tool, err_template_id=group.template_id,
            err_code=_most_frequent(group.codes), err_codes="[" + ",".join(codes) + "]",
            failures=len(ids), calls=f.calls, sessions=len(group.sessions), rate=len(ids) / f.calls,
            last_seen=None if group.last_ms is None else format_ms_auto(group.last_ms),
            last_seen_ms=group.last_ms or 0,
            cost=cost, blast=max(1, blast), confidence=f.confidence, recency=f.recency, score=f.score,
            threshold=self.threshold,
            severity=severity(f.score, self.threshold, annotated=annotated, probed=probed),
            klass=finding_class(group, codes, self.evidence.annotated, recovered),
            retryable=_agreed(group.retryable),
            annotated=annotated,
            repro=self.evidence.shapes.get(min(group.args, key=lambda a: (-group.args[a], a))),
            promoted_at=self.now, since_ms=self.since_ms, until_ms=self.until_ms,
        )

    def verdict(self, issue: Issue) -> str:
        """``promoted``, or why not: ``single-session`` (seen in one session) or ``below`` the threshold."""
        if issue.sessions < 2:
            return "single-session"
        return "below" if issue.score < self.threshold else "promoted"


def _replace_promotion(db: sqlite3.Connection, issues: list[Issue], promoted: list[Issue]) -> None:
    """The new promotion's ``issues`` and ``findings`` rows in place of the last one's."""
    db.execute("DELETE FROM findings")
    db.execute("DELETE FROM issues")
    insert_issues(db, issues)
    db.executemany("INSERT INTO findings (issue_id, finding_id) SELECT id, finding_id FROM issues "
                   "WHERE finding_id = ?", [(i.finding_id,) for i in promoted])


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
    groups, evidence = read_groups(db, since_ms=since_ms, until_ms=until_ms)
    scoring = _Scoring(evidence, limit, now_ms() if at is None else at, since_ms, until_ms)
    with lifecycle(root, write=True) as life:
        adopt_from_index(db, life)  # the reference tool's lifecycle rows, where newer (mirror.py)
        issues = []
        for key in sorted(groups, key=lambda k: (k[0], k[1] or "", k[2] or "")):
            group = groups[key]
            fid = finding_id(group.server, group.tool, None, group.template_id)
            life.migrate(fid, group.server, group.tool, group.template_id)
            bound = life.get(fid)
            issues.append(scoring.issue(group, probed=bound is not None and bound.probe_id is not None))
        verdicts = [scoring.verdict(i) for i in issues]
        promoted = [i for i, verdict in zip(issues, verdicts, strict=True) if verdict == "promoted"]
        _replace_promotion(db, issues, promoted)
        life.open_findings([(i.finding_id, i.server, i.tool, None, i.err_template_id) for i in promoted],
                           at=scoring.now)
        mirror_into_index(db, life)
    return PromoteResult(promoted=len(promoted), issues=len(issues),
                         single_session=verdicts.count("single-session"), below=verdicts.count("below"),
                         threshold=limit, threshold_source=source)


def promote(
    root: RootLike = None,
    *,
    threshold: float | None = None,
    since: Moment = None,
    until: Moment = None,
) -> PromoteResult:
    """Refresh the index, then score every issue and promote the recurring ones (SPEC 12.2).

    Args:
        root: the capture root. threshold: overrides ``config.json``'s ``promotion_threshold`` and the
            seed calibration. since / until: only failures and calls in ``[since, until)``.

    Returns:
        A ``PromoteResult`` (``result.line()`` is what ``mcpeval-nb promote`` prints).

    Raises:
        UsageError: an invalid threshold or time. FindingsError: an unusable index or lifecycle.
    """
    base = Root.of(root).path
    since_ms, until_ms = parse_moment(since, what="--since"), parse_moment(until, what="--until")
    recover(base)  # the index refresh reads the journals back: an interrupted erase is finished first
    with index_lock(base):
        indexed = build_locked(base, full=False, options=ReadOptions(errors="report"))
        db = connect(base / INDEX_FILE, read_only=False)
        try:
            with transaction(db):
                result = promote_groups(db, base, threshold=threshold, since_ms=since_ms,
                                        until_ms=until_ms)
        finally:
            db.close()
    return dataclasses.replace(result, skipped_lines=indexed.skipped_lines)
