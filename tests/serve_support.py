"""Helpers for the serve tests: a capture root with promoted findings and a trend history, a running
server, raw HTTP exchanges and the real ``mcp`` SDK client over Streamable HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import mcpeval_nb as me
from tests import triage_support

T = TypeVar("T")
PROFILE = me.MeasurementProfile(evaluator_version="0.4.0", platform="linux", architecture="x86_64")


def seeded_root(root: Path) -> Path:
    """``triage_support``'s store promoted at threshold 0, plus a trend history for two servers."""
    triage_support.build(root)
    me.promote(root, threshold=0)
    for i, (score, sha) in enumerate([(70, "a" * 64), (75, "a" * 64), (75, "b" * 64)]):
        me.record_trend(me.TrendPoint(ts=f"2026-08-01T00:00:0{i}.000Z", server="alpha", passed=score > 70,
                                      cases_total=2, cases_passed=2 if score > 70 else 1, score=score,
                                      manifest_sha256=sha, standard="mcpeval-standard/2",
                                      measurement_profile=PROFILE), root=root)
    me.record_trend(me.TrendPoint(ts="2026-08-02T00:00:00.000Z", server="beta", passed=True, cases_total=1,
                                  cases_passed=1, score=50), root=root)
    return root


def seed_call(root: Path, session: str, seq: int) -> None:
    """A recorded call for ``record_annotation`` to target (an annotation needs its call)."""
    me.append_record(root, me.CallRecord(ts="2026-08-04T12:00:00.000Z", session=session, seq=seq,
                                         server="srv", method="tools/call", tool="click", outcome="ok",
                                         latency_ms=1))


@contextmanager
def serving(root: Path, *, allow_spawn: bool = False, timeout_s: float = 5.0) -> Iterator[me.FindingsServer]:
    """A started in-process server on an OS-chosen loopback port."""
    options = me.ServeOptions(listen="127.0.0.1:0", allow_spawn=allow_spawn, root=root, timeout_s=timeout_s)
    with me.FindingsServer(options) as server:
        yield server


def exchange(address: tuple[str, int], data: bytes, *, timeout: float = 30.0) -> tuple[int, dict[str, str],
                                                                                         bytes]:
    """Send raw bytes and read the whole response (serve closes the connection)."""
    with socket.create_connection(address, timeout=timeout) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def request(address: tuple[str, int], body: bytes, *, method: str = "POST",
            headers: dict[str, str | None] | None = None) -> tuple[int, dict[str, str], bytes]:
    """One request with a loopback Host and a JSON Content-Type unless ``headers`` override (None drops)."""
    base: dict[str, str | None] = {"Host": f"127.0.0.1:{address[1]}", "Content-Type": "application/json",
                                   "Content-Length": str(len(body))}
    merged = {**base, **(headers or {})}
    lines = [f"{k}: {v}" for k, v in merged.items() if v is not None]
    head = f"{method} /mcp HTTP/1.1\r\n" + "\r\n".join(lines) + "\r\n\r\n"
    return exchange(address, head.encode() + body)


def rpc(method: str, msg_id: Any = 1, **params: Any) -> bytes:
    """A JSON-RPC request body."""
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()


def call(address: tuple[str, int], name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """``tools/call`` over raw HTTP; returns the JSON-RPC response object."""
    status, _, body = request(address, rpc("tools/call", name=name, arguments=arguments))
    assert status == 200, body
    answer: dict[str, Any] = json.loads(body)
    return answer


def sdk(url: str, work: Callable[[Any], Awaitable[T]], *, mode: str = "auto") -> T:
    """Run ``work(client)`` with the real ``mcp`` SDK client connected to ``url`` over Streamable HTTP
    (``mode``: the SDK's era choice, ``auto``, ``legacy`` or ``2026-07-28``)."""
    from mcp import Client

    async def main() -> T:
        async with Client(url, mode=mode) as client:  # type: ignore[arg-type]
            return await work(client)

    return asyncio.run(main())


def sdk_call(url: str, name: str, arguments: dict[str, Any]) -> Any:
    """One ``tools/call`` through the SDK client; its ``CallToolResult``."""
    async def work(client: Any) -> Any:
        return await client.call_tool(name, arguments)
    return sdk(url, work)


def sdk_error(url: str, name: str, arguments: dict[str, Any]) -> str:
    """The JSON-RPC error message of a call (caught inside the client: it must not succeed)."""
    import pytest
    from mcp.shared.exceptions import MCPError

    async def work(client: Any) -> str:
        with pytest.raises(MCPError) as info:
            await client.call_tool(name, arguments)
        return str(info.value)
    return sdk(url, work)


def annotations(root: Path) -> list[str]:
    """Every line of the annotation journals."""
    store = root / "store"
    return [line for p in sorted(store.glob("annotations-*.jsonl")) for line in p.read_text().splitlines()] \
        if store.is_dir() else []


def children(pid: int | None = None) -> set[int]:
    """Pids of the live children of ``pid`` (default this process), from /proc."""
    found: set[int] = set()
    for task in Path(f"/proc/{os.getpid() if pid is None else pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):  # a thread that just ended
            found |= {int(pid) for pid in (task / "children").read_text().split()}
    return found


def rss_kib() -> int:
    """This process's resident set size in KiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")
