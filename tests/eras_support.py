"""Driving the ``sdk_eras`` fixture with the official SDK client, in either era, over stdio or HTTP."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import ElicitResult

from mcpeval_nb.testing.servers._eras_tasks import TasksClient
from tests.processes import first_line, stop
from tests.shim_helpers import wait_listening

__all__ = ["Call", "Transcript", "eras_argv", "eras_http", "refusal", "run_calls"]

#: A call the client makes: (tool, arguments).
Call = tuple[str, dict[str, Any]]


def eras_argv(*args: str) -> list[str]:
    """argv of the fixture server."""
    return [sys.executable, "-m", "mcpeval_nb.testing.servers.sdk_eras", *args]


@contextmanager
def eras_http(*args: str) -> Iterator[str]:
    """Run the fixture over HTTP (``--http`` plus ``args``); yields its endpoint URL."""
    proc = subprocess.Popen(eras_argv("--http", *args), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        url = first_line(proc.stdout)
        wait_listening(url, timeout=60)
        yield url
    finally:
        stop(proc)


@dataclass
class Transcript:
    """What the client saw: the negotiated version, each call's result (or error text), the elicitations
    it answered, its wall-clock time per call (seconds)."""

    version: str = ""
    results: list[Any] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)


def _answers(out: Transcript, answer: str, delay: float) -> Any:
    async def elicit(_ctx: Any, params: Any) -> ElicitResult:
        out.asked.append(getattr(params, "mode", None) or "form")
        if delay:
            await anyio.sleep(delay)
        if getattr(params, "mode", None) == "url":
            return ElicitResult(action="accept")
        if "keep" in params.message:
            return ElicitResult(action="accept", content={"keep": True})
        return ElicitResult(action="accept", content={"answer": answer})
    return elicit


async def _calls(client: Client, calls: Sequence[Call], out: Transcript, meta: dict[str, Any] | None) -> None:
    out.version = client.protocol_version
    listing = await client.list_tools()
    out.results.append(sorted(t.name for t in listing.tools))
    for name, arguments in calls:
        start = time.monotonic()
        try:
            result = await client.call_tool(name, arguments, meta=meta)  # type: ignore[arg-type]
            out.results.append(result.model_dump(exclude_none=True, exclude={"meta"}))
        except Exception as exc:  # the client's own verdict is part of the transcript
            out.results.append(f"{type(exc).__name__}: {exc}")
        out.seconds.append(time.monotonic() - start)


def _http_client(url: str, *, oauth: bool, sent: list[dict[str, str]] | None) -> Any:
    """An ``httpx2`` client for the SDK transport: OAuth-capable; ``sent`` gets each request's headers."""
    import httpx2

    from mcpeval_nb.testing.servers._eras_http import oauth_http_client

    client = oauth_http_client(url) if oauth else httpx2.AsyncClient(trust_env=False)
    client.timeout = httpx2.Timeout(30, read=300)
    if sent is not None:
        async def note(request: Any) -> None:
            sent.append({k.lower(): v for k, v in request.headers.items()})
        client.event_hooks["request"].append(note)
    return client


def run_calls(target: str | list[str], calls: Sequence[Call], *, mode: str = "auto", answer: str = "yes",
              delay: float = 0.0, env: dict[str, str] | None = None, tasks: TasksClient | None = None,
              oauth: bool = False, sent: list[dict[str, str]] | None = None,
              meta: dict[str, Any] | None = None) -> Transcript:
    """Connect the SDK client to ``target`` (a URL, or a stdio argv), list the tools, make the calls.

    Args:
        target: an HTTP endpoint URL or a command to start over stdio.
        calls: the tool calls.
        mode: the client's ``mode`` (``auto``, ``legacy`` or ``2026-07-28``).
        answer: what every form elicitation is answered with.
        delay: seconds the "user" takes per elicitation.
        env: extra environment for a stdio server.
        tasks: the Tasks extension client (default: a fresh one that polls to the end).
        oauth: over HTTP, authorise with the SDK's own OAuth client (``_eras_http.oauth_http_client``).
        sent: over HTTP, receives the headers of every request the client sends.
        meta: ``_meta`` entries for every tool call (``traceparent``, ...).
    """
    out = Transcript()

    async def main() -> None:
        http: Any = contextlib.nullcontext()
        server: Any = target
        if isinstance(target, list):
            environment = {**os.environ, **(env or {})}
            server = StdioServerParameters(command=target[0], args=target[1:], env=environment)
        elif oauth or sent is not None:
            http = _http_client(target, oauth=oauth, sent=sent)
            server = streamable_http_client(target, http_client=http)
        with anyio.fail_after(180):
            async with http, Client(server, mode=mode, elicitation_callback=_answers(out, answer, delay),
                                    extensions=[tasks or TasksClient()]) as client:
                await _calls(client, calls, out, meta)

    anyio.run(main)
    return out


def refusal(target: str | list[str], *, mode: str) -> str:
    """The error the client fails to connect with (exception groups flattened to their first leaf)."""
    try:
        run_calls(target, [], mode=mode)
    except BaseException as exc:  # the refusal is what the test reads
        while isinstance(exc, BaseExceptionGroup):
            exc = exc.exceptions[0]
        return f"{type(exc).__name__}: {exc}"
    raise AssertionError("the client connected")
