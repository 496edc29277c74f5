"""Retention by days: remove call, annotation and catalog journals older than N days (docs/governance.md).

A journal's day is the one in its file name (UTC); ``calls-unknown.jsonl`` has none and is kept.  A
journal is removed whole, under its exclusive lock; with ``include_probe_history`` the trend points of
older days are dropped from ``store/probes/history.jsonl`` by the erase's crash-safe in-place rewrite.
``lifecycle.db``, ``index.db`` (which notices the removal and rebuilds) and the audit log are never
trimmed.  Without ``days`` (argument or ``config.json`` ``retention_days``) nothing is ever deleted.
"""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass, replace
from pathlib import Path

from ..clock import CLOCK, is_day
from ..errors import MCPEvalError
from ..journal.read import iter_lines
from ..limits import LOCK_TIMEOUT_S
from ..privacy.records import TrendPoint
from ..root import Root, RootLike, check_days, drop_engine_dataset
from ..root.config import MAX_RETENTION_DAYS
from ..root.layout import CONFIG, TRENDS, history_path, store_dir
from . import audit
from .erasure import recover_locked
from .intent import Intent, governance_lock
from .rewrite import Filter, remove_file, rewrite
from .select import journal_day, parse_record, record_kind, store_journals

__all__ = ["MAX_RETENTION_DAYS", "RETENTION_INTERVAL_S", "RetentionResult", "RetentionTimer",
           "apply_retention", "configured_retention", "journal_date"]

#: ``serve`` applies a configured retention once at start and then at this interval.
RETENTION_INTERVAL_S = 3600.0
_HISTORY = TRENDS.rel()


@dataclass(frozen=True)
class RetentionResult:
    """What a retention pass removed (or, with ``dry_run``, would remove).

    Attributes:
        days: the retention in days.
        cutoff: journals of days before this one (``YYYY-MM-DD``) are removed.
        files: store-relative paths of the journals removed.
        records: records removed per kind (``calls``, ``annotations``, ``trend_points``, ``catalogs``).
        dry_run: nothing was deleted.
        audit_written: the audit record was written.
    """

    days: int
    cutoff: str
    files: tuple[str, ...]
    records: dict[str, int]
    dry_run: bool
    audit_written: bool = True

    def lines(self) -> list[str]:
        """The command's output: files and counts, never content."""
        verb = "would remove" if self.dry_run else "removed"
        r = self.records
        listings = f", {r['catalogs']} catalog record(s)" if r.get("catalogs") else ""
        lines = [f"{verb} {len(self.files)} journal(s) older than {self.days} day(s) (before "
                 f"{self.cutoff}): {r.get('calls', 0)} call(s), {r.get('annotations', 0)} annotation(s), "
                 f"{r.get('trend_points', 0)} trend point(s){listings}"]
        lines += [f"  {rel}" for rel in self.files]
        if not self.audit_written:
            lines.append("audit: 1 record could not be written")
        return lines


def journal_date(day: str) -> dt.date | None:
    """The calendar day a journal's name holds (``YYYY-MM-DD``), or None when it holds none: such a
    journal (``calls-unknown.jsonl``, ``calls-1.jsonl``, ``calls-20001130.jsonl``) cannot be dated, and
    retention never removes what it cannot date."""
    return dt.date.fromisoformat(day) if is_day(day) else None


def configured_retention(root: RootLike = None) -> tuple[int | None, str]:
    """``config.json``'s ``retention_days`` and where it came from (``config.json`` or ``unset``).

    Raises:
        UsageError: the file is unreadable or the value is not a whole number >= 1.
    """
    days = Root.of(root).config.retention_days
    return (None, "unset") if days is None else (days, CONFIG)


def _count_records(path: Path) -> int:
    return sum(1 for raw in iter_lines(path, include_tail=True) if raw.data.strip())


def _history_filter(cutoff: str) -> Filter:
    def keep(line: bytes) -> bool:
        point = parse_record(line, TrendPoint.from_dict)
        return point is None or not (point.ts[:10] < cutoff and point.ts[:4].isdigit())
    return Filter(candidate=lambda chunk: True, keep=keep)


