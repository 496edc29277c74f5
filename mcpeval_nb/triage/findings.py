"""Reading findings: the last promotion's issues joined to their lifecycle, as ``Finding`` rows.

``read_findings`` reads them from an open index; ``list_findings`` opens ``<root>/index.db`` and
``lifecycle.db`` and returns them; ``findings`` is the public Arrow table (SPEC 12.5's fields and order),
``get_finding`` one issue, ``finding_history`` a finding's verifies.  ``since``/``until`` (an extension
to SPEC) keep findings last seen in ``[since, until)``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..clock import Moment, parse_moment
from ..errors import FindingsError, UsageError
from ..root import Root, RootLike
from .index.database import INDEX_FILE, open_for_reading
from .lifecycle import STATES, LifecycleRow, lifecycle
from .mirror import newest_rows
from .rows import Finding, Issue, select_issues, table_of
from .scoring import severity

__all__ = [
    "finding_history",
    "findings",
    "get_finding",
    "list_findings",
    "read_findings",
    "reading",
]

def _sort_key(f: Finding) -> tuple[Any, ...]:
    return (-f.score, f.server or "", f.tool or "", f.err_code or "", f.err_template_id or "")


def _finding(issue: Issue, lc: LifecycleRow | None) -> Finding:
    """The issue with its lifecycle (``open`` without one) and its severity (SPEC 12.2)."""
    probe = lc.probe_id if lc is not None else None
    rank = severity(issue.score, issue.threshold, annotated=issue.annotated, probed=probe is not None)
    return Finding(**{**vars(issue), "severity": rank}, state=lc.state if lc is not None else "open",
                   probe_id=probe, consecutive_passes=lc.consecutive_passes if lc is not None else 0)


def read_findings(
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
    out = []
    for issue in select_issues(db, promoted=promoted):
        if since_ms is not None and issue.last_seen_ms < since_ms:
            continue
        if until_ms is not None and issue.last_seen_ms >= until_ms:
            continue
        found = _finding(issue, life.get(issue.finding_id))
        if state is None or found.state == state:
            out.append(found)
    return sorted(out, key=_sort_key)


@contextmanager
def reading(root: RootLike) -> Iterator[tuple[Path, sqlite3.Connection]]:
    """``(root, index connection)`` opened read-only; closed afterwards.

    Raises:
        FindingsError: a missing, foreign, newer or corrupt index (with what to do).
    """
    base = Root.of(root).path
    db = open_for_reading(base)
    try:
        yield base, db
    except sqlite3.DatabaseError as exc:
        raise FindingsError(
            f"index database {base / INDEX_FILE} could not be read "
            f"({type(exc).__name__}); run `mcpeval-nb index --full`"
        ) from None
    finally:
        db.close()


def list_findings(
    root: RootLike = None,
    *,
    state: str | None = None,
    since: Moment = None,
    until: Moment = None,
    promoted: bool = True,
) -> list[Finding]:
    """The last promotion's findings as ``Finding`` rows (see ``findings``); every issue with
    ``promoted=False``.

    Raises:
        UsageError: an unknown state or bad time. FindingsError: no usable index or lifecycle.
    """
    if state is not None and state not in STATES:
        raise UsageError(f"unknown state {state!r}; valid states are: {', '.join(STATES)}")
    since_ms, until_ms = parse_moment(since, what="--since"), parse_moment(until, what="--until")
    with reading(root) as (base, db), lifecycle(base) as life:
        return read_findings(  # a row the reference tool wrote into index.db since counts (mirror.py)
            db, newest_rows(life.rows(), db), promoted=promoted, state=state, since_ms=since_ms,
            until_ms=until_ms)


def findings(
    root: RootLike = None, *, state: str | None = None, since: Moment = None, until: Moment = None
) -> pa.Table:
    """The promoted findings of the last ``promote``, best first (SPEC 12.5's fields and order).

    Args:
        root: the capture root. state: only findings in this lifecycle state (``open``, ``fix-claimed``,
            ``verifying``, ``closed``). since / until: only findings last seen in ``[since, until)``.

    Returns:
        A table with SPEC's columns (``err_code``, ``repro``, ``err_codes`` as compact JSON text) plus
        ``rate_high``, the upper bound of the failure rate's Wilson interval (``confidence`` is the lower).

    Raises:
        UsageError: an unknown state or bad time. FindingsError: no usable index (run ``index``).
    """
    return table_of(list_findings(root, state=state, since=since, until=until))


def get_finding(root: RootLike, finding_id: str) -> Finding:
    """One issue of the last promotion by finding id (promoted or not).

    Raises:
        FindingsError: no such finding.
    """
    for f in list_findings(root, promoted=False):
        if f.finding_id == finding_id:
            return f
    raise FindingsError(f"no issue {finding_id} in the last promotion; run mcpeval-nb promote")


def finding_history(root: RootLike, finding_id: str) -> pa.Table:
    """Every ``verify`` of a finding, oldest first: ``id``, ``probe_id``, ``passed``, ``ts`` (UTC).

    Raises:
        FindingsError: ``lifecycle.db`` is not ours.
    """
    with lifecycle(Root.of(root).path) as life:
        rows = life.history(finding_id)
    return pa.table(
        {
            "id": pa.array([r[0] for r in rows], pa.int64()),
            "probe_id": pa.array([r[1] for r in rows], pa.string()),
            "passed": pa.array([r[2] for r in rows], pa.bool_()),
            "ts": pa.array([r[3] for r in rows], pa.timestamp("ms", tz="UTC")),
        }
    )
