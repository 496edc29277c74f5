"""Helpers shared by the transport tests: fixture sessions and process checks (no mocks)."""

from __future__ import annotations

import contextlib
import os
import select
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import mcpeval_nb.testing.servers as servers
from mcpeval_nb.transport import Budget, McpSession, StdioTarget
from tests.waiting import tree_cpu, until


def fixture_argv(name: str, *args: str) -> list[str]:
    """argv running a stdlib-only fixture server by file path (skips importing the whole package)."""
    return [sys.executable, str(Path(servers.__file__).with_name(f"{name}.py")), *args]


def fixture_session(name: str, *args: str, timeout: float = 10.0, budget: Budget | None = None) -> McpSession:
    """A session on fixture server ``name`` (a real child process)."""
    return McpSession.connect(StdioTarget(tuple(fixture_argv(name, *args))), timeout=timeout, budget=budget)


def child_pid(session: McpSession) -> int:
    """The stdio child's pid (the channel is a StdioChannel)."""
    pid: int = session._channel.pid  # type: ignore[attr-defined]
    return pid


def assert_reaped(pid: int) -> None:
    """``pid`` was our child and has been waited for: no zombie, no running process."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
    else:
        raise AssertionError("child was not reaped by close()")
    assert not Path(f"/proc/{pid}").exists()


def assert_gone(pid: int, *, within: float = 5.0) -> None:
    """A non-child process (a grandchild) has stopped running: gone, or a zombie awaiting init.  Given up
    only after ``within`` seconds in which nothing this test started used CPU (tests/waiting.py)."""
    def stopped() -> bool:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        return state == "Z"

    assert until(stopped, stall_s=within), "grandchild still running after close()"


@contextlib.contextmanager
def http_fixture(mode: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run the Streamable HTTP fixture server in ``mode``; yield its loopback URL; stop and reap it."""
    proc = subprocess.Popen(fixture_argv("streamable_http", mode), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=None if env is None else {**os.environ, **env})
    try:
        assert proc.stdout is not None
        stdout = proc.stdout
        assert until(lambda: bool(select.select([stdout], [], [], 0.05)[0]), stall_s=30.0,
                     progress=lambda: tree_cpu(proc.pid)), "HTTP fixture did not start"
        url = proc.stdout.readline().decode().strip()
        assert url.startswith("http://127.0.0.1:")
        yield url
    finally:
        proc.kill()
        proc.wait(timeout=10)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()


def free_port() -> int:
    """A loopback TCP port the OS reports free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def listening_process(argv: list[str], port: int, env: dict[str, str] | None = None,
                      wait: float = 60.0) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``argv`` and wait (bounded) until it accepts TCP connections on 127.0.0.1:``port``."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=None if env is None else {**os.environ, **env},
                            start_new_session=True)
    try:
        def accepts() -> bool:
            assert proc.poll() is None, "server exited before listening"
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
                return True
            return False

        # ``wait``: seconds in which the server used no CPU and still did not listen (tests/waiting.py)
        assert until(accepts, stall_s=wait, progress=lambda: tree_cpu(proc.pid)), \
            "server did not start listening"
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)
        proc.wait(timeout=10)
