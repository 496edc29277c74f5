"""The recorder: one thread that correlates observed frames and appends records in arrival order.

The forwarding threads hand every frame over through ``handoff.FrameQueue`` (arrival order, bounded by
bytes).  Parsing, shaping and the journal write (``RecordSink``, in batches) happen on the recorder
thread, off the forwarding path.

``close`` drains everything queued for as long as the recorder keeps making progress; only a recorder
that made no progress for ``STALL_S`` is abandoned, and then the frames it never recorded are counted
and reported (by direction), as are records the journal refused (by kind).  Nothing is lost silently.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from .correlate import Correlator
from .handoff import MAX_PENDING_BYTES, STALL_S, Frame, FrameQueue, frames_summary, wait_progress
from .sink import RecordSink, loss_summary

__all__ = ["STALL_S", "Frame", "RecordSink", "Recorder", "frames_summary", "wait_progress"]


class Recorder(FrameQueue):
    """A byte-bounded frame queue drained by one background thread that records each frame.

    Args:
        root: the capture root.
        correlator: the process's correlator (used only by the recorder thread).
        max_pending_bytes: frame bytes queued before ``submit`` waits.
        warn: where content-free warnings go (default: one line on stderr).
    """

    def __init__(self, *, root: Path, correlator: Correlator, max_pending_bytes: int = MAX_PENDING_BYTES,
                 warn: Callable[[str], None] | None = None) -> None:
        self.sink = RecordSink(root=root, correlator=correlator, warn=warn)
        super().__init__(max_pending_bytes=max_pending_bytes, warn=self.sink.warn)

    @property
    def written(self) -> int:
        """Records appended so far."""
        return self.sink.written

    @property
    def failed(self) -> int:
        """Frames or records that could not be journaled."""
        return self.sink.failed

    def close(self, *, stall_s: float = STALL_S) -> bool:
        """Record everything queued, then stop.

        Waits for as long as the recorder makes progress; a recorder that recorded nothing for
        ``stall_s`` is abandoned and the frames it did not record are reported by direction.

        Returns:
            True when everything queued was recorded (or refused by the journal and reported).
        """
        self._end()
        if wait_progress(self._thread.is_alive, lambda: self.done, stall_s):
            return True
        with self._cond:
            left = Counter(f.direction for f in self._queue if f is not None)
        unwritten = self.sink.unwritten()
        self.warn(f"the recorder made no progress for {stall_s:g} s and was abandoned")
        if left:
            self.warn(frames_summary(left))
        if unwritten:
            self.warn(loss_summary(unwritten))
        return False

    def _idle(self) -> None:
        self.sink.flush()  # the batch is written before the recorder waits for more frames

    def _run(self) -> None:
        while (frame := self._next()) is not None:  # parsing holds the interpreter lock: frames are out
            self.sink.record(frame.direction, frame.data, scope=frame.scope, read_ms=frame.read_ms,
                             hot_ns=frame.done_ns - frame.start_ns if frame.done_ns else 0,
                             glimpse=frame.glimpse, http=frame.http)
            self.done += 1
        self.sink.finish()
