"""The public findings API: promote, list, explain, and look inside a finding (Arrow tables out).

Every function takes the capture root (default ``$MCPEVAL_HOME``) and reads ``index.db`` and
``lifecycle.db``; ``promote`` first brings the index up to date (incrementally) under the index lock.
``since``/``until`` (an extension to SPEC) restrict ``promote`` to failures and calls in ``[since,
until)`` and ``findings`` to findings last seen in it; without them both behave exactly as SPEC says.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa

from ..errors import FindingsError, UsageError
from ..home import resolve_root
from .index import _build_locked, index_lock
from .lifecycle import STATES, lifecycle
from .promote import PromoteResult, promote_groups
from .report import Finding, load_findings, render, table_of
from .schema import INDEX_FILE, connect, open_for_reading, transaction

__all__ = [
    "FINDINGS_FORMATS",
    "Moment",
    "finding_history",
    "findings",
    "get_finding",
    "promote",
    "render_findings",
    "to_ms",
]

FINDINGS_FORMATS = ("agent", "md", "json")

Moment = str | dt.datetime | dt.date | None


def to_ms(value: Moment, *, what: str) -> int | None:
    """Milliseconds since the epoch of a ``YYYY-MM-DD`` day (UTC midnight), an RFC 3339 time, a
    ``datetime`` (naive = UTC) or a ``date``.

    Raises:
        UsageError: text that is neither.
    """
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = (
                dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
                if "T" in value
                else dt.date.fromisoformat(value)
            )
        except ValueError:
            raise UsageError(f"{what} must be a YYYY-MM-DD day or an RFC 3339 time") from None
    if not isinstance(value, dt.datetime):
        value = dt.datetime.combine(value, dt.time(), dt.UTC)
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return int(value.timestamp() * 1000)


def promote(
    root: Path | str | None = None,
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
    base = resolve_root(root)
    since_ms, until_ms = to_ms(since, what="--since"), to_ms(until, what="--until")
    with index_lock(base):
        indexed = _build_locked(base, full=False, errors="report", progress=None, cancel=None)
        db = connect(base / INDEX_FILE, read_only=False)
        try:
            with transaction(db):
                result = promote_groups(db, base, threshold=threshold, since_ms=since_ms,
                                        until_ms=until_ms)
        finally:
            db.close()
    return dataclasses.replace(result, skipped_lines=indexed.skipped_lines)


@contextmanager
def reading(root: Path | str | None) -> Iterator[tuple[Path, sqlite3.Connection]]:
    """``(root, index connection)`` opened read-only; closed afterwards.

    Raises:
        FindingsError: a missing, foreign, newer or corrupt index (with what to do).
    """
    base = resolve_root(root)
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
    root: Path | str | None = None,
    *,
    state: str | None = None,
    since: Moment = None,
    until: Moment = None,
    promoted: bool = True,
) -> list[Finding]:
    """The last promotion's findings as ``Finding`` rows (see ``findings``)."""
    if state is not None and state not in STATES:
        raise UsageError(f"unknown state {state!r}; valid states are: {', '.join(STATES)}")
    since_ms, until_ms = to_ms(since, what="--since"), to_ms(until, what="--until")
    with reading(root) as (base, db), lifecycle(base) as life:
        return load_findings(
            db, life.rows(), promoted=promoted, state=state, since_ms=since_ms, until_ms=until_ms
        )


def findings(
    root: Path | str | None = None, *, state: str | None = None, since: Moment = None, until: Moment = None
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


def render_findings(
    root: Path | str | None = None,
    *,
    format: str = "agent",
    state: str | None = None,
    since: Moment = None,
    until: Moment = None,
) -> str:
    """The promoted findings as ``findings`` prints them: ``agent`` lines, ``md`` or ``json``; the empty
    string when there are none (the CLI then says so on stderr).

    Raises:
        UsageError: an unknown format, state or time. FindingsError: no usable index.
    """
    if format not in FINDINGS_FORMATS:
        raise UsageError(f"unknown format {format!r}; expected agent, md or json")
    found = list_findings(root, state=state, since=since, until=until)
    return render(found, format) if found else ""


def get_finding(root: Path | str | None, finding_id: str) -> Finding:
    """One issue of the last promotion by finding id (promoted or not).

    Raises:
        FindingsError: no such finding.
    """
    for f in list_findings(root, promoted=False):
        if f.finding_id == finding_id:
            return f
    raise FindingsError(f"no issue {finding_id} in the last promotion; run mcpeval-nb promote")


def finding_history(root: Path | str | None, finding_id: str) -> pa.Table:
    """Every ``verify`` of a finding, oldest first: ``id``, ``probe_id``, ``passed``, ``ts`` (UTC).

    Raises:
        FindingsError: ``lifecycle.db`` is not ours.
    """
    with lifecycle(resolve_root(root)) as life:
        rows = life.history(finding_id)
    return pa.table(
        {
            "id": pa.array([r[0] for r in rows], pa.int64()),
            "probe_id": pa.array([r[1] for r in rows], pa.string()),
            "passed": pa.array([r[2] for r in rows], pa.bool_()),
            "ts": pa.array([r[3] for r in rows], pa.timestamp("ms", tz="UTC")),
        }
    )
