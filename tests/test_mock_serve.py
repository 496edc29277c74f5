"""The mock as a real process, driven by the official ``mcp`` SDK client in both protocol eras, on stdio and
on loopback Streamable HTTP: the recorded tools, outcomes with the recorded codes and templates, the same
answers for the same seed, serve's listener rules, and no recorded text anywhere."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import mcpeval_nb as me
from tests import waiting
from tests.mock_support import CANARY, SERVER, WIDE, address, call, mock_process, write_recorded
from tests.processes import cli_listening, killed_after, signal_a_worker_thread
from tests.serve_support import request, rpc


@pytest.fixture(scope="module")
def profile_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("mock-serve")
    write_recorded(base / "root", unknown=3)
    done = waiting.run([sys.executable, "-m", "mcpeval_nb", "mock", "--server", SERVER, "--root",
                           str(base / "root"), "--profile", str(base / "p.json")],
                       capture_output=True, text=True, stall_s=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote mock profile of {SERVER} (3 tools, 603 recorded calls)")
    return base / "p.json"


def _sdk(server: Any, mode: str, calls: int = 30) -> dict[str, Any]:
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    out: dict[str, Any] = {"answers": []}

    async def main() -> None:
        with anyio.fail_after(120):
            async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
                listed = await client.list_tools()
                out["tools"] = [(t.name, t.input_schema, t.description) for t in listed.tools]
                for i in range(calls):
                    name = WIDE[i % 3].name
                    try:
                        result = await client.call_tool(name, WIDE[i % 3].args[0])
                        out["answers"].append((name, "tool-error" if result.is_error else "ok",
                                               result.content[0].text[:40]))
                    except MCPError as exc:
                        out["answers"].append((name, "rpc-error", exc.error.code, str(exc)))
                try:
                    await client.call_tool("missing_tool", {})
                except MCPError as exc:
                    out["unknown"] = exc.error.code

    anyio.run(main)
    return out


def _stdio(profile_file: Path, *extra: str) -> Any:
    from mcp import StdioServerParameters

    return StdioServerParameters(command=sys.executable, env=dict(os.environ),
                                 args=["-m", "mcpeval_nb", "mock", "--from-profile", str(profile_file),
                                       "--speed", "1000", *extra])


def _check(out: dict[str, Any]) -> None:
    assert [name for name, *_ in out["tools"]] == ["lookup", "fetch", "ping_status"]
    for _name, schema, description in out["tools"]:
        assert schema["type"] == "object" and "Recorded-behaviour mock" in description
    assert {a[1] for a in out["answers"]} <= {"ok", "tool-error", "rpc-error"}
    assert out["unknown"] == -32602  # the recorded server's answer to unknown tools
    codes = {a[2] for a in out["answers"] if a[1] == "rpc-error"}
    assert codes <= {-32001, -32602}
    assert CANARY not in json.dumps(out, default=str)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28", "auto"])
def test_the_sdk_client_lists_and_calls_the_mock_on_stdio(profile_file: Path, mode: str) -> None:
    _check(_sdk(_stdio(profile_file), mode))


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28", "auto"])
def test_the_sdk_client_lists_and_calls_the_mock_over_http(profile_file: Path, mode: str) -> None:
    with mock_process("--from-profile", str(profile_file), "--speed", "1000") as url:
        _check(_sdk(url, mode))


def test_the_http_mock_stops_on_a_sigint_taken_by_a_worker_thread(profile_file: Path) -> None:
    """See ``test_signal_any_thread.py``: the signal wakes the accept loop whichever thread takes it."""
    proc, _port = cli_listening(["mock", "--from-profile", str(profile_file)])
    with killed_after(proc):
        signal_a_worker_thread(proc.pid, signal.SIGINT)
        assert waiting.exited(proc, stall_s=20) == 0


def test_the_same_seed_gives_the_same_answers_in_both_eras_and_transports(profile_file: Path) -> None:
    stdio = _sdk(_stdio(profile_file, "--seed", "5"), "legacy", calls=45)["answers"]
    assert _sdk(_stdio(profile_file, "--seed", "5"), "2026-07-28", calls=45)["answers"] == stdio
    with mock_process("--from-profile", str(profile_file), "--speed", "1000", "--seed", "5") as url:
        assert _sdk(url, "auto", calls=45)["answers"] == stdio
    assert _sdk(_stdio(profile_file, "--seed", "6"), "legacy", calls=45)["answers"] != stdio


def test_the_mock_serves_a_root_directly_with_the_same_answers_as_its_profile(profile_file: Path) -> None:
    root = profile_file.parent / "root"
    direct = _sdk(_stdio(profile_file), "legacy")["answers"]
    from mcp import StdioServerParameters

    server = StdioServerParameters(command=sys.executable, env=dict(os.environ),
                                   args=["-m", "mcpeval_nb", "mock", "--server", SERVER, "--root", str(root),
                                         "--speed", "1000"])
    assert _sdk(server, "legacy")["answers"] == direct


def test_the_http_mock_keeps_serves_host_origin_and_content_type_rules(profile_file: Path) -> None:
    with mock_process("--from-profile", str(profile_file)) as url:
        where = address(url)
        body = rpc("tools/list")
        assert request(where, body, headers={"Host": "evil.example"})[0] == 403
        assert request(where, body, headers={"Origin": "http://evil.example"})[0] == 403
        assert request(where, body, headers={"Content-Type": "text/plain"})[0] == 415
        assert request(where, body, method="GET")[0] == 405
        answer, _ = call(url, "fetch", {"id": "x", "mode": "fast"})
        assert answer["id"] == 1 and ("result" in answer or "error" in answer)


def test_bad_invocations_are_usage_errors_with_one_line(profile_file: Path) -> None:
    cases = [(["--from-profile", str(profile_file), "--server", SERVER], "--from-profile serves a profile"),
             ([], "--server LABEL or --from-profile FILE is required"),
             (["--from-profile", str(profile_file), "--speed", "0"], "--speed must be a positive number"),
             (["--from-profile", str(profile_file), "--listen", "0.0.0.0:0"], "must listen on a loopback"),
             (["--from-profile", str(profile_file.parent / "absent.json")], "cannot read")]
    for args, message in cases:
        done = waiting.run([sys.executable, "-m", "mcpeval_nb", "mock", *args], capture_output=True,
                           text=True, stall_s=120, stdin=subprocess.DEVNULL)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_serve_mock_is_the_in_process_server_for_tests(profile_file: Path) -> None:
    profile = me.load_profile(profile_file)
    with me.serve_mock(profile, speed=1000, seed=2) as mock:
        first = [call(mock.url, "lookup", {"q": "x"}, i)[0] for i in range(10)]
    with me.serve_mock(profile, speed=1000, seed=2) as mock:
        again = [call(mock.url, "lookup", {"q": "x"}, i)[0] for i in range(10)]
    assert first == again
