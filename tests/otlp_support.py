"""A real OTLP receiver for the tests: Arize Phoenix on loopback, with its embedded SQLite."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.processes import stop
from tests.waiting import tree_cpu, until

__all__ = ["phoenix_server"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def phoenix_server(workdir: Path, *, timeout: float = 120.0) -> Iterator[str]:
    """Run ``phoenix serve`` on 127.0.0.1 (HTTP and gRPC), telemetry off; yield its base URL."""
    port, grpc_port = _free_port(), _free_port()
    env = {**os.environ, "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(grpc_port), "PHOENIX_WORKING_DIR": str(workdir),
           "PHOENIX_TELEMETRY_ENABLED": "false", "NO_PROXY": "127.0.0.1,localhost",
           "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
           "ALL_PROXY": "http://127.0.0.1:9", "DO_NOT_TRACK": "1"}
    workdir.mkdir(parents=True, exist_ok=True)
    log = (workdir / "phoenix.log").open("wb")
    proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("phoenix_loopback.py"))], env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        def healthy() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"phoenix exited {proc.returncode}; see {workdir / 'phoenix.log'}")
            try:
                with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
                        f"{url}/healthz", timeout=2):
                    return True
            except OSError:
                return False

        # ``timeout``: seconds in which Phoenix used no CPU and was still not healthy (tests/waiting.py)
        if not until(healthy, stall_s=timeout, progress=lambda: tree_cpu(proc.pid)):
            raise RuntimeError(f"phoenix did not become healthy; see {workdir / 'phoenix.log'}")
        yield url
    finally:
        stop(proc, timeout=20)
        log.close()
