"""The stdio recording shim: client <-> shim <-> server, one call record per completed call (SPEC 2.6).

Two forwarding threads (one per direction) move newline-delimited frames byte for byte, so neither side
can deadlock the other; each frame is handed to the recorder thread before it is forwarded.  The
server's stderr is inherited.  The shim ends when the server exits (its exit code, or 128 + signal).
End of client input is passed on (the server's stdin closes) while the client may still read answers;
when the client is gone (it closed its end of our output, or a write to it failed) the server's stdin
closes and, after a grace period, the server's process group gets SIGTERM, then SIGKILL.  A frame over
4 MiB is never buffered past the bound: by default it is forwarded unchanged in chunks and recorded
content-free (matched to its request when its ends show the id), and said once on stderr; with
``strict_frames`` it is refused instead: recorded content-free, not forwarded, and both sides closed.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from .._frozen import Frozen
from ..clock import now_ms
from ..errors import TransportError, UsageError
from ..privacy.grammar import SERVER_LABEL_MESSAGE, valid_server
from ..root.salt import read_salt
from ..root.where import check_usable, locate
from .frames import FrameReader, FrameTooLarge, WakePipe, grow_pipe, pending_bytes, write_all
from .handoff import Frame, FrameQueue
from .recorder_fork import ForkedRecorder
from .spawn import announce_root, exit_status, forward_signals, say, start_server

TYPE_CHECKING = False  # typing's, without importing typing: the shim starts its server first
if TYPE_CHECKING:
    from ..root import RootLike
    from .correlate import Correlator

__all__ = ["ShimOptions", "announce_root", "exit_status", "run_shim"]


#: Seconds an exited server's output may stay idle (a grandchild holding its stdout) before the shim ends.
SERVER_QUIET_S = 1.0


class ShimOptions(Frozen):
    """Options of one stdio shim run (immutable).

    ``Frozen`` rather than a frozen dataclass: this module is what the shim's process loads before its
    server starts, and ``dataclasses`` alone costs more than the rest of it (docs/performance.md).

    Attributes:
        server: the server label (SPEC 4.4 grammar).
        command: the server's argv.
        root: the capture root (default: ``$MCPEVAL_HOME`` or ``~/.mcp-eval``).
        session: the raw session value (default: ``$MCPEVAL_SESSION``, else a fresh uuid4).
        stdin_fd: the client-facing input descriptor.
        stdout_fd: the client-facing output descriptor.
        grace_s: seconds the server gets after the client is gone before SIGTERM, and again before SIGKILL.
        env: the server's whole environment (default: this process's, less ``MCPEVAL_HTTP_AUTHORIZATION``
            and ``MCPEVAL_SESSION``); never shown by ``repr``.
        strict_frames: refuse a frame over 4 MiB and close both sides (the reference behaviour)
            instead of forwarding it unchanged.
        catalog: record a catalog record per completed ``tools/list`` listing (docs/catalog.md).
    """

    # The fields in order, as ``repr`` shows them (not sorted).
    __slots__ = ("server", "command", "root", "session", "stdin_fd", "stdout_fd",  # noqa: RUF023
                 "grace_s", "env", "strict_frames", "catalog")
    _hidden = ("env",)
    server: str
    command: Sequence[str]
    root: RootLike
    session: str | None
    stdin_fd: int
    stdout_fd: int
    grace_s: float
    env: dict[str, str] | None
    strict_frames: bool
    catalog: bool

    def __init__(self, server: str, command: Sequence[str], root: RootLike = None,
                 session: str | None = None, stdin_fd: int = 0, stdout_fd: int = 1, grace_s: float = 2.0,
                 env: dict[str, str] | None = None, strict_frames: bool = False,
                 catalog: bool = True) -> None:
        self._init(server=server, command=command, root=root, session=session, stdin_fd=stdin_fd,
                   stdout_fd=stdout_fd, grace_s=grace_s, env=env, strict_frames=strict_frames,
                   catalog=catalog)


class _Session:
    """The running shim: child process, forwarding threads, recorder and shutdown state.

    Each forwarding thread closes only the descriptors it owns: the outbound one the server's stdin,
    the inbound one the server's stdout and the client-facing output.  Others ask it to stop through
    its wake-up pipe, so no descriptor is closed under a thread that is using it.
    """

    def __init__(self, options: ShimOptions, proc: subprocess.Popen[bytes], recorder: FrameQueue) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.options = options
        self.proc = proc
        self.recorder = recorder
        self.wakes = {"outbound": WakePipe(), "inbound": WakePipe()}
        self.cond = threading.Condition()
        self.closing = False  # the client went away, or a frame was refused: the session is over
        self._oversized_said = False
        self.child_done = False
        self.server_eof = False
        self._awaiting_server = False  # the inbound pump waits for the server's next bytes
        self._child_in = proc.stdin
        self._child_out = proc.stdout

    def _notify(self, **flags: bool) -> None:
        with self.cond:
            for name, value in flags.items():
                setattr(self, name, value)
            self.cond.notify_all()

    def _detach_client_output(self) -> None:
        """Point the client-facing output at /dev/null: the client sees end of input, the fd stays valid."""
        with contextlib.suppress(OSError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self.options.stdout_fd)
            os.close(null)

    def _refuse(self, direction: str) -> None:
        """A frame over 4 MiB: record it content-free, say so without content, close both sides."""
        self.recorder.submit(Frame(direction, None))
        side = "client" if direction == "outbound" else "server"
        say(f"{side} frame exceeds 4 MiB; not forwarded, closing both sides")
        self._notify(closing=True)
        self.wakes["outbound"].wake()

    def _stream(self, reader: FrameReader, direction: str, dst: int, forwarding: bool) -> bool:
        """Forward a frame over the bound chunk by chunk, keeping only its ends for the record.

        The record is queued before the chunk with the newline goes out, so it precedes anything the
        peer sends in reply.  Returns whether forwarding still works.
        """
        if not self._oversized_said:
            self._oversized_said = True
            side = "client" if direction == "outbound" else "server"
            say(f"a {side} frame exceeds 4 MiB; forwarded unchanged and recorded without its content "
                 "(said once; --strict-frames refuses such frames)")
        from .oversized import Glimpse  # loaded on the first oversized frame, not before the server starts

        glimpse, frame = Glimpse(), None
        try:
            for chunk in reader.rest():
                glimpse.feed(chunk)
                if chunk.endswith(b"\n"):
                    frame = Frame(direction, None, glimpse=glimpse, read_ms=now_ms())
                    self.recorder.submit(frame)
                if forwarding:
                    try:
                        write_all(dst, chunk)
                    except OSError:
                        forwarding = self._peer_gone(direction)
        finally:
            if frame is None:  # the input ended (or failed) inside the frame
                frame = Frame(direction, None, glimpse=glimpse)
                self.recorder.submit(frame)
            frame.forwarded()
        return forwarding

    def _peer_gone(self, direction: str) -> bool:
        """A write failed: stop forwarding (keep draining); a lost client ends the session."""
        if direction == "inbound":
            self._notify(closing=True)
            self.wakes["outbound"].wake()
        return False

    def pump(self, direction: str) -> None:
        """Forward frames in one direction until end of input, a refusal, or a wake-up."""
        outbound = direction == "outbound"
        src = self.options.stdin_fd if outbound else self._child_out.fileno()
        dst = self._child_in.fileno() if outbound else self.options.stdout_fd
        grow_pipe(src)
        grow_pipe(dst)
        reader = FrameReader(src, wake=self.wakes[direction])
        forwarding = True
        try:
            while True:
                try:
                    self._awaiting_server = not outbound
                    data = reader.read()
                    self._awaiting_server = False
                except FrameTooLarge:
                    if self.options.strict_frames:
                        self._refuse(direction)
                        return
                    forwarding = self._stream(reader, direction, dst, forwarding)
                    continue
                except OSError:
                    return
                if data is None:
                    return
                frame = Frame(direction, data)
                self.recorder.submit(frame)
                if forwarding:
                    try:
                        write_all(dst, data)
                    except OSError:  # the peer is gone: keep draining, stop forwarding
                        forwarding = self._peer_gone(direction)
                frame.forwarded()
        finally:
            if outbound:  # end of client input: the server sees it too; the client may still read
                with contextlib.suppress(OSError):
                    self._child_in.close()
            else:
                with contextlib.suppress(OSError):
                    self._child_out.close()
                self._detach_client_output()
                self._notify(server_eof=True)

    def watch_client(self) -> None:
        """Notice the client closing its end of our output (a killed client), even while idle."""
        watch = select.poll()
        watch.register(self.options.stdout_fd, 0)  # POLLERR/POLLHUP are always reported
        wake_fd = self.wakes["outbound"].read_fd
        watch.register(wake_fd, select.POLLIN)  # the session is already closing
        with contextlib.suppress(OSError):
            for fd, events in watch.poll():
                if fd != wake_fd and events & (select.POLLERR | select.POLLHUP):
                    self._notify(closing=True)
                    self.wakes["outbound"].wake()

    def wake_supervisor(self) -> None:
        """Wake ``supervise`` (a signal arrived: its handler runs once the main thread does)."""
        self._notify()

    def wait_child(self) -> None:
        """Reap the child (its own thread) and wake the supervisor."""
        self.proc.wait()
        self._notify(child_done=True)

    def signal_child(self, signum: int) -> None:
        """Send a signal to the server's process group (ignored once it is gone)."""
        if self.proc.returncode is None:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signum)

    def supervise(self) -> int:
        """Wait for the child, escalating after the client left; return the shim's exit code."""
        deadline: float | None = None
        stage = 0
        with self.cond:
            while not self.child_done:
                if (self.closing or self.server_eof) and deadline is None:
                    deadline = time.monotonic() + self.options.grace_s
                    self.wakes["outbound"].wake()
                if deadline is not None and time.monotonic() >= deadline:
                    stage += 1
                    self.signal_child(signal.SIGTERM if stage == 1 else signal.SIGKILL)
                    deadline = time.monotonic() + self.options.grace_s
                timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
                self.cond.wait(timeout)
            self._drain_server_output()
        assert self.proc.returncode is not None
        return exit_status(self.proc.returncode)

    def _drain_server_output(self) -> None:
        """Forward the exited server's last frames, however slowly the client reads them.

        A server may exit with a pipe full of frames: they are forwarded until end of input.  Only an idle
        output (a grandchild holding the server's stdout, writing nothing for ``SERVER_QUIET_S``) ends the
        wait early; a slow client or a slow machine never does.  Called with ``cond`` held.
        """
        quiet_since: float | None = None
        while not self.server_eof:
            if self._awaiting_server and pending_bytes(self._child_out) == 0:
                quiet_since = quiet_since if quiet_since is not None else time.monotonic()
                if time.monotonic() - quiet_since >= SERVER_QUIET_S:
                    return
            else:
                quiet_since = None
            self.cond.wait_for(lambda: self.server_eof, timeout=0.05)

    def stop(self, threads: list[threading.Thread]) -> None:
        """Wake and join the forwarding threads (bounded), then release the pipes."""
        for wake in self.wakes.values():
            wake.wake()
        for thread in threads[:3]:  # the pumps and the reaper; the client watcher may block forever
            thread.join(1.0)
        if threads[1].is_alive():  # blocked writing to a client that does not read
            self._detach_client_output()
        if not any(thread.is_alive() for thread in threads[:2]):
            for wake in self.wakes.values():
                wake.close()


