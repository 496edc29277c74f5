"""What the browser tests share: Debian's Chromium (Playwright never downloads one), its flags, and the
rule that a missing browser fails in CI and skips, saying what to install, elsewhere."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.waiting import tree_cpu, until

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
#: Every host name fails to resolve: a page that needs the network shows it.
OFFLINE_ARGS = [*CHROMIUM_ARGS, "--host-resolver-rules=MAP * ~NOTFOUND"]


def require_browser(*modules: str) -> None:
    """Fail (CI) or skip (elsewhere) unless Chromium and the named Python modules are installed."""
    missing = [name for name in ("playwright", *modules) if importlib.util.find_spec(name) is None]
    if not CHROMIUM.exists():
        missing.append("Debian chromium (/usr/bin/chromium: apt-get install chromium)")
    if missing:
        reason = f"browser test needs {', '.join(missing)} (pip install -e '.[browser]')"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def voila(notebook: Path, *, env: Mapping[str, str]) -> Iterator[str]:
    """A Voila server on 127.0.0.1 serving ``notebook`` (run in its directory with ``env``); yields its URL.

    Raises:
        RuntimeError: Voila exited before its port accepted connections, or used no CPU for 60 s
            without listening.
    """
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "voila", notebook.name, "--no-browser", f"--port={port}",
         "--Voila.ip=127.0.0.1", "--show_tracebacks=True"],
        cwd=notebook.parent, env=dict(env), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    try:
        def accepts() -> bool:  # the port accepts connections once Voila's server is up
            if proc.poll() is not None:
                raise RuntimeError("voila exited before listening")
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                return True
            return False

        if not until(accepts, stall_s=60.0, progress=lambda: tree_cpu(proc.pid)):
            raise RuntimeError("voila did not start")
        yield f"http://127.0.0.1:{port}/"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)


def write_notebook(path: Path, source: str) -> Path:
    """Write a one-cell notebook holding ``source`` (what Voila serves); returns ``path``."""
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": "panels", "metadata": {},
                     "outputs": [], "source": source.strip()}],
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb))
    return path
