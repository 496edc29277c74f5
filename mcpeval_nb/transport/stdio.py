"""The bounded stdio channel: one MCP server child process speaking newline-delimited JSON-RPC.

Limits (SPEC 14, exact):

- every frame is at most 4 MiB including its newline, on read (``stdio frame exceeds 4 MiB``: the reader
  stops, the contents are never kept) and on write (``outgoing stdio frame exceeds limit``: refused before
  a byte is written, the channel stays usable);
- a reader thread reads into one preallocated 4 MiB buffer, so an endless line never grows memory, and
  hands decoded messages to a queue of at most 16 frames.  A full queue makes the reader wait (the pipe
  pushes back on the server) for at most the channel's timeout, then the channel fails: memory stays
  bounded and the outcome does not depend on thread scheduling;
- writes go to a non-blocking stdin pipe through ``poll`` with a deadline, and are cancelled by
  ``close()`` from any thread (a self-pipe wakes the poll); a write that misses its deadline fails the
  channel with ``transport-timeout`` (a partial frame may have been written);
- the child inherits this process's environment less mcpeval-nb's secrets (``transport.environ``);
- server stderr is drained into a bounded tail (``transport.stderr_tail``): when the server closes the
  connection, the error carries its exit status and its last stderr lines, through the redaction check's
  text patterns (``TransportError.detail``); the child runs in its own session so ``close()`` terminates
  the whole process group (an ``npx`` wrapper and its ``node``), then reaps the child.
"""

from __future__ import annotations

import contextlib
import errno
import os
import queue
import select
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import TransportError
from ..limits import DEFAULT_RESPONSE_TIMEOUT_S, MAX_FRAME_BYTES, MAX_QUEUED_FRAMES
from . import jsonrpc
from .environ import server_environment
from .jsonrpc import Incoming
from .stderr_tail import StderrTail

__all__ = ["StdioChannel"]

_READ_CHUNK = 64 * 1024
#: MCP's stdio shutdown: the server gets this long to exit after its input ends, then as long again
#: after SIGTERM, before SIGKILL.  A server run through the stdio shim exits at end of input once its
#: recorder has drained; a SIGKILL of its process group would lose the records still draining.
_EOF_GRACE_S = 2.0
_TERM_GRACE_S = 2.0
#: How long a closed connection waits for the server to exit and finish its stderr before reporting.
_EXIT_WAIT_S = 2.0
_END = object()


def _spawn_failed(argv: Sequence[str], exc: OSError | ValueError) -> TransportError:
    """``could not start the MCP server command "<name>": <strerror> (<ERRNO>)``: the program's name
    (never its directory, which may be a home path) and the errno."""
    name = os.path.basename(str(argv[0])) or str(argv[0])
    if isinstance(exc, OSError) and exc.errno is not None:
        why = f"{exc.strerror} ({errno.errorcode.get(exc.errno, exc.errno)})"
    else:
        why = "invalid command"
    hint = ", not found on PATH" \
        if isinstance(exc, FileNotFoundError) and os.sep not in str(argv[0]) else ""
    return jsonrpc.failure(f'{jsonrpc.SPAWN_FAILED} "{name}": {why}{hint}')


