"""The shims' process plumbing: the server process (start, exit status, signals) and stderr lines."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from ..errors import TransportError
from ..transport.environ import server_environment

__all__ = ["FORWARDED_SIGNALS", "announce_root", "exit_status", "forward_signals", "say", "start_server"]

FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def say(message: str, program: str = "shim") -> None:
    """One content-free line on stderr: ``mcpeval-nb <program>: <message>``."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"mcpeval-nb {program}: {message}\n")
        sys.stderr.flush()


def announce_root(root: Path, program: str, *, flag: bool = False) -> None:
    """Say once on stderr where a shim records when ``MCPEVAL_HOME`` is unset.

    Clients that start servers with a clean environment (the Inspector passes only ``-e`` pairs) would
    otherwise record to ``~/.mcp-eval`` unseen.  With ``--root`` (``flag``) the line names that root
    and its source; with ``MCPEVAL_HOME`` set it says nothing.
    """
    if flag:
        say(f"recording to {root} (--root)", program)
    elif not os.environ.get("MCPEVAL_HOME"):
        say(f"recording to {root} (MCPEVAL_HOME is not set; pass --root or -e MCPEVAL_HOME=...)", program)


def exit_status(returncode: int) -> int:
    """The shim's exit code for a child's return code.

    Args:
        returncode: ``Popen.returncode`` (negative: killed by that signal).

    Returns:
        The code itself, or 128 + the signal number.
    """
    return 128 - returncode if returncode < 0 else returncode


def start_server(command: Sequence[str], env: Mapping[str, str] | None) -> subprocess.Popen[bytes]:
    """Start the server in its own session with piped stdin/stdout and inherited stderr.

    Args:
        command: the server's argv.
        env: its whole environment, or None: this process's less ``transport.environ``'s secrets.

    Returns:
        The running process.

    Raises:
        TransportError: the command could not be started (no path is quoted).
    """
    try:
        return subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,
                                bufsize=0, start_new_session=True,
                                env=dict(env) if env is not None else server_environment())
    except OSError as exc:
        raise TransportError(f"cannot start the server command: {exc.strerror}",
                             reason="transport-error") from None


@contextlib.contextmanager
def forward_signals(send: Callable[[int], None], wake: Callable[[], None]) -> Iterator[None]:
    """Pass SIGTERM/SIGINT/SIGHUP to ``send`` while the block runs (main thread only; elsewhere a no-op).

    The kernel may hand a signal sent to the process to any of its threads; Python then runs ``send`` on
    the main thread, but only once that thread runs again.  A main thread blocked on a lock would never
    forward it, so the signal wakeup descriptor is a pipe whose relay thread calls ``wake`` (which must
    wake the main thread's wait) for every signal caught.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def forward(signum: int, _frame: object) -> None:
        send(signum)

    def relay() -> None:
        with contextlib.suppress(OSError):
            while os.read(read_fd, 64):
                wake()

    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    previous = {s: signal.signal(s, forward) for s in FORWARDED_SIGNALS}
    previous_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    relay_thread = threading.Thread(target=relay, name="shim-signals", daemon=True)
    relay_thread.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous_fd)
        os.close(write_fd)  # the relay reads end of input and returns
        relay_thread.join()
        os.close(read_fd)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
