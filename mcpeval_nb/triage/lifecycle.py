"""Finding lifecycle (SPEC 12.4): ``open -> fix-claimed -> verifying -> closed`` in ``<root>/lifecycle.db``.

``lifecycle.db`` is the authoritative record of what was verified: it is never rebuilt, never part of a
share envelope, and a file there that is not ours (not SQLite, or other tables) is refused, never
overwritten.  Writers hold a sidecar lock (``lifecycle.db.lock``) so two verifies cannot interleave.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path

from filelock import FileLock, Timeout

from ..errors import FindingsError
from ..limits import LOCK_TIMEOUT_S
from ..root import entry_exists
from ..root.layout import LIFECYCLE, lifecycle_lock_path, lifecycle_path
from .index.database import transaction
from .rows import LIFECYCLE_COLUMNS, LIFECYCLE_TABLES, STATES

__all__ = ["FINDING_STATES", "LIFECYCLE_FILE", "STATES", "Lifecycle", "LifecycleRow", "lifecycle",
           "transition"]

LIFECYCLE_FILE = LIFECYCLE  # root.layout names it
#: The lifecycle states, in order (public name; declared with a finding's row, ``rows.STATES``).
FINDING_STATES = STATES
CLOSE_AFTER = 3
_SCHEMA = LIFECYCLE_TABLES  # SPEC 12.4 (declared in rows: index.db mirrors it)


def transition(state: str, *, same_probe: bool, consecutive: int, passed: bool) -> tuple[str, int]:
    """The next ``(state, consecutive_passes)`` after one verify run (SPEC 12.4).

    A red run keeps a claimed fix claimed, reopens a finding that was verifying or closed under the
    same probe, and otherwise marks the fix claimed; a green run counts consecutive passes of the same
    probe (a new probe starts at 1) and closes the finding at three.
    """
    if not passed:
        if same_probe and state in ("verifying", "closed"):
            return "open", 0
        return "fix-claimed", 0
    count = consecutive + 1 if same_probe else 1
    return ("closed" if count >= CLOSE_AFTER else "verifying"), count


@dataclass(frozen=True)
class LifecycleRow:
    """One finding's lifecycle."""

    finding_id: str
    server: str | None
    tool: str | None
    err_code: str | None
    err_template_id: str | None
    probe_id: str | None
    state: str
    consecutive_passes: int
    updated_at: int


#: Each table's columns, in order (a file with other columns is not ours).
_COLUMNS = {table: list(columns) for table, columns in LIFECYCLE_COLUMNS.items()}
assert _COLUMNS["finding_lifecycle"] == [f.name for f in fields(LifecycleRow)]


