"""Helpers for the era tests: the ``sdk_eras`` fixture (official SDK, both protocol eras) with its
``--readiness`` profile, as targets for this package's client (no mocks)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from mcpeval_nb.transport import HttpTarget, StdioTarget
from tests.eras_support import eras_argv, eras_http

__all__ = ["era_argv", "era_http", "era_stdio"]


def era_argv(era: str, *extra: str) -> list[str]:
    """argv of the fixture in ``era`` (modern, dual or legacy) with the readiness profile, on stdio."""
    return eras_argv("--era", era, "--readiness", *extra)


def era_stdio(era: str) -> StdioTarget:
    """A stdio target running the fixture."""
    return StdioTarget(tuple(era_argv(era)))


@contextlib.contextmanager
def era_http(era: str) -> Iterator[HttpTarget]:
    """Run the fixture over stateless Streamable HTTP on loopback; yield its target; stop and reap it."""
    with eras_http("--era", era, "--readiness") as url:
        yield HttpTarget(url)
