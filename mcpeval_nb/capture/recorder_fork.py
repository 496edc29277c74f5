"""A recorder in a forked child process, so parsing and journaling never hold the shim's interpreter lock.

The stdio shim's forwarding threads share one interpreter lock with whatever records their frames; a
1 MiB frame's JSON parse holds that lock for milliseconds.  ``ForkedRecorder`` keeps the ``Recorder``
interface but ships each frame, once forwarded (bounded wait), through a pipe to a child forked before
any other thread or pipe exists; the child correlates and appends in arrival order and exits at end of
input.  The shim process itself only forwards and ships (``os.writev``, no parsing).

Start-up: the shim starts its server as soon as the child is forked.  The child makes the correlator
and warms up (imports everything recording needs, builds the URL suffix table, runs a throwaway
correlator through every path) while the server starts, so none of it delays the server and the first
records cost what later ones cost.  That is safe because the shim forks before it runs any other thread:
the child holds no lock another thread took.  A process that already runs threads (a notebook kernel)
makes and warms up the correlator before forking instead, as before; either way nothing is imported
after the fork that was not loaded by then in the process that runs it.  The child counts its warm-up
steps where ``close`` sees them, so a slow start is progress, not a stall.

The child appends in batches (everything one read of the pipe brought, at most ``BATCH_RECORDS`` per
write) and publishes two things in memory shared with the parent, frame by frame: a heartbeat (frames
it has taken in) and, per direction, the frames it has *settled* (every record they produced is
journaled, or counted by the sink as refused).  ``close`` waits for as long as either moves, however slow
a loaded machine makes the child, and only a child that took in nothing for the stall window is killed;
the frames it never settled are then exactly the frames lost, reported by direction.  (The one window
left is a child frozen for the whole stall window between a journal write returning and its counters
being updated: those frames would be reported lost though journaled.)

Frame wire format (parent to child): ``!BBqqII`` = direction (0 outbound, 1 inbound, 2 end of an HTTP
exchange), form (0 data, 1 refused, 2 the ends of an oversized frame), ``read_ms``, hot-path nanoseconds,
scope length, payload length; then the scope and the payload (for form 2: ``!I`` head length, head,
tail).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import signal
import struct
import sys
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from .frames import grow_pipe
from .handoff import STALL_S, Frame, FrameQueue, frames_summary, wait_progress

TYPE_CHECKING = False  # typing's, without importing typing: the shim starts its server first
if TYPE_CHECKING:
    from .correlate import Correlator
    from .sink import RecordSink

__all__ = ["ForkedRecorder"]

_HEADER = struct.Struct("!BBqqII")
_HEAD_LEN = struct.Struct("!I")
_DIRECTIONS = ("outbound", "inbound", "end")
_PROGRESS = struct.Struct("!QQQQ")  # frames settled by the child, per direction; then frames taken in
_WARM = struct.Struct("!Q")  # after them: the child's warm-up steps done
_READ_BYTES = 1 << 20


def _prewarm(correlator: Correlator, step: Callable[[], None] = lambda: None) -> None:
    """Import and build everything recording needs, on a throwaway correlator (its records go nowhere);
    ``step`` is called after each part."""
    from .correlate import Correlator
    from .oversized import Glimpse
    from .sink import RecordSink  # noqa: F401  (the child's sink: loaded now, with the journal writer)

    step()
    warm = Correlator(server=correlator.server, session="warm", salt=b"\0" * 32)
    listing = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    warm.on_outbound(listing)
    warm.on_inbound(b'{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{}}]}}')
    if warm.catalog is not None:  # the catalog record's whole build path
        warm.catalog.drain()
    step()
    warm.on_outbound(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":'
                     b'{"u":"https://www.example.com/","i":"0be9b59c-af70-47b0-9169-d9de92330600","n":1.5}}}')
    step()
    warm.on_inbound(b'{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"gone 42"}}')
    warm.on_inbound(b"not json")
    warm.oversized("inbound", Glimpse(head=b'{"result":{', tail=b'},"id":3}\n'))
    step()


def _encode(frame: Frame) -> list[bytes]:
    hot_ns = frame.done_ns - frame.start_ns if frame.done_ns else 0
    scope = frame.scope.encode()
    form, payload = 0, frame.data or b""
    if frame.glimpse is not None:
        form, head = 2, frame.glimpse.head
        payload = _HEAD_LEN.pack(len(head)) + head + frame.glimpse.tail
    elif frame.data is None:
        form = 1
    header = _HEADER.pack(_DIRECTIONS.index(frame.direction), form, frame.read_ms, hot_ns, len(scope),
                          len(payload))
    return [header, scope, payload]


class ForkedRecorder(FrameQueue):
    """A frame queue whose correlation and journal writes run in a forked child process (the
    ``Recorder`` interface: ``submit``, ``close``).

    Create it before starting any thread or opening any pipe the child must not hold.

    Args:
        root: the capture root.
        correlator: makes the correlator; called once: in the child, or here before the fork when this
            process already runs other threads (the module docstring says why).
    """

    def __init__(self, *, root: Path, correlator: Callable[[], Correlator]) -> None:
        make, warm = correlator, True
        if threading.active_count() > 1:  # another thread may hold an import lock the child would copy
            made = correlator()
            _prewarm(made)
            make, warm = (lambda: made), False
        read_fd, self._ship_fd = os.pipe()
        grow_pipe(self._ship_fd)
        # anonymous and shared: the child counts here
        self._progress = mmap.mmap(-1, _PROGRESS.size + _WARM.size)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        self._pid = os.fork()
        if self._pid == 0:  # the child: never returns
            os.close(self._ship_fd)
            _child(read_fd, root, make, self._progress, warm=warm)
        os.close(read_fd)
        self._broken = False
        self._reaped = False
        self._submitted: Counter[str] = Counter()
        super().__init__()

    def _run(self) -> None:  # the parent's shipper thread
        try:
            while (frame := self._next()) is not None:
                self._submitted[frame.direction] += 1
                if not self._broken:
                    self._ship(frame)
                self.done += 1
        finally:
            with contextlib.suppress(OSError):
                os.close(self._ship_fd)

    def _ship(self, frame: Frame) -> None:
        parts = _encode(frame)
        try:
            total, sent = sum(len(p) for p in parts), os.writev(self._ship_fd, parts)
            if sent < total:
                rest = memoryview(b"".join(parts))[sent:]
                while rest:
                    rest = rest[os.write(self._ship_fd, rest):]
        except OSError:
            self._broken = True
            self.warn("the recorder process ended; the rest of this capture is not journaled")

    @property
    def pid(self) -> int:
        """The recording child's process id."""
        return self._pid

    def _recorded(self) -> Counter[str]:
        settled = _PROGRESS.unpack_from(self._progress, 0)[:len(_DIRECTIONS)]
        return Counter(dict(zip(_DIRECTIONS, settled, strict=True)))

    def taken_in(self) -> int:
        """Frames the child has taken in so far (its heartbeat: it moves with every frame)."""
        return int(_PROGRESS.unpack_from(self._progress, 0)[-1])

    def progress(self) -> int:
        """What ``close`` watches: frames shipped, plus frames the child took in and settled (it moves
        with every frame the child handles), plus the child's warm-up steps."""
        warm = int(_WARM.unpack_from(self._progress, _PROGRESS.size)[0])
        return self.done + self.taken_in() + sum(self._recorded().values()) + warm

    def _child_alive(self) -> bool:
        if not self._reaped and os.waitpid(self._pid, os.WNOHANG)[0]:
            self._reaped = True
        return not self._reaped

    def _stop_child(self) -> None:
        if not self._reaped:
            with contextlib.suppress(OSError):
                os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
            self._reaped = True

    def close(self, *, stall_s: float = STALL_S) -> bool:
        """Ship everything queued, end the child's input, and reap it (at once when nothing was queued:
        a server that exits without a word does not wait for the child's warm-up).

        Waits for as long as the child takes in or settles frames; a child that did neither for
        ``stall_s`` is killed.

        Returns:
            True when every frame was recorded; otherwise the frames that were not are reported on
            stderr by direction, and False.
        """
        self._end()
        if not self.submitted:  # no frame to record: the child's warm-up is not waited for
            self._stop_child()
        elif not wait_progress(self._child_alive, self.progress, stall_s):
            self._stop_child()
            self.warn(f"the recorder process made no progress for {stall_s:g} s and was stopped")
        self._thread.join()  # the child is gone: the shipper drains what is left without shipping it
        lost = self._submitted - self._recorded()
        if lost:
            self.warn(frames_summary(lost))
        return not lost


