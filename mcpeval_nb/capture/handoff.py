"""Frames handed from the forwarding threads to whatever records them, in arrival order.

Forwarding threads hand every frame to ``FrameQueue.submit`` *before* forwarding it, so the queue order
is the arrival order and a request is always seen before its response.  One background thread drains
the queue (``Recorder`` records in this process, ``ForkedRecorder`` ships to a child process).  The
queue is bounded by bytes: a forwarder waits only when the drain is more than ``max_pending_bytes``
behind.

This module is what a shim needs to start its server and forward: it imports nothing that parses or
records (no correlator, no journal), so the stdio shim's process can start the server first.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable

from ..clock import now_ms
from ..limits import LOCK_TIMEOUT_S

TYPE_CHECKING = False  # typing's, without importing typing: the shim starts its server first
if TYPE_CHECKING:
    from .oversized import Glimpse
    from .wire import HttpFacts

__all__ = ["MAX_PENDING_BYTES", "STALL_S", "Frame", "FrameQueue", "counted", "frames_summary",
           "stderr_warning", "wait_progress"]

#: Frame bytes queued before a forwarder waits for the drain.
MAX_PENDING_BYTES = 64 * 1024 * 1024
_FORWARD_WAIT_S = 0.05
#: A recorder that records nothing for this long while frames wait is abandoned at close.
STALL_S = LOCK_TIMEOUT_S + 5.0
_SIDES = {"outbound": "from the client", "inbound": "from the server", "end": "exchange ends"}


def counted(n: int, noun: str) -> str:
    """``1 record was`` / ``7 records were``."""
    return f"{n} {noun} was" if n == 1 else f"{n} {noun}s were"


def frames_summary(frames: Counter[str]) -> str:
    """``12 frames were not recorded (10 from the server, 2 from the client)``."""
    parts = ", ".join(f"{n} {_SIDES.get(d, d)}" for d, n in sorted(frames.items(), key=lambda kv: -kv[1]))
    return f"{counted(sum(frames.values()), 'frame')} not recorded ({parts})"


def stderr_warning(message: str) -> None:
    """One content-free line on stderr: ``mcpeval-nb capture: <message>``."""
    try:
        sys.stderr.write(f"mcpeval-nb capture: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class Frame:
    """One observed frame (a slotted class: one is made per frame on the forwarding path, and this module
    loads before the stdio shim's server starts, where ``dataclasses`` would cost more than the rest).

    Attributes:
        direction: ``outbound`` (client to server), ``inbound``, or ``end`` (an HTTP exchange ended).
        data: the frame bytes, or None for a refused or oversized frame: recorded content-free.
        scope: the correlation scope (``""`` on stdio, one uuid per HTTP request).
        glimpse: the ends of a frame forwarded past the bound (``data`` is None).
        http: shim-http's facts of a request's headers (memory only; stdio frames have none).
        read_ms: wall-clock ms when the frame was read (default: now).
        start_ns: ``perf_counter_ns`` when the frame was complete (default: now).
        done_ns: ``perf_counter_ns`` when forwarding finished (0 while still forwarding).
    """

    __slots__ = ("_cond", "data", "direction", "done_ns", "glimpse", "http", "read_ms", "scope", "start_ns")

    def __init__(self, direction: str, data: bytes | None, scope: str = "", glimpse: Glimpse | None = None,
                 http: HttpFacts | None = None, read_ms: int | None = None, start_ns: int | None = None,
                 done_ns: int = 0) -> None:
        self.direction = direction
        self.data = data
        self.scope = scope
        self.glimpse = glimpse
        self.http = http
        self.read_ms = now_ms() if read_ms is None else read_ms
        self.start_ns = time.perf_counter_ns() if start_ns is None else start_ns
        self.done_ns = done_ns
        self._cond: threading.Condition | None = None

    def __repr__(self) -> str:
        return (f"Frame(direction={self.direction!r}, size={self.size}, scope={self.scope!r}, "
                f"read_ms={self.read_ms}, done_ns={self.done_ns})")

    def forwarded(self) -> None:
        """Mark the end of forwarding (the hot-path time counts toward ``shim_self_us``).

        The drain is woken here rather than at ``submit``: one wake-up per frame, once it is out.
        """
        self.done_ns = time.perf_counter_ns()
        cond = self._cond
        if cond is not None:
            with cond:
                cond.notify_all()

    @property
    def size(self) -> int:
        """Bytes held by this frame."""
        return 0 if self.data is None else len(self.data)


class FrameQueue:
    """A byte-bounded frame queue drained by one background thread (a subclass's ``_run``).

    Args:
        max_pending_bytes: frame bytes queued before ``submit`` waits.
        warn: where content-free warnings go (default: one line on stderr).
    """

    def __init__(self, *, max_pending_bytes: int = MAX_PENDING_BYTES,
                 warn: Callable[[str], None] | None = None) -> None:
        self.warn = warn or stderr_warning
        self._max = max_pending_bytes
        self._queue: deque[Frame | None] = deque()
        self._pending = 0
        self._cond = threading.Condition()
        self.done = 0  # frames drained: the progress close() waits on
        self.submitted = 0  # frames ever queued
        self._thread = threading.Thread(target=self._run, name="mcpeval-recorder", daemon=True)
        self._thread.start()

    def submit(self, frame: Frame) -> None:
        """Queue a frame (call before forwarding it, then ``frame.forwarded()`` after).

        Waits only while the queue holds more than its byte bound.
        """
        with self._cond:
            while self._pending > self._max and self._queue:
                self._cond.wait()
            frame._cond = self._cond
            self._queue.append(frame)
            self._pending += frame.size
            self.submitted += 1
            if frame.data is None or frame.done_ns:  # nothing to forward: wake the drain now
                self._cond.notify_all()

    def close(self, *, stall_s: float = STALL_S) -> bool:
        """Drain everything queued, then stop (for as long as the drain makes progress).

        Returns:
            True when every frame was recorded.
        """
        raise NotImplementedError

    def _end(self) -> None:
        """Queue the end marker: the drain stops once it reaches it."""
        with self._cond:
            self._queue.append(None)
            self._cond.notify_all()

    def _idle(self) -> None:
        """Called by the drain thread (without the queue lock) before it waits for more frames."""

    def _run(self) -> None:
        raise NotImplementedError

    def _next(self) -> Frame | None:
        """The oldest frame, once forwarded (bounded wait: a forward blocked on a peer that does not read
        must never stall recording), or None after ``close``.  Calls ``_idle`` before waiting."""
        with self._cond:
            if not self._queue:
                self._cond.release()
                try:
                    self._idle()
                finally:
                    self._cond.acquire()
            while not self._queue:
                self._cond.wait()
            head = self._queue[0]
            if head is not None and head.data is not None and not head.done_ns:
                self._cond.wait_for(lambda: bool(head.done_ns), _FORWARD_WAIT_S)
            frame = self._queue.popleft()
            if frame is not None:
                self._pending -= frame.size
                self._cond.notify_all()
            return frame


def wait_progress(alive: Callable[[], bool], progress: Callable[[], int], stall_s: float) -> bool:
    """Wait while ``alive()``, for as long as ``progress()`` keeps changing within ``stall_s``.

    Returns:
        True when ``alive()`` became false; False after a stall.
    """
    last, since = progress(), time.monotonic()
    while alive():
        time.sleep(0.01)
        now, value = time.monotonic(), progress()
        if value != last:
            last, since = value, now
        elif now - since >= stall_s:
            return not alive()
    return True
