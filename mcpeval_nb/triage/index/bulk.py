"""A full build's bulk writer: Arrow data ingested by SQLite's ADBC driver on a thread of its own.

``adbc_ingest`` binds and steps the rows of an Arrow batch in C without holding the GIL, so while it
writes SPEC's ``calls`` rows the reading thread parses and encodes the next journal batch at full speed; the
sqlite3 module's ``executemany`` binds every parameter of every row under the GIL instead (measured in
docs/performance.md).  The bulk writer owns its own connection to the build's temporary file: the
caller's sqlite3 connection creates the tables and commits before it opens, and writes again only after
``close()``, so exactly one connection writes at a time.

Jobs run in order: ``append`` writes one batch of a table as the reading thread hands it over (at most
``depth`` batches wait: the reader blocks instead of piling up memory); ``ingest`` writes one table;
``execute`` runs one statement (``CREATE INDEX`` while the caller computes windows).  ``close()``
commits, waits for the thread and raises the first error as a ``FindingsError``.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from ...errors import FindingsError

__all__ = ["Bulk"]

_PRAGMAS = (
    "PRAGMA journal_mode=OFF",
    "PRAGMA synchronous=OFF",
    "PRAGMA cache_size=-16384",
    "PRAGMA temp_store=MEMORY",
    "PRAGMA threads=2",
)
_POLL_S = 0.05
Job = Callable[["_Cursor"], None]


class Bulk:
    """The ADBC ingest thread of one full build.

    Args:
        path: the build's temporary database (its tables already created and committed).
        depth: appended batches waiting at most (bounds the memory waiting to be written).
        name: the file errors name (default ``path``; a build names the index it replaces).
    """

    def __init__(self, path: Path, *, depth: int = 3, name: Path | None = None) -> None:
        self.path, self.name = path, name or path
        self._jobs: queue.Queue[Job | None] = queue.Queue()
        self._slots = threading.BoundedSemaphore(depth)  # one per appended batch waiting to be written
        self._error: BaseException | None = None
        self._failed = threading.Event()
        self._aborted = threading.Event()
        self._commit = True
        self._thread = threading.Thread(target=self._run, name="mcpeval-nb-index-bulk", daemon=True)
        self._thread.start()

    # -- the thread -----------------------------------------------------------------------------------
    def _run(self) -> None:
        handles: list[Any] = []  # closed in reverse order, whatever happened
        try:  # the driver's low-level API: its DB-API module imports dataframe libraries (~0.1-0.4 s)
            import adbc_driver_manager
            import adbc_driver_sqlite

            handles.append(adbc_driver_sqlite.connect(str(self.path)))
            conn = adbc_driver_manager.AdbcConnection(handles[0])
            handles.append(conn)
            for pragma in _PRAGMAS:
                _Cursor(conn).execute(pragma)
            conn.set_options(**{"adbc.connection.autocommit": "false"})
            while (job := self._jobs.get()) is not None and not self._aborted.is_set():
                job(_Cursor(conn))
            if self._commit:
                conn.commit()
        except BaseException as exc:  # handed to the caller by close(); the transaction is not committed
            self._fail(exc)
        finally:
            for handle in reversed(handles):
                with contextlib.suppress(BaseException):
                    handle.close()

    def _fail(self, exc: BaseException) -> None:
        if self._error is None and not self._aborted.is_set():
            self._error = exc
        self._failed.set()

    # -- the caller's side ----------------------------------------------------------------------------
    def _check(self) -> None:
        """Raise the thread's error (or that it stopped) instead of queueing work nobody will do."""
        if self._failed.is_set() or not self._thread.is_alive():
            self.close()  # raises the thread's error
            raise FindingsError(f"the index writer for {self.name} stopped")

    def append(self, table: str, batch: pa.RecordBatch) -> None:
        """Queue appending one batch to ``table``: blocks while ``depth`` appended batches wait to be
        written (the memory a slow writer holds), without hanging on a thread that stopped.

        Raises:
            FindingsError: the writer failed or stopped.
        """
        while not self._slots.acquire(timeout=_POLL_S):
            self._check()
        self._check()

        def job(cursor: _Cursor) -> None:
            try:
                cursor.ingest(table, pa.RecordBatchReader.from_batches(batch.schema, [batch]))
            finally:
                self._slots.release()

        self._jobs.put(job)

    def ingest(self, table: str, data: pa.Table) -> None:
        """Queue appending ``data`` (columns named as ``table``'s) to ``table``."""
        if data.num_rows:
            self._jobs.put(lambda cursor: cursor.ingest(table, data.to_reader()))

    def execute(self, sql: str, params: pa.RecordBatch | None = None) -> None:
        """Queue one statement, or with ``params`` one statement per parameter row."""
        if params is None or params.num_rows:
            self._jobs.put(lambda cursor: cursor.execute(sql, params))

    def close(self) -> None:
        """Commit, wait for the thread and close its connection.

        Raises:
            FindingsError: a job failed (the file is left for the caller to remove).
        """
        if self._thread.is_alive():
            self._jobs.put(None)
            self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise FindingsError(f"cannot write the index {self.name}: {_reason(error)}") from None

    def abort(self) -> None:
        """Abandon the build: stop the stream and any queued job, commit nothing, close the connection."""
        self._aborted.set()
        self._commit = False
        self._failed.set()
        while self._thread.is_alive():  # the thread stops before its next job
            self._jobs.put(None)
            self._thread.join(timeout=_POLL_S)
        self._error = None


class _Cursor:
    """One statement on the bulk connection (closed after use)."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def execute(self, sql: str, params: pa.RecordBatch | None = None) -> None:
        import adbc_driver_manager

        with contextlib.closing(adbc_driver_manager.AdbcStatement(self.conn)) as statement:
            statement.set_sql_query(sql)
            if params is not None:
                statement.bind(params)
            statement.execute_update()

    def ingest(self, table: str, reader: pa.RecordBatchReader) -> None:
        import adbc_driver_manager

        with contextlib.closing(adbc_driver_manager.AdbcStatement(self.conn)) as statement:
            statement.set_options(**{"adbc.ingest.target_table": table,
                                     "adbc.ingest.mode": "adbc.ingest.mode.append"})
            statement.bind_stream(reader)
            statement.execute_update()


def _reason(error: BaseException) -> str:
    """The driver's first message line (SQLite's own words; our statements bind no journal text)."""
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
