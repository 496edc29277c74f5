"""Helpers for the catalog tests: fixture catalogs behind the real shims, driven by the bounded client."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from mcpeval_nb import HTTPShim, HTTPShimOptions, HttpTarget, StdioTarget
from mcpeval_nb.testing.servers import catalog_drift
from mcpeval_nb.transport import McpSession
from tests.processes import first_line, listening, stop

Script = Callable[[McpSession], None]


def server_argv(*args: str) -> list[str]:
    """The catalog fixture run as a script (standard library only: it starts fast)."""
    return [sys.executable, catalog_drift.__file__, *args]


def stdio_shim(root: Path, label: str, *server_args: str, flags: Sequence[str] = ()) -> StdioTarget:
    """The real ``mcpeval-nb shim`` CLI in front of the catalog fixture."""
    return StdioTarget((sys.executable, "-m", "mcpeval_nb", "shim", "--server", label, "--root", str(root),
                        *flags, "--", *server_argv(*server_args)))


def run_session(target: StdioTarget | HttpTarget, script: Script) -> None:
    """One MCP session: initialize, then the script."""
    with McpSession.connect(target, timeout=120.0) as session:
        session.initialize(capabilities={})
        script(session)


def list_only(session: McpSession) -> None:
    """List the tools, nothing else."""
    session.list_tools()


def calls(*names: str) -> Script:
    """List the tools, then call each tool (no arguments)."""
    def script(session: McpSession) -> None:
        session.list_tools()
        for name in names:
            session.call_tool(name, {})
    return script


@contextlib.contextmanager
def http_upstream(*server_args: str) -> Iterator[str]:
    """The catalog fixture serving Streamable HTTP on loopback; yields its URL."""
    proc = subprocess.Popen(server_argv(*server_args, "--http"), stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        yield listening(first_line(proc.stdout))
    finally:
        stop(proc)


@contextlib.contextmanager
def http_shim(root: Path, label: str, upstream: str, *, session: str) -> Iterator[HttpTarget]:
    """shim-http in this process in front of ``upstream``; closed (and its records written) on exit."""
    with HTTPShim(HTTPShimOptions(server=label, listen="127.0.0.1:0", upstream=upstream, root=root,
                                  session=session)) as shim:
        yield HttpTarget(shim.url)


def write_catalogs(directory: Path, catalogs: Sequence[list[dict[str, Any]]]) -> list[str]:
    """Each catalog as a JSON file the fixture serves; returns their paths."""
    paths = []
    for i, tools in enumerate(catalogs):
        path = directory / f"catalog-{i:02d}.json"
        path.write_text(json.dumps(tools), encoding="utf-8")
        paths.append(str(path))
    return paths