class StdioChannel:
    """A child process speaking newline-delimited JSON-RPC, with hard limits on both directions.

    Args:
        argv: the command and its arguments (no shell).
        env: variables laid over the inherited environment, which never passes on
            ``MCPEVAL_HTTP_AUTHORIZATION`` or ``MCPEVAL_SESSION`` (``transport.environ``).
        queue_wait: how long the reader waits for room in the full 16-frame queue before failing.

    Raises:
        TransportError: ``transport-error`` when the command cannot be started (no path is quoted).
    """

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 queue_wait: float = DEFAULT_RESPONSE_TIMEOUT_S) -> None:
        if not argv:
            raise jsonrpc.failure(jsonrpc.SPAWN_FAILED)
        full_env = server_environment(env)
        err_r, err_w = os.pipe()
        try:
            self._proc = subprocess.Popen(
                list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err_w,
                env=full_env, start_new_session=True, bufsize=0, close_fds=True)
        except (OSError, ValueError) as exc:
            os.close(err_r)
            raise _spawn_failed(argv, exc) from None
        finally:
            os.close(err_w)
        self._stderr = StderrTail(err_r)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._stdin = self._proc.stdin.fileno()
        self._stdout = self._proc.stdout.fileno()
        os.set_blocking(self._stdin, False)
        self._wake_r, self._wake_w = os.pipe()
        self._queue: queue.Queue[object] = queue.Queue(maxsize=MAX_QUEUED_FRAMES)
        self._queue_wait = queue_wait
        self._write_lock = threading.Lock()
        self._closed = threading.Event()
        self._close_lock = threading.Lock()
        self._failure: TransportError | None = None
        self._ended = False
        self._reader_done = threading.Event()
        self._reader = threading.Thread(target=self._read_loop, name="mcpeval-stdio-reader", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self._proc.pid

    def wait_reader(self, timeout: float) -> bool:
        """Wait until the reader thread has stopped (end of stream, a broken limit, or close).

        Args:
            timeout: seconds to wait at most.

        Returns:
            True when the reader has stopped reading.
        """
        return self._reader_done.wait(timeout)

    @property
    def returncode(self) -> int | None:
        """The child's exit status once reaped, else None."""
        return self._proc.returncode

    # --- reading --------------------------------------------------------------------------------------

    def _read_loop(self) -> None:
        try:
            self._read_frames()
        except TransportError as exc:
            self._failure = self._failure or exc
        except OSError:
            self._failure = self._failure or jsonrpc.closed()
        finally:
            self._reader_done.set()
            self._put(_END, forever=True)

    def _wait_readable(self) -> bool:
        poller = select.poll()
        poller.register(self._stdout, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        while not self._closed.is_set():
            for fd, _events in poller.poll(1000):
                if fd == self._stdout:
                    return True
        return False

    def _read_frames(self) -> None:
        buf = bytearray(MAX_FRAME_BYTES)
        view = memoryview(buf)
        filled = 0
        while self._wait_readable():
            if filled == MAX_FRAME_BYTES:
                raise jsonrpc.failure(jsonrpc.FRAME_TOO_LARGE)
            count = os.readv(self._stdout, [view[filled:min(filled + _READ_CHUNK, MAX_FRAME_BYTES)]])
            if count == 0:
                return
            scan, filled = filled, filled + count
            start = 0
            while (nl := buf.find(b"\n", scan, filled)) >= 0:
                self._deliver(view[start:nl], nl + 1 - start)
                start = scan = nl + 1
            if start:
                rest = bytes(view[start:filled])
                buf[: len(rest)] = rest
                filled = len(rest)
        raise jsonrpc.closed()

    def _deliver(self, frame: memoryview, size: int) -> None:
        message = jsonrpc.decode(frame)
        if message is not None and not self._put((message, size)):
            raise jsonrpc.failure(jsonrpc.QUEUE_FULL)

    def _put(self, item: object, *, forever: bool = False) -> bool:
        deadline = time.monotonic() + self._queue_wait
        while not self._closed.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                if not forever and time.monotonic() >= deadline:
                    return False
        return False

    def receive(self, deadline: float) -> Incoming | None:
        """The next decoded message, or None when ``deadline`` (``time.monotonic()``) passes first.

        Raises:
            TransportError: the server closed stdout (``transport-closed``), a frame broke a limit or
                the queue stayed full (``transport-error``), or the channel was closed.
        """
        if self._ended or self._closed.is_set():
            raise self._explained()
        try:
            item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None
        if item is _END:
            self._ended = True
            raise self._explained()
        assert isinstance(item, tuple)
        return item

    def _explained(self) -> TransportError:
        """The channel's failure; a closed connection gains the server's exit status and stderr tail."""
        error = self._failure or jsonrpc.closed()
        if error.reason == "transport-closed" and not error.detail and not self._closed.is_set():
            error = TransportError(str(error), reason=error.reason, detail=self._exit_detail())
        self._failure = error
        return error

    def _closed_error(self) -> TransportError:
        return TransportError(jsonrpc.CLOSED, reason="transport-closed", detail=self._exit_detail())

    def _exit_detail(self) -> tuple[str, ...]:
        try:
            status: int | None = self._proc.wait(timeout=_EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            status = None
        self._stderr.wait_end(_EXIT_WAIT_S if status is not None else 0.0)
        if status is None:
            head = "the server closed its stdout but is still running"
        elif status < 0:
            head = f"the server was killed by signal {-status}"
        else:
            head = f"the server exited with status {status}"
        lines = self._stderr.lines()
        if not lines:
            return (f"{head} and wrote nothing to stderr",)
        return (f"{head}; its last stderr lines:", *(f"| {line}" for line in lines))

    # --- writing --------------------------------------------------------------------------------------

    def send(self, message: dict[str, Any], *, deadline: float,
             headers: Mapping[str, str] | None = None) -> None:
        """Encode one JSON-RPC message and write its frame (newline included) before ``deadline``.

        Args:
            message: the JSON-RPC object to send.
            deadline: a ``time.monotonic()`` instant.
            headers: ignored (stdio has no header layer; the modern era's metadata is in ``_meta``).

        Raises:
            TransportError: the frame exceeds 4 MiB (``transport-error``, nothing written, channel still
                usable); the write missed its deadline (``transport-timeout``, channel failed); the
                server closed stdin or the channel was closed (``transport-closed``).
        """
        frame = jsonrpc.encode(message)
        if len(frame) > MAX_FRAME_BYTES:
            raise jsonrpc.refused(jsonrpc.OUTGOING_TOO_LARGE)
        if not self._write_lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise jsonrpc.timeout(jsonrpc.WRITE_TIMED_OUT)  # another write held the pipe; nothing sent
        try:
            self._write(memoryview(frame), deadline)
        finally:
            self._write_lock.release()

    def _write(self, data: memoryview, deadline: float) -> None:
        poller = select.poll()
        poller.register(self._stdin, select.POLLOUT)
        poller.register(self._wake_r, select.POLLIN)
        offset = 0
        while offset < len(data):
            if self._closed.is_set() or self._ended:
                raise self._failure or jsonrpc.closed()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._fail(jsonrpc.timeout(jsonrpc.WRITE_TIMED_OUT))
            events = dict(poller.poll(min(remaining, 1.0) * 1000))
            if events.get(self._stdin, 0) & (select.POLLERR | select.POLLHUP):
                self._fail(self._closed_error())
            if not events.get(self._stdin, 0) & select.POLLOUT:
                continue
            try:
                offset += os.write(self._stdin, data[offset:])
            except BlockingIOError:
                continue
            except OSError:
                self._fail(self._closed_error())

    def _fail(self, error: TransportError) -> None:
        if self._failure is None:
            self._failure = error
        self.close()
        raise error

    def listen(self) -> None:
        """Nothing to open: every server message arrives on stdout (the HTTP channel opens a GET stream)."""

    # --- closing --------------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once ``close()`` ran (or a write failure closed the channel)."""
        return self._closed.is_set()

    def close(self) -> None:
        """Cancel pending I/O, end the server as MCP's stdio shutdown says (close its input; SIGTERM to
        its process group if it has not exited within a grace; SIGKILL after another), then end what is
        left of the group and reap the child; idempotent."""
        with self._close_lock:
            if self._closed.is_set():
                return
            self._closed.set()
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        with contextlib.suppress(OSError):
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        try:
            self._proc.wait(timeout=_EOF_GRACE_S)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGTERM)
            try:
                self._proc.wait(timeout=_TERM_GRACE_S)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self._proc.wait()
        self._signal(signal.SIGTERM)  # a grandchild left behind in the group (never a shim's recorder:
        # the shim exits only after its recorder has drained)
        self._reader.join(timeout=5.0)
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait(_END)  # wakes a receive() blocked in another thread
        for stream in (self._proc.stdin, self._proc.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, sig)
