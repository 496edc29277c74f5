"""A recorder in a forked child process, so parsing and journaling never hold the shim's interpreter lock.

The stdio shim's forwarding threads share one interpreter lock with whatever records their frames; a
1 MiB frame's JSON parse holds that lock for milliseconds.  ``ForkedRecorder`` keeps the ``Recorder``
interface but ships each frame, once forwarded (bounded wait), through a pipe to a child forked before
any other thread or pipe exists; the child correlates and appends in arrival order and exits at end of
input.  The shim process itself only forwards and ships (``os.writev``, no parsing).

Frame wire format (parent to child): ``!BqqqI`` = direction (0 outbound, 1 inbound), ``read_ms``, hot-path
nanoseconds, data length (-1: a refused frame, recorded content-free), scope length; then the scope and
the data bytes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import struct
import sys
import time
from pathlib import Path
from typing import BinaryIO

from ..limits import LOCK_TIMEOUT_S
from .correlate import Correlator
from .frames import grow_pipe
from .recorder import Frame, Recorder, RecordSink

__all__ = ["ForkedRecorder"]

_HEADER = struct.Struct("!BqqqI")
_DIRECTIONS = ("outbound", "inbound")


def _prewarm(correlator: Correlator) -> None:
    """Import and build everything the child will need (lazy imports must not happen after a fork)."""
    warm = Correlator(server=correlator.server, session="warm", salt=b"\0" * 32)
    listing = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    warm.on_outbound(listing)
    warm.on_inbound(b'{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{}}]}}')
    warm.on_outbound(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":'
                     b'{"u":"https://www.example.com/","i":"0be9b59c-af70-47b0-9169-d9de92330600","n":1.5}}}')
    warm.on_inbound(b'{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"gone 42"}}')
    warm.on_inbound(b"not json")


class ForkedRecorder(Recorder):
    """``Recorder`` whose correlation and journal writes run in a forked child process.

    Create it before starting any thread or opening any pipe the child must not hold.

    Args:
        root: the capture root.
        correlator: the correlator (the child's copy is the one that is used).
    """

    def __init__(self, *, root: Path, correlator: Correlator) -> None:
        _prewarm(correlator)
        read_fd, self._ship_fd = os.pipe()
        grow_pipe(self._ship_fd)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        self._pid = os.fork()
        if self._pid == 0:  # the child: never returns
            os.close(self._ship_fd)
            _child(read_fd, root, correlator)
        os.close(read_fd)
        self._broken = False
        super().__init__(root=root, correlator=correlator)

    def _run(self) -> None:  # the parent's shipper thread
        try:
            while (frame := self._next()) is not None:
                if not self._broken:
                    self._ship(frame)
        finally:
            with contextlib.suppress(OSError):
                os.close(self._ship_fd)

    def _ship(self, frame: Frame) -> None:
        hot_ns = frame.done_ns - frame.start_ns if frame.done_ns else 0
        scope = frame.scope.encode()
        size = -1 if frame.data is None else len(frame.data)
        parts = [_HEADER.pack(_DIRECTIONS.index(frame.direction), frame.read_ms, hot_ns, size, len(scope)),
                 scope, frame.data or b""]
        try:
            total, sent = sum(len(p) for p in parts), os.writev(self._ship_fd, parts)
            if sent < total:
                rest = memoryview(b"".join(parts))[sent:]
                while rest:
                    rest = rest[os.write(self._ship_fd, rest):]
        except OSError:
            self._broken = True
            self.sink.warn("the recorder process ended; the rest of this capture is not journaled")

    def close(self, *, timeout: float = LOCK_TIMEOUT_S + 5.0) -> bool:
        """Ship everything queued, end the child's input, and reap it (bounded: killed after ``timeout``)."""
        with self._cond:
            self._queue.append(None)
            self._cond.notify_all()
        self._thread.join(timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, _status = os.waitpid(self._pid, os.WNOHANG)
            if pid:
                return True
            time.sleep(0.005)
        with contextlib.suppress(OSError):
            os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
        return False


def _isolate(keep: int) -> None:
    """In the child: lower priority, no client or server descriptors (their peers must see end of input),
    no terminal signals (it ends at end of its input)."""
    with contextlib.suppress(OSError):
        os.nice(10)  # recording is background work: client, shim and server get the cores first
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


def _read_exact(stream: BinaryIO, size: int) -> bytes | None:
    data = stream.read(size) if size else b""
    return data if data is not None and len(data) == size else None


def _child(read_fd: int, root: Path, correlator: Correlator) -> None:
    code = 0
    try:
        _isolate(read_fd)
        sink = RecordSink(root=root, correlator=correlator, warn=_warn_fd2)
        with os.fdopen(read_fd, "rb", buffering=1 << 20) as stream:
            while (header := _read_exact(stream, _HEADER.size)) is not None:
                direction, read_ms, hot_ns, size, scope_len = _HEADER.unpack(header)
                scope = _read_exact(stream, scope_len)
                data = None if size < 0 else _read_exact(stream, size)
                if scope is None or (size >= 0 and data is None):
                    break
                sink.record(_DIRECTIONS[direction], data, scope=scope.decode(), read_ms=read_ms,
                            hot_ns=hot_ns)
        sink.finish()
    except BaseException:  # never unwind into the parent's code
        code = 1
    finally:
        os._exit(code)
