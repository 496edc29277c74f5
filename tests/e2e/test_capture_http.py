"""The official MCP SDK Streamable HTTP client through ``mcpeval-nb shim-http`` to an MCPServer."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpeval_nb.privacy.grammar import opaque_session
from tests import waiting
from tests.e2e.capture_helpers import CANARY, run_http, sdk_demo_command, store_text
from tests.processes import first_line, listening, stop
from tests.shim_helpers import journal

pytestmark = pytest.mark.e2e


@pytest.fixture
def upstream_url() -> Iterator[str]:
    server = subprocess.Popen(sdk_demo_command("http"), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert server.stdout is not None
        yield listening(first_line(server.stdout))
    finally:
        stop(server)


def test_the_sdk_http_client_works_through_shim_http_and_no_canary_reaches_the_store(
        root: Path, upstream_url: str) -> None:
    calls = [("navigate", {"url": f"https://{CANARY}.example.com/", "waitUntil": "commit"}),
             ("echo", {"text": CANARY}), ("fail", {"message": CANARY}), ("notify", {"message": CANARY})]
    direct = run_http(upstream_url, calls)
    shim = subprocess.Popen([sys.executable, "-m", "mcpeval_nb", "shim-http", "--server", "sdk-demo",
                             "--listen", "127.0.0.1:0", "--upstream", upstream_url],
                            stderr=subprocess.PIPE, env={**os.environ, "MCPEVAL_SESSION": CANARY,
                                                         "MCPEVAL_HTTP_AUTHORIZATION": f"Bearer {CANARY}"})
    try:
        assert shim.stderr is not None
        announced = first_line(shim.stderr)
        assert announced.startswith("mcpeval-nb shim-http: listening on http://127.0.0.1:")
        shimmed = run_http(announced.rsplit(" ", 1)[1], calls)
        shim.send_signal(signal.SIGINT)
        assert waiting.exited(shim, stall_s=30) == 0
        rest = shim.stderr.read().decode()
    finally:
        shim.kill()
        shim.wait()
    assert shimmed.results == direct.results
    assert shimmed.logs == direct.logs and CANARY in str(shimmed.logs)
    records = [r for r in journal(root) if r["method"] != "notifications/message"]
    assert [(r["method"], r.get("tool"), r["outcome"]) for r in records] == [
        ("initialize", None, "ok"), ("tools/list", None, "ok"), ("tools/call", "navigate", "ok"),
        ("tools/call", "echo", "ok"), ("tools/call", "fail", "error"), ("tools/call", "notify", "ok")]
    assert records[2]["args"] == {"url": "url:example.com", "waitUntil": "enum:commit"}
    assert records[4]["error"]["code"] == "tool-error"
    assert any(r["method"] == "notifications/message" for r in journal(root))
    assert {r["session"] for r in journal(root)} == {opaque_session(CANARY)}
    assert CANARY not in store_text(root)
    assert CANARY not in announced + rest
