"""Serving a mock profile: over Streamable HTTP on loopback (serve's listener) or over stdio.

Both go through the protocol layer serve uses (``serve.rpc``: the 2025 ``initialize`` handshake and the
stateless 2026-07-28 revision with ``server/discover``), with ``mock.engine.MockEngine`` as the backend:
over HTTP the same listener as ``serve`` (``serve.listener.LoopbackListener``: loopback only, the same
Host/Origin/Content-Type checks, bounded reads, one request per connection), with more workers than
serve because a mock's worker mostly waits out a drawn latency; over stdio ``serve.stdio``.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

from ..serve.listener import LoopbackListener
from ..serve.stdio import serve_stdio
from ..transport.loopback import run_until_signalled
from ..transport.policy import check_listen_address
from .engine import MockEngine, check_speed
from .profile import MockProfile

__all__ = ["MOCK_WORKERS", "MockOptions", "MockServer", "run_mock", "serve_mock"]

#: Worker threads of the HTTP mock (each mostly sleeps a drawn latency).
MOCK_WORKERS = 32
LOOPBACK_MESSAGE = "the mock must listen on a loopback address"


@dataclass(frozen=True, kw_only=True)
class MockOptions:
    """How to serve a profile.

    Attributes:
        seed: the draws' seed (the same seed and request sequence give the same answers).
        speed: latencies are divided by it (a large value removes them).
        listen: a loopback socket address for Streamable HTTP, or None for stdio.
        timeout_s: the HTTP request-read deadline.
    """

    seed: int = 0
    speed: float = 1.0
    listen: str | None = None
    timeout_s: float = 5.0


class MockServer(LoopbackListener):
    """A running HTTP mock (a context manager, or ``start``/``serve_forever`` and ``close``).

    Args:
        profile: what to behave like. options: seed, speed, listen address.

    Raises:
        UsageError: a non-loopback listen address or a bad speed. OSError: the address could not be bound.
    """

    def __init__(self, profile: MockProfile, options: MockOptions) -> None:
        ip, port = check_listen_address(options.listen or "127.0.0.1:0", what="mock",
                                        loopback_message=LOOPBACK_MESSAGE)
        self.engine = MockEngine(profile, seed=options.seed, speed=options.speed)
        super().__init__(ip, port, self.engine, timeout_s=options.timeout_s, workers=MOCK_WORKERS,
                         name="mock")

    def start(self) -> MockServer:
        """Accept connections on a background thread; returns self."""
        super().start()
        return self

    def __enter__(self) -> MockServer:
        return self.start()


def serve_mock(profile: MockProfile, *, listen: str = "127.0.0.1:0", seed: int = 0,
               speed: float = 1.0) -> MockServer:
    """An HTTP mock of ``profile`` on loopback, for tests and notebooks: use it as a context manager
    (``with serve_mock(p) as mock: Client(mock.url)``) or ``start()`` and ``close()`` it.

    Args:
        profile: what to behave like (``mock_profile`` or ``load_profile``).
        listen: a loopback socket address (port 0: any free port).
        seed: the draws' seed. speed: latencies are divided by it.

    Returns:
        The server, bound and not yet accepting (``start`` or ``with`` starts it).

    Raises:
        UsageError: a non-loopback address or a bad speed. OSError: the address could not be bound.
    """
    return MockServer(profile, MockOptions(seed=seed, speed=speed, listen=listen))


def _announce(url: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"mcpeval-nb mock: listening on {url}\n")
        sys.stderr.flush()


def run_mock(profile: MockProfile, options: MockOptions, *, stdin: BinaryIO | None = None,
             stdout: BinaryIO | None = None, on_listening: Callable[[str], None] | None = None) -> int:
    """Serve ``profile`` until stdin ends (stdio) or SIGTERM/SIGINT (HTTP); the ``mock`` command's call.

    Args:
        profile: what to behave like. options: seed, speed and the listen address (None: stdio).
        stdin / stdout: the stdio streams (default: the process's).
        on_listening: called with the HTTP endpoint URL once it accepts (default: one stderr line).

    Returns:
        0 after a clean end.

    Raises:
        UsageError: a bad speed, a non-loopback address or one that cannot be bound.
    """
    check_speed(options.speed)
    if options.listen is None:
        engine = MockEngine(profile, seed=options.seed, speed=options.speed)
        return serve_stdio(engine, stdin=stdin or sys.stdin.buffer, stdout=stdout or sys.stdout.buffer)
    return run_until_signalled(lambda: MockServer(profile, options), on_listening or _announce)