class Lifecycle:
    """An open ``lifecycle.db`` (use ``lifecycle(root)``)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def get(self, finding_id: str) -> LifecycleRow | None:
        """The finding's row, or None."""
        row = self.db.execute(f"SELECT {', '.join(_COLUMNS['finding_lifecycle'])} FROM finding_lifecycle "
                              "WHERE finding_id = ?", (finding_id,)).fetchone()
        return None if row is None else LifecycleRow(*row)

    def rows(self) -> dict[str, LifecycleRow]:
        """Every row by finding id."""
        cursor = self.db.execute(f"SELECT {', '.join(_COLUMNS['finding_lifecycle'])} FROM finding_lifecycle")
        return {r[0]: LifecycleRow(*r) for r in cursor}

    def open_findings(self, rows: list[tuple[str, str | None, str | None, str | None, str | None]],
                      *, at: int) -> None:
        """Insert ``(finding_id, server, tool, err_code, template_id)`` rows as ``open``; others stay."""
        self.db.executemany(
            "INSERT INTO finding_lifecycle (finding_id, server, tool, err_code, err_template_id, state, "
            "consecutive_passes, updated_at) VALUES (?, ?, ?, ?, ?, 'open', 0, ?) "
            "ON CONFLICT(finding_id) DO NOTHING", [(*r, at) for r in rows])

    def migrate(self, finding_id: str, server: str | None, tool: str | None, template_id: str | None) -> None:
        """Rename stale rows of (server, tool, template) to ``finding_id``: the most recently updated
        (then smallest id) keeps its history under the new id; the others are deleted (SPEC 12.2)."""
        stale = self.db.execute(
            "SELECT finding_id FROM finding_lifecycle WHERE server IS ? AND tool IS ? "
            "AND err_template_id IS ? AND finding_id != ? ORDER BY updated_at DESC, finding_id",
            (server, tool, template_id, finding_id)).fetchall()
        if not stale or self.get(finding_id) is not None:
            return
        keep, *drop = (r[0] for r in stale)
        for old in drop:
            self.db.execute("DELETE FROM finding_lifecycle WHERE finding_id = ?", (old,))
            self.db.execute("DELETE FROM probe_history WHERE finding_id = ?", (old,))
        self.db.execute("UPDATE finding_lifecycle SET finding_id = ?, err_code = NULL WHERE finding_id = ?",
                        (finding_id, keep))
        self.db.execute("UPDATE probe_history SET finding_id = ? WHERE finding_id = ?", (finding_id, keep))

    def record_verify(self, finding_id: str, probe_id: str, *, passed: bool, at: int) -> LifecycleRow:
        """Apply one verify verdict: the transition, the bound probe, and a ``probe_history`` row.

        Raises:
            FindingsError: the finding has no lifecycle row (it was never promoted).
        """
        row = self.get(finding_id)
        if row is None:
            raise FindingsError(f"finding {finding_id} has no lifecycle row; run promote first")
        state, count = transition(row.state, same_probe=row.probe_id == probe_id,
                                  consecutive=row.consecutive_passes, passed=passed)
        self.db.execute("UPDATE finding_lifecycle SET probe_id = ?, state = ?, consecutive_passes = ?, "
                        "updated_at = ? WHERE finding_id = ?", (probe_id, state, count, at, finding_id))
        self.db.execute("INSERT INTO probe_history (finding_id, probe_id, passed, ts) VALUES (?, ?, ?, ?)",
                        (finding_id, probe_id, int(passed), at))
        updated = self.get(finding_id)
        assert updated is not None
        return updated

    def adopt(self, rows: list[LifecycleRow], history: list[tuple[str, str, int, int]]) -> int:
        """Take another tool's lifecycle rows where they are newer (``updated_at``) than ours or ours has
        none, and its ``(finding_id, probe_id, passed, ts)`` verifies we lack; returns how many rows
        changed.  The reference tool keeps its lifecycle in ``index.db`` (SPEC 12.4)."""
        mine = self.rows()
        newer = [r for r in rows if r.finding_id not in mine or r.updated_at > mine[r.finding_id].updated_at]
        names = _COLUMNS["finding_lifecycle"]
        self.db.executemany(
            f"INSERT OR REPLACE INTO finding_lifecycle ({', '.join(names)}) "
            f"VALUES ({', '.join('?' * len(names))})",
            [tuple(getattr(r, n) for n in names) for r in newer])
        known = set(self.db.execute("SELECT finding_id, probe_id, passed, ts FROM probe_history"))
        extra = sorted({h for h in history if h not in known}, key=lambda h: (h[3], h))
        self.db.executemany("INSERT INTO probe_history (finding_id, probe_id, passed, ts) "
                            "VALUES (?, ?, ?, ?)", extra)
        return len(newer) + len(extra)

    def everything(self) -> tuple[list[LifecycleRow], list[tuple[int, str, str, int, int]]]:
        """Every lifecycle row and every ``probe_history`` row (``id, finding_id, probe_id, passed, ts``)."""
        history = self.db.execute("SELECT id, finding_id, probe_id, passed, ts FROM probe_history "
                                  "ORDER BY id")
        return list(self.rows().values()), [tuple(h) for h in history]

    def history(self, finding_id: str) -> list[tuple[int, str, bool, int]]:
        """``(id, probe_id, passed, ts)`` of every verify of the finding, oldest first."""
        cursor = self.db.execute("SELECT id, probe_id, passed, ts FROM probe_history WHERE finding_id = ? "
                                 "ORDER BY id", (finding_id,))
        return [(i, p, bool(ok), ts) for i, p, ok, ts in cursor]


def _check_ours(db: sqlite3.Connection, path: Path) -> None:
    try:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError:
        raise FindingsError(f"{path} is not a lifecycle database (not SQLite); left untouched") from None
    if not tables:
        return
    for table, columns in _COLUMNS.items():
        found = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
        if found != columns:
            raise FindingsError(f"{path} is not a mcpeval lifecycle database (table {table}); "
                               "left untouched")


def _connect(path: Path, *, write: bool, timeout: float) -> sqlite3.Connection:
    """Writers open (and create) the file; readers open it read-only, or an empty one in memory."""
    if write:
        return sqlite3.connect(path, timeout=timeout, isolation_level=None)
    if not entry_exists(path):
        return sqlite3.connect(":memory:", isolation_level=None)
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=timeout,
                           isolation_level=None)


@contextlib.contextmanager
def lifecycle(root: Path, *, write: bool = False, timeout: float = LOCK_TIMEOUT_S) -> Iterator[Lifecycle]:
    """Open ``<root>/lifecycle.db``; with ``write`` under the sidecar lock, committed on success.

    Raises:
        FindingsError: the file is not ours (left untouched), or the lock was not acquired in time.
    """
    path, lock_file = lifecycle_path(root), lifecycle_lock_path(root)
    lock = FileLock(str(lock_file), timeout=timeout) if write else None
    try:
        if lock is not None:
            lock.acquire()
    except Timeout:
        raise FindingsError(f"timed out waiting for the lifecycle lock on {path}") from None
    except OSError as exc:
        raise FindingsError(f"cannot lock {lock_file}: {exc.strerror}") from None
    try:
        db = _connect(path, write=write, timeout=timeout)
        try:
            _check_ours(db, path)
            with transaction(db, begin="BEGIN IMMEDIATE" if write else "BEGIN"):
                if write or not entry_exists(path):
                    for statement in filter(str.strip, _SCHEMA.split(";")):
                        db.execute(statement)
                yield Lifecycle(db)
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        raise FindingsError(f"lifecycle database {path} could not be used ({type(exc).__name__})") from None
    finally:
        if lock is not None:
            lock.release()
