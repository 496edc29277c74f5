"""The lifecycle in ``index.db``: a mirror of ``lifecycle.db`` for the reference tool, and the rows it wrote.

The reference tool (the Rust ``mcpeval``) keeps SPEC 12.4's ``finding_lifecycle`` and ``probe_history`` in
``index.db``; this package keeps them in ``lifecycle.db``, the authoritative record.  So that one root can
be used by both tools, the lifecycle crosses both ways:

- ``adopt_from_index``: the rows found in ``index.db`` (written by the reference's ``promote`` or
  ``verify``, or carried over a full build from the reference's own index) are taken into
  ``lifecycle.db`` where they are newer (``updated_at``) than ours, with the verifies we lack;
- ``mirror_into_index``: ``lifecycle.db``'s rows replace the mirror, and each issue's stored ``severity``
  follows its lifecycle (SPEC 12.2: at most ``medium`` until a probe is bound).

``promote`` does both under its locks; ``verify`` writes its one row and verify into the mirror too
(``mirror_verify``), whichever tool wrote ``index.db``.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from ..errors import FindingsError
from ..root.layout import INDEX
from .index.database import connect, transaction
from .lifecycle import Lifecycle, LifecycleRow
from .rows import LIFECYCLE_COLUMNS, STATES
from .scoring import severity

__all__ = ["adopt_from_index", "index_rows", "mirror_into_index", "mirror_verify", "newest_rows"]

_LIFE = LIFECYCLE_COLUMNS["finding_lifecycle"]
_HISTORY = LIFECYCLE_COLUMNS["probe_history"]


def _insert(table: str, columns: tuple[str, ...], *, verb: str = "INSERT") -> str:
    return f"{verb} INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


def index_rows(db: sqlite3.Connection) -> dict[str, LifecycleRow]:
    """``index.db``'s ``finding_lifecycle`` rows by finding id (none when it has no such table)."""
    try:
        rows = [LifecycleRow(*r) for r in db.execute(f"SELECT {', '.join(_LIFE)} FROM finding_lifecycle")]
    except sqlite3.DatabaseError:
        return {}
    return {r.finding_id: r for r in rows if isinstance(r.finding_id, str) and isinstance(r.updated_at, int)
            and r.state in STATES}


def newest_rows(mine: dict[str, LifecycleRow], db: sqlite3.Connection) -> dict[str, LifecycleRow]:
    """``lifecycle.db``'s rows, each replaced by ``index.db``'s where that one is newer or ours is absent
    (what a reader shows before the next ``promote`` adopts them)."""
    merged = dict(mine)
    for fid, row in index_rows(db).items():
        if fid not in merged or row.updated_at > merged[fid].updated_at:
            merged[fid] = row
    return merged


def adopt_from_index(db: sqlite3.Connection, life: Lifecycle) -> int:
    """Take ``index.db``'s lifecycle rows into ``lifecycle.db`` where they are newer; how many changed.

    Args:
        db: an open ``index.db`` (any layout: nothing is taken from a file without the tables).
        life: ``lifecycle.db`` opened for writing.
    """
    try:
        history = db.execute("SELECT finding_id, probe_id, passed, ts FROM probe_history").fetchall()
    except sqlite3.DatabaseError:
        history = []
    usable = [tuple(h) for h in history if isinstance(h[0], str) and isinstance(h[1], str)
              and h[2] in (0, 1) and isinstance(h[3], int)]
    return life.adopt(list(index_rows(db).values()), usable)


def mirror_into_index(db: sqlite3.Connection, life: Lifecycle) -> None:
    """Replace ``index.db``'s lifecycle tables with ``lifecycle.db``'s rows and set each issue's severity.

    Args:
        db: an open, writable ``index.db`` of this package's layout, inside a transaction.
        life: ``lifecycle.db``, open.
    """
    rows, history = life.everything()
    db.execute("DELETE FROM probe_history")
    db.execute("DELETE FROM finding_lifecycle")
    db.executemany(_insert("finding_lifecycle", _LIFE), [tuple(getattr(r, c) for c in _LIFE) for r in rows])
    db.executemany(_insert("probe_history", _HISTORY), history)
    _set_severity(db, {r.finding_id: r for r in rows})


def _set_severity(db: sqlite3.Connection, rows: dict[str, LifecycleRow], *, only: str | None = None) -> None:
    """Each issue's ``severity`` (or only ``only``'s) as its lifecycle makes it (a probe bound or not)."""
    issues = db.execute("SELECT id, finding_id, score, threshold, annotated FROM issues "
                        "WHERE ? IS NULL OR finding_id = ?", (only, only)).fetchall()
    db.executemany("UPDATE issues SET severity = ? WHERE id = ?", [
        (severity(score, limit, annotated=bool(annotated),
                  probed=fid in rows and rows[fid].probe_id is not None), i)
        for i, fid, score, limit, annotated in issues])


def mirror_verify(root: Path, row: LifecycleRow, *, passed: bool) -> str | None:
    """Write one verify (the finding's new row and its ``probe_history`` row) into ``index.db``.

    Best effort: ``lifecycle.db`` already holds it and the next ``promote`` mirrors it again.

    Returns:
        None when written, else why not (no index, no lifecycle tables in it, busy).
    """
    path = root / INDEX
    if not path.exists():
        return "no index.db"
    try:
        db = connect(path, read_only=False)
    except FindingsError as exc:
        return str(exc)
    try:
        with transaction(db):
            db.execute(_insert("finding_lifecycle", _LIFE, verb="INSERT OR REPLACE"),
                       tuple(getattr(row, c) for c in _LIFE))
            db.execute("INSERT INTO probe_history (finding_id, probe_id, passed, ts) VALUES (?, ?, ?, ?)",
                       (row.finding_id, row.probe_id, int(passed), row.updated_at))
            with contextlib.suppress(sqlite3.OperationalError):  # the reference's issues: other columns
                _set_severity(db, {row.finding_id: row}, only=row.finding_id)
    except sqlite3.DatabaseError as exc:
        return f"index.db not updated ({type(exc).__name__})"
    finally:
        db.close()
    return None
