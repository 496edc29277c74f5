"""The layout of ``<root>/index.db`` (SPEC 12.1): tables, views, indexes, checkpoint, and how it is opened.

The SQL surface is SPEC's, so that the reference tool can read and rebuild the file: ``calls`` (a table
with SPEC's columns), ``windows``, ``annotations``, the checkpoint tables, the lifecycle mirror
(``finding_lifecycle``, ``probe_history``: ``lifecycle.db`` stays authoritative) and, after ``promote``,
``issues`` and ``findings``.  This package's own readers use the compact columns that follow SPEC's in
each ``calls`` row (``ts_ms`` and three codes), through the view ``call_rows``: a call is one row of
integers there, with its ``calls`` id; text values live once in ``strings`` (sessions, argument shapes),
label combinations once in ``call_labels`` (server, method, tool, outcome, kind, with the number of
indexed calls that have them, so that ``promote`` counts calls without reading them) and error fields in
``call_errors`` for the rows that have them.  (A table of their own cost every full build 1.2-1.5 s
of writing; in ``calls`` they cost the bulk writer almost nothing: docs/performance.md.)
Event ids are found through ``call_events`` (64-bit keys in key order, ``events.py``); each capture's last
calls are kept in ``index_capture_groups`` as a legacy group's are in ``index_groups``, which is all a
refresh needs of a capture (sizes and times in docs/performance.md). ``index.db`` is derived: a file
that is not ours, or not this version, is rebuilt by ``index`` (written to a temporary file, then renamed
into place) and refused with a clear message by the readers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ...errors import FindingsError
from ...root import entry_exists
from ...root.layout import INDEX
from ..rows import ISSUES_TABLE, LIFECYCLE_TABLES

__all__ = ["COUNT_LABELS", "FILL_CAPTURES", "INDEXES", "INDEX_FILE", "NULL_TS", "REFILL_CAPTURES", "SCHEMA",
           "SPEC_TS", "SCHEMA_DIGEST", "TABLES", "VERSION", "IndexState", "Transaction", "connect",
           "inspect_index", "json_list", "open_for_reading", "statements", "transaction"]

INDEX_FILE = INDEX  # root.layout names it
#: The checkpoint version: 2 since each source's digest is the one append proof (``journal.proof.Prefix``);
#: 3 since ``calls``, ``index_events`` and ``index_captures`` are tables and the lifecycle is mirrored (the
#: reference tool can use the file).  An index written before rebuilds once.
VERSION = 3
NULL_TS = -(2**63)  # bound for a NULL ts/latency (binding None is slow in the sqlite3 module)

_CALL_TABLES = """
CREATE TABLE strings (id INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE);
CREATE TABLE call_labels (id INTEGER PRIMARY KEY, server TEXT NOT NULL, method TEXT NOT NULL, tool TEXT,
  outcome TEXT NOT NULL, kind TEXT NOT NULL, calls INTEGER NOT NULL DEFAULT 0,
  UNIQUE (server, method, tool, outcome, kind));
CREATE TABLE call_errors (call_id INTEGER PRIMARY KEY, err_code TEXT, err_template TEXT,
  err_template_id TEXT, err_retryable INTEGER);
CREATE TABLE call_events (key INTEGER NOT NULL, call_id INTEGER NOT NULL, PRIMARY KEY (key, call_id))
  WITHOUT ROWID;
CREATE TABLE windows (failure_id INTEGER NOT NULL, neighbour_id INTEGER NOT NULL, offset INTEGER NOT NULL,
  PRIMARY KEY (failure_id, neighbour_id)) WITHOUT ROWID;
CREATE TABLE annotations (call_id INTEGER, event_id TEXT, session TEXT NOT NULL, seq INTEGER, ts TEXT,
  kind TEXT NOT NULL, note TEXT, matches INTEGER);
CREATE TABLE index_sources (path TEXT PRIMARY KEY, offset INTEGER NOT NULL, digest TEXT NOT NULL,
  next_line INTEGER NOT NULL DEFAULT 1, kind TEXT NOT NULL DEFAULT '');
CREATE TABLE index_groups (session INTEGER NOT NULL, server TEXT NOT NULL, tail TEXT NOT NULL,
  PRIMARY KEY (session, server)) WITHOUT ROWID;
CREATE TABLE index_capture_groups (capture TEXT PRIMARY KEY, session INTEGER NOT NULL, server TEXT NOT NULL,
  tail TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE index_skipped (session INTEGER NOT NULL, server TEXT NOT NULL, PRIMARY KEY (session, server));
CREATE TABLE index_checkpoint (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), version INTEGER NOT NULL,
  schema_digest TEXT NOT NULL, replayed_events INTEGER NOT NULL, calls INTEGER NOT NULL DEFAULT 0,
  failures INTEGER NOT NULL DEFAULT 0, annotations INTEGER NOT NULL DEFAULT 0);
