"""The recorder: one thread that correlates observed frames and appends records in arrival order.

Forwarding threads hand every frame to ``Recorder.submit`` *before* forwarding it, so the queue order
is the arrival order and a request is always seen before its response.  Parsing, shaping and the
journal write happen here, off the forwarding path.  The queue is bounded by bytes: a forwarder waits
only when the recorder is more than ``max_pending_bytes`` behind.  A record the journal refuses is
reported on stderr (its sequence number and the error, never content) and capture continues.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import MCPEvalError
from ..journal import append_record
from ..limits import LOCK_TIMEOUT_S
from ..privacy.records import CallRecord
from .correlate import Correlator, classify_frame

__all__ = ["Frame", "RecordSink", "Recorder"]

_MAX_PENDING_BYTES = 64 * 1024 * 1024
_MAX_WARNINGS = 5
_FORWARD_WAIT_S = 0.05


def now_ms() -> int:
    """Milliseconds since the Unix epoch (the correlator's clock)."""
    return time.time_ns() // 1_000_000


@dataclass
class Frame:
    """One observed frame.

    Attributes:
        direction: ``outbound`` (client to server) or ``inbound``.
        data: the frame bytes, or None for a refused (oversized) frame: recorded content-free.
        scope: the correlation scope (``""`` on stdio, one uuid per HTTP request).
        read_ms: wall-clock ms when the frame was read.
        start_ns: ``perf_counter_ns`` when the frame was complete.
        done_ns: ``perf_counter_ns`` when forwarding finished (0 while still forwarding).
    """

    direction: str
    data: bytes | None
    scope: str = ""
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


class RecordSink:
    """The recording half: correlate frames and append the records they complete, in call order.

    Args:
        root: the capture root.
        correlator: the process's correlator (used only by whoever calls ``record``).
        warn: where content-free warnings go (default: one line on stderr).
    """

    def __init__(self, *, root: Path, correlator: Correlator,
                 warn: Callable[[str], None] | None = None) -> None:
        self.root = root
        self.correlator = correlator
        self.written = 0
        self.failed = 0
        self.warn = warn or _stderr_warning

    def record(self, direction: str, data: bytes | None, *, scope: str, read_ms: int, hot_ns: int) -> None:
        """Correlate one frame and append the record it completes, if any.

        Args:
            direction: ``outbound`` or ``inbound``.
            data: the frame bytes, or None for a refused frame (recorded content-free).
            scope: the correlation scope.
            read_ms: wall-clock ms when the frame was read.
            hot_ns: nanoseconds the forwarder spent on it (counted in ``shim_self_us``).
        """
        try:
            record = self._correlate(direction, data, scope, read_ms, hot_ns)
        except Exception as exc:  # a correlator bug must not stop capture
            self._fail(f"a {direction} frame could not be correlated ({type(exc).__name__})")
            return
        if record is not None:
            self._append(record)

    def finish(self) -> None:
        """Report how many records were lost when more than the first few warnings were suppressed."""
        if self.failed > _MAX_WARNINGS:
            self.warn(f"{self.failed} records in total were not journaled")

    def _correlate(self, direction: str, data: bytes | None, scope: str, read_ms: int,
                   hot_ns: int) -> CallRecord | None:
        t0 = time.perf_counter_ns()
        msg = None if data is None else classify_frame(data)
        t1 = time.perf_counter_ns()
        overhead = (hot_ns + t1 - t0) // 1000
        corr = self.correlator
        if msg is None:
            return corr.unparsed(direction, overhead_us=overhead)
        if direction == "outbound":
            return corr.on_outbound(b"", scope=scope, overhead_us=overhead, now_ms=read_ms, msg=msg)
        record = corr.on_inbound(b"", scope=scope, overhead_us=overhead, now_ms=read_ms, msg=msg)
        if record is not None and record.latency_ms is not None:  # a matched response: add build time
            build_us = (time.perf_counter_ns() - t1) // 1000
            record = dataclasses.replace(record, shim_self_us=record.shim_self_us + build_us)
        return record

    def _append(self, record: CallRecord) -> None:
        try:
            append_record(self.root, record)
            self.written += 1
        except MCPEvalError as exc:
            self._fail(f"record seq {record.seq} was not journaled: {exc}")

    def _fail(self, message: str) -> None:
        self.failed += 1
        if self.failed <= _MAX_WARNINGS:
            self.warn(message)


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

    def close(self, *, timeout: float = LOCK_TIMEOUT_S + 5.0) -> bool:
        """Record everything queued, then stop; True when the thread finished within ``timeout``."""
        with self._cond:
            self._queue.append(None)
            self._cond.notify_all()
        self._thread.join(timeout)
        self.sink.finish()
        return not self._thread.is_alive()

    def _next(self) -> Frame | None:
        """The oldest frame, once forwarded (bounded wait: a forward blocked on a peer that does not read
        must never stall recording), or None after ``close``."""
        with self._cond:
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
                             hot_ns=frame.done_ns - frame.start_ns if frame.done_ns else 0)


def _stderr_warning(message: str) -> None:
    try:
        sys.stderr.write(f"mcpeval-nb capture: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
