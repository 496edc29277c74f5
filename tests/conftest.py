"""Shared fixtures: isolated capture roots and canary strings; the orphaned-process check."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh capture root, also exported as MCPEVAL_HOME for subprocesses and default lookups."""
    path = tmp_path / "capture-root"
    monkeypatch.setenv("MCPEVAL_HOME", str(path))
    yield path


# -- processes the tests leave behind ------------------------------------------------------------------
# A server or shim that outlives its test (a SIGKILL that orphans a child which ignores end of input)
# runs on after the suite, holding ports and files. At the end of the session, any process started during
# it, orphaned (adopted by init) and running code of this checkout fails the run and is stopped.

_REPO = str(Path(__file__).resolve().parent.parent)
_GRACE_S = 10.0


def _ticks_since_boot() -> float:
    return float(Path("/proc/uptime").read_text().split()[0]) * os.sysconf("SC_CLK_TCK")


def _orphans(since: float) -> list[tuple[int, str]]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            raw = Path(f"/proc/{entry}/cmdline").read_bytes()
            cmdline = raw.replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        state, ppid, *rest = stat[stat.rindex(")") + 2:].split()
        if int(ppid) == 1 and state != "Z" and int(rest[17]) >= since and _REPO in cmdline:
            found.append((int(entry), cmdline.strip()[:160]))
    return found


def _is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    # Under pytest-xdist only the controller looks for orphans, once every worker has finished: a worker
    # that finished first would stop a process another worker's test is still waiting for.
    if not _is_xdist_worker(session.config):
        session.config.stash[_STARTED] = _ticks_since_boot()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    import signal

    since = session.config.stash.get(_STARTED, None)
    if since is None or not Path("/proc/uptime").exists():
        return
    from tests.waiting import tree_cpu, until

    # A process that is shutting down gets its time: given up only after _GRACE_S seconds in which the
    # orphans used no CPU (tests/waiting.py).
    if until(lambda: not _orphans(since), stall_s=_GRACE_S,
             progress=lambda: sum(tree_cpu(pid) for pid, _ in _orphans(since))):
        return
    left = _orphans(since)
    if not left:
        return
    lines = "\n".join(f"  pid {pid}: {cmd}" for pid, cmd in left)
    print(f"\nprocesses started by the tests are still running (now stopped):\n{lines}")
    for pid, _ in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


_STARTED = pytest.StashKey[float]()
