"""What a server under evaluation inherits, and where a shim started with a clean environment records."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from mcpeval_nb import StdioTarget
from mcpeval_nb.transport import McpSession
from tests import waiting
from tests.shim_helpers import CANARY, call, echo_argv, journal, shim_argv

SECRETS = {"MCPEVAL_HTTP_AUTHORIZATION": f"Bearer {CANARY}", "MCPEVAL_SESSION": CANARY}


def _environ_names(output: bytes) -> list[str]:
    answer = json.loads(output.splitlines()[-1])
    names: list[str] = json.loads(answer["result"]["content"][0]["text"])
    return names


def test_a_server_started_by_the_shim_does_not_inherit_the_secrets(root: Path) -> None:
    result = waiting.run(shim_argv(), input=call(1, "environ"), capture_output=True, stall_s=60,
                         env={**os.environ, **SECRETS})
    assert result.returncode == 0
    assert _environ_names(result.stdout) == ["MCPEVAL_HOME"]
    assert journal(root)[0]["tool"] == "environ"  # the shim itself still used the session


def test_a_server_started_by_the_probe_transport_does_not_inherit_the_secrets(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    with McpSession.connect(StdioTarget(tuple(echo_argv()))) as session:
        outcome = session.call_tool("environ", {})
    assert outcome.result is not None
    assert "MCPEVAL_HTTP_AUTHORIZATION" not in outcome.result["content"][0]["text"]
    assert "MCPEVAL_SESSION" not in outcome.result["content"][0]["text"]


def test_variables_the_caller_lays_over_the_environment_are_kept() -> None:
    with McpSession.connect(StdioTarget(tuple(echo_argv()), env={"MCPEVAL_SESSION": "explicit"})) as session:
        outcome = session.call_tool("environ", {})
    assert outcome.result is not None and "MCPEVAL_SESSION" in outcome.result["content"][0]["text"]


def _clean_env(home: Path) -> dict[str, str]:
    """What a client like the Inspector 2.x passes: a default environment and nothing of ours."""
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(home)}


def test_a_shim_started_with_a_clean_environment_says_where_it_records(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "mcpeval_nb", "shim", "--server", "demo", "--", *echo_argv()]
    result = waiting.run(argv, input=call(1, "navigate"), capture_output=True, stall_s=60,
                         env=_clean_env(tmp_path), cwd=Path(__file__).parents[1])
    assert result.returncode == 0
    default = tmp_path / ".mcp-eval"
    line = (f"mcpeval-nb shim: recording to {default} "
            "(MCPEVAL_HOME is not set; pass --root or -e MCPEVAL_HOME=...)")
    assert result.stderr.decode().splitlines().count(line) == 1
    assert journal(default)[0]["tool"] == "navigate"


def test_with_root_given_the_shim_names_that_root_and_with_mcpeval_home_it_says_nothing(
        tmp_path: Path, root: Path) -> None:
    chosen = tmp_path / "chosen"
    argv = [sys.executable, "-m", "mcpeval_nb", "shim", "--server", "demo", "--root", str(chosen), "--",
            *echo_argv()]
    result = waiting.run(argv, input=call(1, "navigate"), capture_output=True, stall_s=60,
                         env=_clean_env(tmp_path), cwd=Path(__file__).parents[1])
    assert f"mcpeval-nb shim: recording to {chosen} (--root)\n" in result.stderr.decode()
    assert "MCPEVAL_HOME is not set" not in result.stderr.decode()
    quiet = waiting.run(shim_argv(), input=call(1, "navigate"), capture_output=True, stall_s=60)
    assert b"recording to" not in quiet.stderr
