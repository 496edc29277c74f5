"""Readiness trend history: ``store/probes/history.jsonl`` (SPEC 7.1) and ``trends`` rendering (SPEC 7.3).

A full-battery run appends one ``TrendPoint`` through the journal writer (exclusive flock on the file,
one write, 4 MiB bound).  The measurement profile is validated before any directory is created or the
journal opened, so an invalid profile leaves history untouched.  Reading is strict on complete lines,
tolerant of an unterminated tail (a writer mid-append), and re-validates every profile; any bad complete
line makes the whole history ``trend history is corrupt`` (named by file and line, never by content).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..clock import now_ts
from ..errors import InvalidRecord, ProfileError, RecordTooLarge, TrendHistoryCorrupt
from ..journal import append_record, read_records
from ..privacy.records import MeasurementProfile, TrendPoint
from ..root import Root, RootLike, entry_exists
from ..root.layout import history_path
from .report import ProbeReport

__all__ = [
    "NO_HISTORY",
    "NO_HISTORY_HINT",
    "load_trends",
    "new_point",
    "record_report_trend",
    "record_trend",
    "render_trends",
    "select_recent",
    "trend_delta",
    "trends_text",
]

NO_HISTORY = "no trend history yet; run `mcpeval probe` first\n"
#: What ``mcpeval-nb trends`` says instead: SPEC's bytes (``NO_HISTORY``, kept for ``serve``) name the
#: Rust command.
NO_HISTORY_HINT = "no trend history yet; run `mcpeval-nb score` or `mcpeval-nb probe` first\n"


@dataclass(frozen=True)
class _Loaded:
    order: int
    point: TrendPoint


def record_trend(point: TrendPoint, *, root: RootLike = None) -> Path:
    """Append one trend point to ``<root>/store/probes/history.jsonl`` (created on demand).

    Args:
        point: the run's trend point; its measurement profile is validated first.
        root: the capture root (default ``$MCPEVAL_HOME``).

    Returns:
        The history path.

    Raises:
        ProfileError: invalid measurement profile; nothing created, nothing written.
        RecordTooLarge, LockTimeout, JournalError: from the journal writer; nothing written.
    """
    if point.measurement_profile is not None:
        point.measurement_profile.validate()
    return append_record(Root.of(root).path, point)


def new_point(*, server: str, passed: bool, cases_total: int, cases_passed: int, score: int,
              manifest_sha256: str | None, standard: str | None,
              profile: MeasurementProfile | None = None) -> TrendPoint:
    """A trend point stamped now (SPEC 7.1 fields; ``profile`` is the run's measurement profile)."""
    return TrendPoint(ts=now_ts(), server=server, passed=passed, cases_total=cases_total,
                      cases_passed=cases_passed, score=score, manifest_sha256=manifest_sha256,
                      standard=standard, measurement_profile=profile)


def record_report_trend(report: ProbeReport, *, root: RootLike = None) -> Path | None:
    """Append the trend point of a full-battery run (SPEC 7.1); runs without readiness record nothing.

    Args:
        report: the run's report; gate-only, selected-probe and errored runs have no readiness.
        root: the capture root (default ``$MCPEVAL_HOME``).

    Returns:
        The history path, or None when nothing was recorded.

    Raises:
        ProfileError, JournalError: as ``record_trend``.
    """
    readiness = report.readiness
    if readiness is None or report.readiness_error is not None or report.cancelled:
        return None
    passed = sum(c.passed for c in report.cases)
    point = new_point(server=report.server, passed=report.passed, cases_total=len(report.cases),
                      cases_passed=passed, score=readiness.score, manifest_sha256=report.manifest_sha256,
                      standard=readiness.standard, profile=readiness.measurement_profile)
    return record_trend(point, root=root)


def load_trends(*, root: RootLike = None) -> list[TrendPoint] | None:
    """Every trend point in file order, or None when there is no history file.

    Raises:
        TrendHistoryCorrupt: a complete line is invalid, oversized, or has an invalid profile.
        LockTimeout, JournalError: the file could not be read.
    """
    path = history_path(Root.of(root).path)
    if not entry_exists(path):  # an unreadable store is an error, never "no history"
        return None
    try:
        return [entry.record for entry in read_records(path)]
    except RecordTooLarge as exc:
        raise TrendHistoryCorrupt(path, exc.line, "line exceeds 4 MiB") from None
    except InvalidRecord as exc:
        detail = exc.reason if exc.reason != "invalid journal record" else None
        raise TrendHistoryCorrupt(path, exc.line, detail) from None
    except ProfileError as exc:  # pragma: no cover - read_records maps profile errors to InvalidRecord
        raise TrendHistoryCorrupt(path, None, str(exc)) from None


def select_recent(points: Iterable[TrendPoint], last: int) -> dict[str, list[TrendPoint]]:
    """The newest ``last`` points per server, servers ascending, each oldest first.

    Points are ordered by ``ts`` string, ties by file order (stable).
    """
    groups: dict[str, list[_Loaded]] = {}
    for i, p in enumerate(points):
        groups.setdefault(p.server, []).append(_Loaded(i, p))
    out: dict[str, list[TrendPoint]] = {}
    for server in sorted(groups):
        ordered = sorted(groups[server], key=lambda e: (e.point.ts, e.order))
        kept = ordered[max(len(ordered) - last, 0):] if last > 0 else []
        if kept:
            out[server] = [e.point for e in kept]
    return out


def trend_delta(previous: TrendPoint | None, current: TrendPoint) -> str:
    """The delta part of a trend line against the previous point of the same server (SPEC 7.3).

    The rules live in ``analysis.readiness.trend_delta`` (shared with the notebook history table); this
    adds the separating space the line needs.

    Returns:
        ``""`` for the first point; else `` standard changed``, `` measurement profile unavailable``,
        `` measurement profile changed``, `` +N``/`` -N``/`` +0``, or `` manifest changed``.
    """
    from ..analysis.readiness import trend_delta as analysis_delta  # pandas: loaded only to print deltas

    text = analysis_delta(previous, current)
    return f" {text}" if text else ""


def _summary(previous: TrendPoint | None, p: TrendPoint) -> str:
    text = f"score={p.score}/100 cases={p.cases_passed}/{p.cases_total}"
    if not p.passed:
        text += " FAILING"
    text += trend_delta(previous, p)
    if p.manifest_sha256 is not None:
        text += f" manifest={p.manifest_sha256[:8]}"
    return text


def render_trends(groups: dict[str, list[TrendPoint]]) -> str:
    """The ``trends`` text: ``<server>`` then ``  <ts> <summary>`` per point, newline-terminated lines."""
    lines: list[str] = []
    for server, points in groups.items():
        lines.append(server)
        previous: TrendPoint | None = None
        for p in points:
            lines.append(f"  {p.ts} {_summary(previous, p)}")
            previous = p
    return "".join(line + "\n" for line in lines)


def trends_text(*, root: RootLike = None, last: int = 10) -> str:
    """What ``mcpeval-nb trends [--last N]`` prints (the no-history message when there is no file).

    Raises:
        TrendHistoryCorrupt: see ``load_trends``.
    """
    points = load_trends(root=root)
    if points is None:
        return NO_HISTORY_HINT
    return render_trends(select_recent(points, last))