class _Forward:
    """Where the shim's stop signals go: held until the session exists, then to its server's group."""

    __slots__ = ("held", "run")

    def __init__(self) -> None:
        self.run: _Session | None = None
        self.held: list[int] = []

    def send(self, signum: int) -> None:
        if self.run is None:
            self.held.append(signum)
        else:
            self.run.signal_child(signum)

    def wake(self) -> None:
        if self.run is not None:
            self.run.wake_supervisor()

    def attach(self, run: _Session) -> None:
        """Pass later signals to ``run``'s server, and the held ones now (handlers run on this thread)."""
        self.run = run
        held, self.held = self.held, []
        for signum in held:
            run.signal_child(signum)


def _correlator_maker(options: ShimOptions, root: Path, salt: bytes,
                      session: str | None) -> Callable[[], Correlator]:
    """The shim's correlator, made where it is used (the recorder child): nothing that parses or records
    is imported before the server starts, and a missing session value is drawn there (a fresh uuid4)."""

    def make() -> Correlator:
        import uuid

        from .catalog import recorded_names
        from .correlate import Correlator

        return Correlator(server=options.server, session=session or str(uuid.uuid4()), salt=salt,
                          catalog=options.catalog, known_names=lambda: recorded_names(root))

    return make


def run_shim(options: ShimOptions, *, on_start: Callable[[int], None] | None = None) -> int:
    """Run the stdio shim until the server exits.

    Args:
        options: the server label and command, capture root, session and descriptors.
        on_start: called with the server's pid once it runs.

    Returns:
        The server's exit code, or 128 + signal number when it died by a signal.

    Raises:
        UsageError: the server label is outside the grammar, or there is no command.
        SaltError: the capture root's salt is unusable.
        TransportError: the server command could not be started.
    """
    if not valid_server(options.server):
        raise UsageError(SERVER_LABEL_MESSAGE)
    if not options.command:
        raise UsageError("shim needs the server command after --")
    root = locate(options.root)[0]  # Root.of's resolution, without loading what a Root carries
    check_usable(root)
    salt = read_salt(root)
    announce_root(root, "shim", flag=options.root is not None)
    session = options.session if options.session is not None else os.environ.get("MCPEVAL_SESSION")
    correlator = _correlator_maker(options, root, salt, session)
    # Parsing and journaling run in a forked child (before any thread or pipe of ours exists), so they
    # never hold this process's interpreter lock while a frame waits to be forwarded; the child makes
    # the correlator and loads what recording needs while the server starts.
    recorder: FrameQueue
    if hasattr(os, "fork"):
        recorder = ForkedRecorder(root=root, correlator=correlator)
    else:
        from .recorder import Recorder

        recorder = Recorder(root=root, correlator=correlator())
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0001)  # the forwarding threads get the interpreter lock back quickly
    # The stop signals' handlers go in before the server starts: a signal that comes before the session
    # exists is held and passed on to the server as soon as it runs, so SIGTERM/SIGINT/SIGHUP always reach
    # the server and never end the shim by their default action (installed after the pumps started, a
    # client that had seen an answer could kill the shim with the server still running).
    forward = _Forward()
    with forward_signals(forward.send, forward.wake):
        try:
            proc = start_server(options.command, options.env)
        except TransportError:
            recorder.close()
            sys.setswitchinterval(old_interval)
            raise
        run = _Session(options, proc, recorder)
        if on_start is not None:
            on_start(proc.pid)
        threads = [threading.Thread(target=run.pump, args=(d,), name=f"shim-{d}", daemon=True)
                   for d in ("outbound", "inbound")]
        threads.append(threading.Thread(target=run.wait_child, name="shim-wait", daemon=True))
        threads.append(threading.Thread(target=run.watch_client, name="shim-watch", daemon=True))
        forward.attach(run)
        for thread in threads:
            thread.start()
        try:
            code = run.supervise()
        finally:
            run.stop(threads)
            recorder.close()
            sys.setswitchinterval(old_interval)
    return code
