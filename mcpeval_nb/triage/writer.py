"""A writer thread for a full build: ``executemany`` of one batch while the next is read and encoded.

The sqlite3 module binds parameters holding the GIL but steps each row without it, and the journal
loader's scanner and numpy release it too, so on two cores the inserts overlap the reading.  Only the
writer touches the connection while it runs; ``close()`` waits for it and re-raises its error.
"""

from __future__ import annotations

import queue
import sqlite3
import threading
from collections.abc import Iterable
from typing import Any

__all__ = ["Writer"]


class Writer:
    """Runs ``db.executemany(sql, rows)`` jobs in order on a thread of its own.

    Args:
        db: a connection opened with ``check_same_thread=False``.
        depth: jobs queued at most (bounds the memory of rows waiting to be written).
    """

    def __init__(self, db: sqlite3.Connection, *, depth: int = 3) -> None:
        self.db = db
        self._jobs: queue.Queue[tuple[str, list[Any] | None] | None] = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="mcpeval-nb-index-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            if self._error is None:
                try:
                    sql, rows = job
                    if rows is None:
                        self.db.execute(sql)
                    else:
                        self.db.executemany(sql, rows)
                except BaseException as exc:  # handed to the reading thread by close()
                    self._error = exc

    def put(self, sql: str, rows: Iterable[Any]) -> None:
        """Queue one ``executemany`` (the rows are materialised here, on the caller's thread)."""
        if self._error is not None:
            self.close()
        self._jobs.put((sql, list(rows)))

    def run(self, sql: str) -> None:
        """Queue one statement (``CREATE INDEX`` while the caller computes the windows)."""
        if self._error is not None:
            self.close()
        self._jobs.put((sql, None))

    def close(self) -> None:
        """Wait for every queued job; re-raise the first error one of them raised."""
        if self._thread.is_alive():
            self._jobs.put(None)
            self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error