def apply_retention(root: RootLike = None, *, days: int, dry_run: bool = False,
                    include_probe_history: bool = False, today: dt.date | None = None,
                    timeout: float = LOCK_TIMEOUT_S) -> RetentionResult:
    """Remove call and annotation journals whose day is more than ``days`` days before today (UTC).

    Args:
        root: the capture root (default ``$MCPEVAL_HOME``, else ``~/.mcp-eval``).
        days: keep this many days before today (a whole number >= 1).
        dry_run: count what would be removed; nothing is deleted.
        include_probe_history: also drop older trend points from ``store/probes/history.jsonl``.
        today: the day to count from (default: today, UTC).
        timeout: seconds to wait for each journal's exclusive lock.

    Returns:
        The journals removed and the records per kind.  An audit record is appended unless ``dry_run``.

    Raises:
        UsageError: ``days`` is not a whole number >= 1.
        JournalError: a journal cannot be read or removed.
        GovernanceError: an erase or another retention is running.
    """
    base = Root.of(root).path
    try:
        return _apply(base, check_days(days, "days"), dry_run, include_probe_history, today, timeout)
    except MCPEvalError as exc:
        audit.record(base, action="retention", outcome=audit.outcome_of(exc), reason=audit.reason_of(exc))
        raise


def _apply(base: Path, days: int, dry_run: bool, include_probe_history: bool, today: dt.date | None,
           timeout: float) -> RetentionResult:
    cutoff = ((today or CLOCK.today()) - dt.timedelta(days=days)).isoformat()
    records = {"calls": 0, "annotations": 0, "trend_points": 0, "catalogs": 0}
    removed: list[str] = []
    if not store_dir(base).is_dir():
        return RetentionResult(days, cutoff, (), records, dry_run)
    with governance_lock(base, timeout=timeout):
        recover_locked(base, timeout)
        for rel in store_journals(base, "retention"):
            date = journal_date(journal_day(rel))
            if date is None or date.isoformat() >= cutoff:
                continue
            path = store_dir(base) / rel
            records[record_kind(rel)] += _count_records(path)
            if not dry_run:
                remove_file(path, timeout=timeout)
            removed.append(rel)
        if include_probe_history and history_path(base).is_file():
            intent = Intent(op="retention", selection={"before": cutoff}, files=(_HISTORY,))
            dropped, _ = rewrite(base, _HISTORY, _history_filter(cutoff), intent, dry_run=dry_run,
                                 timeout=timeout)
            records["trend_points"] = dropped
            if not dry_run:
                Intent.clear(base)
    result = RetentionResult(days, cutoff, tuple(removed), records, dry_run)
    if dry_run:
        return result
    written = audit.record(base, action="retention", labels={"before": cutoff},
                           counts={**records, "journals": len(removed), "days": days},
                           paths=[f"store/{rel}" for rel in removed])
    if removed or records["trend_points"]:  # after the audit record, as erase does
        drop_engine_dataset(base)  # derived data holding what was removed (re-exported on use)
    return replace(result, audit_written=written)


class RetentionTimer:
    """Applies a configured retention once at start and then every ``interval`` seconds on a daemon
    thread, never inside a request (for ``serve``).  A failed pass is written to the audit log as
    ``failed`` and retried at the next interval.

    Args:
        root: the capture root.
        days: the retention (``configured_retention``); None makes ``start`` a no-op.
        interval: seconds between passes.
    """

    def __init__(self, root: RootLike, days: int | None, *, interval: float = RETENTION_INTERVAL_S) -> None:
        self.root = Root.of(root).path
        self.days = days
        self.interval = interval
        self.passes = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread (a no-op without ``days`` or when already started)."""
        if self.days is None or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="mcpeval-retention", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and wait for a pass in progress to end."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _loop(self) -> None:
        assert self.days is not None
        while not self._stop.is_set():
            try:
                apply_retention(self.root, days=self.days)
            except MCPEvalError:
                pass  # apply_retention recorded it; the next pass retries
            except Exception:  # a pass that fails is recorded and retried, never raised
                audit.record(self.root, action="retention", outcome="failed", reason="error")
            self.passes += 1
            self._stop.wait(self.interval)
