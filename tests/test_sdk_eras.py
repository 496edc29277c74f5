"""The official-SDK fixture server of both eras answers the SDK client as documented: each era, each
transport, its refusals, multi round-trip tools, tasks and OAuth."""

from __future__ import annotations

import anyio
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from mcpeval_nb.testing.servers._eras_http import TOKEN_PREFIX, oauth_http_client
from mcpeval_nb.testing.servers._eras_tasks import TasksClient
from tests.eras_support import Call, eras_argv, eras_http, refusal, run_calls

CALLS: list[Call] = [("echo", {"text": "hi"}), ("ask", {"rounds": 2}), ("confirm", {"item": "cake"}),
         ("job", {"ms": 30, "note": "n"})]


def _texts(results: list[object]) -> list[object]:
    return [r["content"][0]["text"] if isinstance(r, dict) else r for r in results[1:]]


@pytest.mark.parametrize(("era", "mode", "version"), [
    ("dual", "auto", "2026-07-28"), ("dual", "legacy", "2025-11-25"), ("modern", "auto", "2026-07-28"),
    ("legacy", "auto", "2025-11-25")])
def test_each_era_over_stdio_serves_the_same_answers(era: str, mode: str, version: str) -> None:
    out = run_calls(eras_argv("--era", era), CALLS, mode=mode, answer="A")
    assert out.version == version
    assert _texts(out.results) == ["hi", "answers: A,A", "kept", "job done: n"]
    assert out.asked == ["form", "form", "form"]


def test_a_legacy_client_cannot_reach_a_modern_only_server_over_stdio() -> None:
    assert "2026-07-28" in refusal(eras_argv("--era", "modern"), mode="legacy")


def test_stateless_http_serves_tasks_to_the_end_state_and_cancels() -> None:
    with eras_http() as url:
        calls: list[Call] = [("job", {"ms": 30, "end": "failed"}),
                             ("job", {"ms": 30, "end": "input_required"}),
                             ("region", {"region": "eu", "query": "q"})]
        out = run_calls(url, calls, mode="2026-07-28")
        cancelled = run_calls(url, [("job", {"ms": 60_000})], mode="2026-07-28",
                              tasks=TasksClient(cancel_after=2))
    assert _texts(out.results) == ["task failed", "job done: ", "ran in eu: 1 characters"]
    assert _texts(cancelled.results) == ["task cancelled"]


def test_the_http_era_gates_refuse_the_other_era() -> None:
    with eras_http("--era", "legacy") as url:
        assert run_calls(url, [("echo", {"text": "x"})]).version == "2025-11-25"
    with eras_http("--era", "modern", "--json") as url:
        assert run_calls(url, [("echo", {"text": "x"})]).version == "2026-07-28"
        assert "2026-07-28" in refusal(url, mode="legacy")


def test_oauth_the_sdk_client_discovers_registers_and_calls_with_a_token() -> None:
    with eras_http("--oauth") as url:
        http = oauth_http_client(url)

        async def main() -> str:
            async with http, Client(streamable_http_client(url, http_client=http)) as client:
                result = await client.call_tool("echo", {"text": "authorised"})
            return str(result.content[0].text)  # type: ignore[union-attr]

        assert anyio.run(main) == "authorised"
        assert http.auth.context.current_tokens.access_token.startswith(TOKEN_PREFIX)