"""
#: SPEC 12.1's tables that the reference tool reads (``calls``) or drops and recreates on its own rebuild
#: (all of them): tables with SPEC's names, columns and types (``calls`` is written from the loader's
#: Arrow batch, ``spec_rows.py``); ``index_captures`` from ``index_capture_groups``; ``index_events``
#: stays empty (event ids are found through ``call_events``; the reference reads it only under a checkpoint
#: of its own, so it rebuilds first).  After SPEC's columns, as other tables here have columns of ours
#: after SPEC's, each ``calls`` row holds its compact columns: the time in ms (NULL for none) and the codes
#: of its session and argument shape (``strings``) and of its labels (``call_labels``), nullable like our
#: other columns, so that an insert naming only SPEC's columns works.
_SPEC_TABLES = """CREATE TABLE calls (id INTEGER PRIMARY KEY, capture_id TEXT, event_id TEXT, ts, session,
  seq, server, method, tool, latency_ms, outcome, err_code TEXT, err_template TEXT, err_template_id TEXT,
  err_retryable INTEGER, args TEXT, kind, ts_ms INTEGER, session_code INTEGER, labels_code INTEGER,
  args_code INTEGER);
CREATE TABLE index_events (event TEXT PRIMARY KEY, digest TEXT);
CREATE TABLE index_captures (capture TEXT PRIMARY KEY, session, server);
"""
#: A call as this package's readers use it: integers only (``session`` and ``args`` are ``strings`` codes,
#: ``labels`` a ``call_labels`` code).  SQLite reads the view as the ``calls`` columns it names.
_VIEWS = """CREATE VIEW call_rows (id, ts_ms, session, seq, labels, latency_ms, args) AS
  SELECT id, ts_ms, session_code, seq, labels_code, latency_ms, args_code FROM calls;
"""
#: The promoted ones among the last promotion's ``issues`` (``rows.ISSUES_TABLE``).
_FINDINGS_TABLE = (
    "CREATE TABLE findings (issue_id INTEGER PRIMARY KEY REFERENCES issues(id) ON DELETE CASCADE,\n"
    "  finding_id TEXT NOT NULL UNIQUE);\n"
)
#: SQLite's spelling of ``calls.ts`` for a time in milliseconds (the SQL expression ``{}`` stands for): RFC
#: 3339 UTC with ms, as the reference writes it; ``spec_rows.spec_ts`` spells the same with numpy.
SPEC_TS = "strftime('%Y-%m-%dT%H:%M:%fZ', {} / 1000.0, 'unixepoch')"
#: ``call_labels.calls``: add each label's number of calls (parameters: the number, the label's code).
COUNT_LABELS = "UPDATE call_labels SET calls = calls + ? WHERE id = ?"
#: ``index_captures`` from every capture group (a full build).
FILL_CAPTURES = """INSERT OR REPLACE INTO index_captures (capture, session, server)
  SELECT g.capture, ses.value, g.server FROM index_capture_groups g JOIN strings ses ON ses.id = g.session"""
#: ``index_captures`` of the captures in a JSON list (a refresh: looked up by key, not a scan of every group).
REFILL_CAPTURES = FILL_CAPTURES + "\n  WHERE g.capture IN (SELECT value FROM json_each(?))"
#: Every table, in creation order.
TABLES = _CALL_TABLES + _SPEC_TABLES + _VIEWS + ISSUES_TABLE + _FINDINGS_TABLE + LIFECYCLE_TABLES

#: Created after a full build's rows are in (and kept up to date by incremental refreshes).
INDEXES = """
CREATE INDEX call_errors_issue ON call_errors (err_code, err_template_id);
CREATE INDEX annotations_call ON annotations (call_id);
CREATE INDEX annotations_at ON annotations (session, seq);
"""

SCHEMA = TABLES + INDEXES
#: SHA-256 of the layout above: a checkpoint with another digest (an older layout, the Rust tool's) is
#: rebuilt.  The Rust tool rebuilds ours for the same reason.
SCHEMA_DIGEST = "mcpeval-nb:" + hashlib.sha256(SCHEMA.encode("utf-8")).hexdigest()


def json_list(values: object) -> str:
    """A list bound as one parameter that SQLite's ``json_each`` reads (plain JSON: it never leaves SQLite,
    so it is not the reference tool's serialisation)."""
    return json.dumps(values, separators=(",", ":"))


