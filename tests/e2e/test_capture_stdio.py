"""The official MCP SDK client through ``mcpeval-nb shim`` to real stdio servers (npm and SDK-written)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpeval_nb.privacy.grammar import opaque_session
from tests.e2e.capture_helpers import CANARY, run_stdio, sdk_demo_command, shim_cli, store_text
from tests.shim_helpers import journal

pytestmark = pytest.mark.e2e


def test_the_sdk_client_sees_server_everything_through_the_shim_exactly_as_directly(
        root: Path, everything_stdio: list[str]) -> None:
    calls = [("echo", {"message": CANARY}), ("get-sum", {"a": 2, "b": 40}), ("no-such-tool", {"x": CANARY})]
    direct = run_stdio(everything_stdio, calls, env={})
    assert not (root / "store").exists()
    shimmed = run_stdio(shim_cli("everything", everything_stdio), calls, env={"MCPEVAL_SESSION": CANARY})
    assert shimmed.results == direct.results
    assert CANARY in str(shimmed.results[2])  # the echo came back through the shim
    records = [r for r in journal(root) if not r["method"].startswith("notifications/")]
    assert [(r["method"], r.get("tool"), r["outcome"]) for r in records] == [
        ("initialize", None, "ok"), ("tools/list", None, "ok"), ("tools/call", "echo", "ok"),
        ("tools/call", "get-sum", "ok"), ("tools/call", "no-such-tool", "error")]
    assert records[2]["args"] == {"message": "str<32"}
    assert records[3]["args"] == {"a": "num:2", "b": "num:40"}
    assert records[4]["error"]["code"] == "tool-error"
    assert {r["session"] for r in journal(root)} == {opaque_session(CANARY)}
    assert [r["seq"] for r in journal(root)] == list(range(1, len(journal(root)) + 1))
    assert CANARY not in store_text(root)


def test_the_sdk_client_drives_an_mcpserver_through_the_shim_and_no_canary_reaches_the_store(
        root: Path) -> None:
    calls = [("navigate", {"url": f"https://{CANARY}.example.com/p", "waitUntil": "networkIdle"}),
             ("echo", {"text": CANARY}), ("fail", {"message": CANARY}), ("notify", {"message": CANARY})]
    direct = run_stdio(sdk_demo_command(), calls, env={})
    shimmed = run_stdio(shim_cli("sdk-demo", sdk_demo_command()), calls, env={"MCPEVAL_SESSION": CANARY})
    assert shimmed.results == direct.results
    assert shimmed.logs == direct.logs and CANARY in str(shimmed.logs)
    assert CANARY in str(shimmed.results[4])  # the error text reached the client
    records = journal(root)
    summary = [(r["method"], r.get("tool"), r["outcome"]) for r in records]
    assert summary == [("initialize", None, "ok"), ("tools/list", None, "ok"),
                       ("tools/call", "navigate", "ok"), ("tools/call", "echo", "ok"),
                       ("tools/call", "fail", "error"),
                       ("notifications/message", None, "unknown"), ("tools/call", "notify", "ok")]
    assert records[2]["args"] == {"url": "url:example.com", "waitUntil": "enum:networkIdle"}
    assert records[4]["error"]["code"] == "tool-error"
    assert all(r["kind"] == "real" and r["server"] == "sdk-demo" for r in records)
    assert CANARY not in store_text(root)