def _isolate(keep: int) -> None:
    """In the child: no client or server descriptors (their peers must see end of input), no terminal
    signals (it ends at end of its input).  Its priority is the shim's own: at nice 10 a loaded machine
    starved it for minutes (a 500,000-notification burst took over half an hour to drain), and a
    recorder that falls behind already slows the forwarders through the bounded queue."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    for name in os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else []:
        fd = int(name)
        if fd > 2 and fd != keep:
            with contextlib.suppress(OSError):
                os.close(fd)


def _warn_fd2(message: str) -> None:
    """Warnings from the child go straight to descriptor 2 (a notebook's ``sys.stderr`` is a thread)."""
    with contextlib.suppress(OSError):
        os.write(2, f"mcpeval-nb capture: {message}\n".encode())


class _Tally:
    """The child's counters in the shared page: frames settled per direction, and frames taken in.

    A frame is settled once the sink holds none of its records unwritten: when its queue is empty after
    the frame (nothing produced, or a batch was just written) or after an explicit flush.
    """

    def __init__(self, page: mmap.mmap) -> None:
        self.page = page
        self.settled = [0] * len(_DIRECTIONS)
        self.waiting = [0] * len(_DIRECTIONS)
        self.taken = 0

    def took(self, sink: RecordSink, direction: int) -> None:
        self.taken += 1
        self.waiting[direction] += 1
        if sink.queued:
            _TAKEN.pack_into(self.page, _TAKEN_AT, self.taken)  # the heartbeat alone
        else:
            self.settle()

    def settle(self) -> None:
        self.settled = [s + w for s, w in zip(self.settled, self.waiting, strict=True)]
        self.waiting = [0] * len(_DIRECTIONS)
        _PROGRESS.pack_into(self.page, 0, *self.settled, self.taken)


_TAKEN = struct.Struct("!Q")
_TAKEN_AT = _PROGRESS.size - _TAKEN.size


def _record_all(sink: RecordSink, buf: bytearray, tally: _Tally) -> int:
    """Record every complete frame in ``buf``; returns the bytes consumed."""
    from .oversized import Glimpse  # the child's: loaded by the warm-up, not before the server starts

    pos = 0
    while len(buf) - pos >= _HEADER.size:
        direction, form, read_ms, hot_ns, scope_len, size = _HEADER.unpack_from(buf, pos)
        start = pos + _HEADER.size
        end = start + scope_len + size
        if len(buf) < end:
            break
        scope = bytes(buf[start:start + scope_len]).decode()
        payload = bytes(buf[start + scope_len:end])
        data, glimpse = (payload if form == 0 else None), None
        if form == 2:
            (head_len,) = _HEAD_LEN.unpack_from(payload, 0)
            head = payload[_HEAD_LEN.size:_HEAD_LEN.size + head_len]
            glimpse = Glimpse(head=head, tail=payload[_HEAD_LEN.size + head_len:])
        sink.record(_DIRECTIONS[direction], data, scope=scope, read_ms=read_ms, hot_ns=hot_ns,
                    glimpse=glimpse)
        tally.took(sink, direction)
        pos = end
    return pos


def _child(read_fd: int, root: Path, make: Callable[[], Correlator], progress: mmap.mmap, *,
           warm: bool) -> None:
    code = 0
    try:
        _isolate(read_fd)
        steps = [0]

        def step() -> None:  # the warm-up is progress for close()
            steps[0] += 1
            _WARM.pack_into(progress, _PROGRESS.size, steps[0])

        correlator = make()
        if warm:
            _prewarm(correlator, step)
        from .sink import RecordSink

        sink = RecordSink(root=root, correlator=correlator, warn=_warn_fd2)
        buf, tally = bytearray(), _Tally(progress)
        while chunk := os.read(read_fd, _READ_BYTES):
            buf += chunk
            del buf[:_record_all(sink, buf, tally)]
            sink.flush()  # everything this read brought is journaled before the next (blocking) read
            tally.settle()
        sink.finish()
        tally.settle()
    except BaseException:  # never unwind into the parent's code
        code = 1
    finally:
        os._exit(code)