def statements(text: str) -> list[str]:
    """The SQL statements of a script (split on ``;`` at line ends)."""
    return [s.strip() for s in text.split(";\n") if s.strip()]


def connect(path: Path, *, read_only: bool, timeout: float = 5.0,
            threads: bool = False) -> sqlite3.Connection:
    """Open an index database with SPEC 6.2's settings (``foreign_keys``, busy timeout, file temp store).

    Raises:
        FindingsError: the file cannot be opened.
    """
    try:
        if read_only:
            db = sqlite3.connect(
                f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=timeout, isolation_level=None
            )
        else:
            db = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=not threads)
        db.execute("PRAGMA foreign_keys=ON")
        db.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        db.execute("PRAGMA temp_store=FILE")
        if not read_only:  # a derived file: no fsync per commit (docs/findings.md, "Durability")
            db.execute("PRAGMA synchronous=OFF")
            db.execute("PRAGMA journal_mode=TRUNCATE")
    except sqlite3.Error as exc:
        raise FindingsError(f"cannot open the index database {path} ({type(exc).__name__})") from None
    return db


class IndexState:
    """What an existing ``index.db`` is: ``ok`` (ours, this version), or why it must be rebuilt.

    Attributes:
        ok: usable as it is. reason: why not (``missing``, ``not an SQLite database``, ``not an mcpeval-nb
            index``, ``written by a newer version (checkpoint version N)``, ``older layout``, ``corrupt``).
        newer: the checkpoint names a version above ours.
    """

    def __init__(self, ok: bool, reason: str = "", *, newer: bool = False) -> None:
        self.ok, self.reason, self.newer = ok, reason, newer


def inspect_index(path: Path, *, thorough: bool = False) -> IndexState:
    """Check ``index.db`` without changing it: present, SQLite, ours, this version (and with
    ``thorough``, ``PRAGMA quick_check``: a full read, so refreshes skip it and treat an SQLite
    corruption error met on the way as a reason to rebuild)."""
    if not entry_exists(path):
        return IndexState(False, "missing")
    try:
        db = connect(path, read_only=True)
    except FindingsError:
        return IndexState(False, "not readable")
    try:
        try:
            names = {n for (n,) in db.execute("SELECT name FROM sqlite_master")}
        except sqlite3.DatabaseError:
            return IndexState(False, "not an SQLite database")
        if "index_checkpoint" not in names:
            return IndexState(False, "not an mcpeval-nb index")
        try:
            row = db.execute("SELECT version, schema_digest FROM index_checkpoint").fetchone()
        except sqlite3.DatabaseError:
            return IndexState(False, "not an mcpeval-nb index")
        if row is None:
            return IndexState(False, "has no checkpoint")
        version, digest = row
        if not isinstance(version, int) or version > VERSION:
            return IndexState(False, f"written by a newer version (checkpoint version {version})", newer=True)
        if digest != SCHEMA_DIGEST or version != VERSION:
            return IndexState(False, "has another layout (an older version or the Rust tool)")
        if thorough and db.execute("PRAGMA quick_check").fetchone() != ("ok",):
            return IndexState(False, "is corrupt")
        return IndexState(True)
    except sqlite3.DatabaseError:
        return IndexState(False, "is corrupt")
    finally:
        db.close()


def open_for_reading(root: Path) -> sqlite3.Connection:
    """Open ``<root>/index.db`` read-only for ``findings``, ``generate`` and the API readers.

    Raises:
        FindingsError: missing, foreign, newer, corrupt (each with what to do).
    """
    path = root / INDEX_FILE
    state = inspect_index(path)
    if not state.ok:
        if state.reason == "missing":
            raise FindingsError(
                f"index database {path} does not exist; run `mcpeval-nb index` and `mcpeval-nb promote` first"
            )
        raise FindingsError(
            f"index database {path} is not usable ({state.reason}); run `mcpeval-nb index` to rebuild it"
        )
    return connect(path, read_only=True)


@dataclass
class Transaction:
    """An open transaction; set ``discard`` to roll it back instead of committing it."""

    discard: bool = False


@contextlib.contextmanager
def transaction(db: sqlite3.Connection, *, begin: str = "BEGIN IMMEDIATE") -> Iterator[Transaction]:
    """``begin``, then COMMIT on success (ROLLBACK when ``discard`` was set or on any exception)."""
    db.execute(begin)
    txn = Transaction()
    try:
        yield txn
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    db.execute("ROLLBACK" if txn.discard else "COMMIT")
