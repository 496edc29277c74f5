"""Catalog records built in a helper process, so that shim-http's relays never wait for them.

shim-http records in a thread of its own process: building the catalog record of a 500-tool listing
(digests, skeletons, signal rules over every text) takes the interpreter lock for a long while, and the
workers relaying other exchanges would wait for it.  ``CatalogWorker`` hands each completed listing to a
helper process instead (``python -m mcpeval_nb.capture.catalog_helper``, started on the first listing,
niced): one JSON line per listing on its stdin, in order; the helper builds the records exactly as the
stdio shim's recorder does (``CatalogWatcher.build``) and appends them with the journal writer.

A sender thread writes the lines, so a busy helper never blocks the recorder; at most ``BACKLOG``
listings wait for it, and a listing past that is counted as lost and reported at the end, never dropped
silently.  ``close`` waits for the helper for as long as it keeps writing records.  The raw entries cross
only this pipe, in memory (the helper is part of the capture, inside the privacy boundary); only
records reach the disk.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

__all__ = ["BACKLOG", "CatalogWorker"]

#: Listings waiting for the helper before a new one is counted as lost.
BACKLOG = 64
_STALL_S = 30.0


class CatalogWorker:
    """The parent's side: ship listings to the helper process, count what could not be shipped.

    Args:
        root: the capture root (the helper writes its catalogs journals).
        server / session / capture_id: what every record of this capture carries.
    """

    def __init__(self, *, root: Path, server: str, session: str, capture_id: str) -> None:
        self._argv = [sys.executable, "-m", "mcpeval_nb.capture.catalog_helper", str(root), server, session,
                      capture_id]
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=BACKLOG)
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self.lost = 0

    def ship(self, *, seq: int, complete: bool, ts: str, entries: list[Any]) -> None:
        """Hand one completed listing to the helper (started on first use); never blocks."""
        if self._thread is None:
            self._start()
        line = json.dumps({"seq": seq, "complete": complete, "ts": ts, "entries": entries},
                          ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass") + b"\n"
        try:
            self._queue.put_nowait(line)
        except queue.Full:
            self.lost += 1

    def _start(self) -> None:
        try:
            self._proc = subprocess.Popen(self._argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                          close_fds=True)
        except OSError:
            self._proc = None
        self._thread = threading.Thread(target=self._send, name="mcpeval-catalog-sender", daemon=True)
        self._thread.start()

    def _send(self) -> None:
        proc = self._proc
        while (line := self._queue.get()) is not None:
            if proc is None or proc.stdin is None:
                self.lost += 1
                continue
            try:
                proc.stdin.write(line)
                proc.stdin.flush()
            except OSError:
                self.lost += 1
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()

    def close(self) -> int:
        """Ship what is queued, end the helper's input and wait for it; returns the listings lost."""
        if self._thread is None:
            return self.lost
        self._queue.put(None)
        self._thread.join()
        if self._proc is not None:
            try:
                self._proc.wait(timeout=_STALL_S)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            if self._proc.returncode:
                self.lost += 1  # the helper reported what it could not write on stderr
        return self.lost
