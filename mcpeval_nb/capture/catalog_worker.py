"""Catalog records built in a helper process, so that shim-http's relays never wait for them.

shim-http records in a thread of its own process: building the catalog record of a 500-tool listing
(digests, skeletons, signal rules over every text) takes the interpreter lock for a long while, and the
workers relaying other exchanges would wait for it.  ``CatalogWorker`` hands each completed listing to a
helper process instead (``python -m mcpeval_nb.capture.catalog_helper``, started on the first listing,
one JSON line per listing on its stdin, in order; the helper builds the records exactly as the stdio
shim's recorder does (``CatalogWatcher.build``), appends them with the journal writer and acknowledges
each listing with one byte on its stdout (``+`` journaled, ``-`` lost, ``s`` once when it is ready).

A sender thread writes the lines, so a busy helper never blocks the recorder; at most ``BACKLOG``
listings wait for it, and a listing past that is counted as lost and reported at the end, never dropped
silently.  ``close`` waits for the helper for as long as it makes progress (an acknowledgement within
``STALL_S``), however slow a loaded machine makes it; a helper that stops acknowledging is ended and
every listing it had not acknowledged is counted as lost.  The raw entries cross
only this pipe, in memory (the helper is part of the capture, inside the privacy boundary); only
records reach the disk.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["BACKLOG", "STALL_S", "CatalogWorker"]

#: Listings waiting for the helper before a new one is counted as lost.
BACKLOG = 64
#: Seconds without any acknowledgement from the helper before ``close`` gives up on it.
STALL_S = 120.0


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
        self._acks: threading.Thread | None = None
        self._sent = 0
        self._acked = 0
        self._failed = 0
        self._progress = time.monotonic()
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
            self._proc = subprocess.Popen(self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          close_fds=True)
        except OSError:
            self._proc = None
        else:
            self._acks = threading.Thread(target=self._read_acks, name="mcpeval-catalog-acks", daemon=True)
            self._acks.start()
        self._thread = threading.Thread(target=self._send, name="mcpeval-catalog-sender", daemon=True)
        self._thread.start()

    def _read_acks(self) -> None:
        """Count the helper's acknowledgements (read all along, so its stdout never fills)."""
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                return
            if not chunk:
                return
            self._progress = time.monotonic()
            self._failed += chunk.count(b"-")
            self._acked += chunk.count(b"+") + chunk.count(b"-")

    def _send(self) -> None:
        proc = self._proc
        while (line := self._queue.get()) is not None:
            if proc is None or proc.stdin is None:
                self.lost += 1
                continue
            try:
                proc.stdin.write(line)
                proc.stdin.flush()
                self._sent += 1
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
            self._wait_helper(self._proc)
        return self.lost

    def _wait_helper(self, proc: subprocess.Popen[bytes]) -> None:
        """Wait while the helper makes progress; count what it lost or never acknowledged."""
        self._progress = max(self._progress, time.monotonic())
        while proc.poll() is None:
            if time.monotonic() - self._progress > STALL_S:
                proc.kill()
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=1.0)
        proc.wait()
        if self._acks is not None:
            self._acks.join()
        if proc.stdout is not None:
            proc.stdout.close()
        # Lost: what the helper reported lost ("-", named on its stderr) and what it never acknowledged.
        self.lost += self._failed + (self._sent - self._acked)
