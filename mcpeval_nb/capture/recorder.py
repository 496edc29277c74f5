"""The recorder: one thread that correlates observed frames and appends records in arrival order.

Forwarding threads hand every frame to ``Recorder.submit`` *before* forwarding it, so the queue order
is the arrival order and a request is always seen before its response.  Parsing, shaping and the
journal write (``RecordSink``, in batches) happen here, off the forwarding path.  The queue is bounded
by bytes: a forwarder waits only when the recorder is more than ``max_pending_bytes`` behind.

``close`` drains everything queued for as long as the recorder keeps making progress; only a recorder
that made no progress for ``STALL_S`` is abandoned, and then the frames it never recorded are counted
and reported (by direction), as are records the journal refused (by kind).  Nothing is lost silently.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..clock import now_ms
from ..limits import LOCK_TIMEOUT_S
from .correlate import Correlator
from .oversized import Glimpse
from .sink import RecordSink, counted, loss_summary
from .wire import HttpFacts

__all__ = ["STALL_S", "Frame", "RecordSink", "Recorder", "frames_summary", "wait_progress"]

_MAX_PENDING_BYTES = 64 * 1024 * 1024
_FORWARD_WAIT_S = 0.05
#: A recorder that records nothing for this long while frames wait is abandoned at close.
STALL_S = LOCK_TIMEOUT_S + 5.0
_SIDES = {"outbound": "from the client", "inbound": "from the server", "end": "exchange ends"}


def frames_summary(frames: Counter[str]) -> str:
    """``12 frames were not recorded (10 from the server, 2 from the client)``."""
    parts = ", ".join(f"{n} {_SIDES.get(d, d)}" for d, n in sorted(frames.items(), key=lambda kv: -kv[1]))
    return f"{counted(sum(frames.values()), 'frame')} not recorded ({parts})"


@dataclass
class Frame:
    """One observed frame.

    Attributes:
        direction: ``outbound`` (client to server), ``inbound``, or ``end`` (an HTTP exchange ended).
        data: the frame bytes, or None for a refused or oversized frame: recorded content-free.
        scope: the correlation scope (``""`` on stdio, one uuid per HTTP request).
        read_ms: wall-clock ms when the frame was read.
        start_ns: ``perf_counter_ns`` when the frame was complete.
        done_ns: ``perf_counter_ns`` when forwarding finished (0 while still forwarding).
        glimpse: the ends of a frame forwarded past the bound (``data`` is None).
        http: shim-http's facts of a request's headers (memory only; stdio frames have none).
    """

    direction: str
    data: bytes | None
    scope: str = ""
    glimpse: Glimpse | None = None
    http: HttpFacts | None = None
    read_ms: int = dataclasses.field(default_factory=now_ms)
    start_ns: int = dataclasses.field(default_factory=time.perf_counter_ns)
    done_ns: int = 0
    _cond: threading.Condition | None = dataclasses.field(default=None, repr=False)

    def forwarded(self) -> None:
        """Mark the end of forwarding (the hot-path time counts toward ``shim_self_us``).

        The recorder is woken here rather than at ``submit``: one wake-up per frame, once it is out.
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


class Recorder:
    """A byte-bounded frame queue drained by one background thread that records each frame.

    Args:
        root: the capture root.
        correlator: the process's correlator (used only by the recorder thread).
        max_pending_bytes: frame bytes queued before ``submit`` waits.
        warn: where content-free warnings go (default: one line on stderr).
    """

    def __init__(self, *, root: Path, correlator: Correlator, max_pending_bytes: int = _MAX_PENDING_BYTES,
                 warn: Callable[[str], None] | None = None) -> None:
        self.sink = RecordSink(root=root, correlator=correlator, warn=warn)
        self._max = max_pending_bytes
        self._queue: deque[Frame | None] = deque()
        self._pending = 0
        self._cond = threading.Condition()
        self.done = 0  # frames recorded: the progress close() waits on
        self._thread = threading.Thread(target=self._run, name="mcpeval-recorder", daemon=True)
        self._thread.start()

    @property
    def written(self) -> int:
        """Records appended so far."""
        return self.sink.written

    @property
    def failed(self) -> int:
        """Frames or records that could not be journaled."""
        return self.sink.failed

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
            if frame.data is None or frame.done_ns:  # nothing to forward: wake the recorder now
                self._cond.notify_all()

    def close(self, *, stall_s: float = STALL_S) -> bool:
        """Record everything queued, then stop.

        Waits for as long as the recorder makes progress; a recorder that recorded nothing for
        ``stall_s`` is abandoned and the frames it did not record are reported by direction.

        Returns:
            True when everything queued was recorded (or refused by the journal and reported).
        """
        with self._cond:
            self._queue.append(None)
            self._cond.notify_all()
        if wait_progress(self._thread.is_alive, lambda: self.done, stall_s):
            return True
        with self._cond:
            left = Counter(f.direction for f in self._queue if f is not None)
        unwritten = self.sink.unwritten()
        self.sink.warn(f"the recorder made no progress for {stall_s:g} s and was abandoned")
        if left:
            self.sink.warn(frames_summary(left))
        if unwritten:
            self.sink.warn(loss_summary(unwritten))
        return False

    def _next(self) -> Frame | None:
        """The oldest frame, once forwarded (bounded wait: a forward blocked on a peer that does not read
        must never stall recording), or None after ``close``.  Flushes the batch before waiting."""
        with self._cond:
            if not self._queue:
                self._cond.release()
                try:
                    self.sink.flush()
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

    def _run(self) -> None:
        while (frame := self._next()) is not None:  # parsing holds the interpreter lock: frames are out
            self.sink.record(frame.direction, frame.data, scope=frame.scope, read_ms=frame.read_ms,
                             hot_ns=frame.done_ns - frame.start_ns if frame.done_ns else 0,
                             glimpse=frame.glimpse, http=frame.http)
            self.done += 1
        self.sink.finish()


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
