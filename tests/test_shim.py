"""The stdio recording shim between a test client and the echo fixture server (real pipes and processes).

Most tests run the shim in process (``run_shim`` on real pipes, the server a real child process); the CLI
is exercised where the process boundary is the behaviour (exit codes, the label refusal).
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from mcpeval_nb import TransportError
from mcpeval_nb.privacy.grammar import opaque_session
from tests import waiting
from tests.shim_helpers import CANARY, call, echo_argv, journal, rpc, run, shim_argv, shim_inproc, store_bytes


def test_frames_pass_byte_for_byte_in_both_directions_through_the_cli(root: Path) -> None:
    frames = (rpc(1, "initialize", {"x": [1, 2.50, "é"]}) + b'{ "jsonrpc" : "2.0", "id":2, "method":"ping"}\n'
              + b"not json at all\n" + b"\n" + "{\"unicode\": \"\u00e9\u2603\"}\n".encode())
    direct = run(echo_argv(), frames)
    shimmed = run(shim_argv(), frames)
    assert shimmed.returncode == 0
    assert shimmed.stdout == direct.stdout
    assert b"not json at all\n" in shimmed.stdout
    assert [r["method"] for r in journal(root)].count("unparsed/outbound") == 3


def test_completed_calls_are_journaled_in_arrival_order(root: Path) -> None:
    frames = rpc(1, "tools/list") + call(2, "navigate", waitUntil="networkIdle", url="https://a.example.co.uk/x",
                                         count=3)
    code, _ = shim_inproc(root, frames)
    assert code == 0
    records = journal(root)
    assert [(r["seq"], r["method"]) for r in records] == [(1, "tools/list"), (2, "tools/call")]
    last = records[-1]
    assert last["tool"] == "navigate" and last["outcome"] == "ok" and last["kind"] == "real"
    assert last["server"] == "demo"
    assert last["args"]["url"] == "url:example.co.uk" and last["args"]["count"] == "num:3"
    assert isinstance(last["latency_ms"], int) and isinstance(last["shim_self_us"], int)
    assert list(last) == ["ts", "session", "seq", "server", "method", "tool", "args", "latency_ms", "outcome",
                          "shim_self_us", "kind"]


def test_enum_members_are_kept_once_the_listing_has_been_answered(root: Path) -> None:
    import subprocess

    proc = subprocess.Popen(shim_argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(rpc(1, "tools/list"))
        proc.stdin.flush()
        assert b'"navigate"' in proc.stdout.readline()
        proc.stdin.write(call(2, "navigate", waitUntil="networkIdle", note=CANARY))
        proc.stdin.close()
        assert proc.stdout.read() == b'{"jsonrpc": "2.0", "id": 2, "result": {"echo": true}}\n'
        assert waiting.exited(proc, stall_s=60) == 0
    finally:
        proc.kill()
        proc.wait()
    assert journal(root)[-1]["args"] == {"note": "str<32", "waitUntil": "enum:networkIdle"}


def test_numeric_and_string_ids_never_collide(root: Path) -> None:
    assert shim_inproc(root, call(7, "navigate") + call("7", "boom"))[0] == 0
    records = journal(root)
    assert [(r["tool"], r["outcome"]) for r in records] == [("navigate", "ok"), ("boom", "error")]
    assert records[1]["error"]["code"] == -32000 and records[1]["error"]["template"] == "{message}"


def test_tool_errors_notifications_and_unparsed_frames_are_recorded_content_free(
        root: Path, capfd: pytest.CaptureFixture[str]) -> None:
    frames = (call(1, "tool_error", message=CANARY) + call(2, "notify", message=CANARY)
              + call(3, "banner", message=CANARY) + call(4, "rpc_error", message=CANARY)
              + CANARY.encode() + b"\n")
    code, output = shim_inproc(root, frames, session=CANARY)
    assert code == 0 and output.count(CANARY.encode()) == 5
    records = journal(root)
    summary = sorted((r["method"], r.get("tool", ""), r["outcome"]) for r in records)
    assert summary == [("notifications/message", "", "unknown"), ("tools/call", "banner", "ok"),
                       ("tools/call", "notify", "ok"), ("tools/call", "rpc_error", "error"),
                       ("tools/call", "tool_error", "error"), ("unparsed/inbound", "", "unparsed"),
                       ("unparsed/inbound", "", "unparsed"), ("unparsed/outbound", "", "unparsed")]
    assert [r["seq"] for r in records] == list(range(1, 9))
    tools = [r.get("tool") for r in records]
    assert [r["method"] for r in records].index("notifications/message") < tools.index("notify")
    assert next(r for r in records if r.get("tool") == "tool_error")["error"]["code"] == "tool-error"
    note = next(r for r in records if r["method"] == "notifications/message")
    assert note["shim_self_us"] == 0 and "latency_ms" not in note
    for unparsed in (r for r in records if r["outcome"] == "unparsed"):
        assert set(unparsed) == {"ts", "session", "seq", "server", "method", "outcome", "shim_self_us",
                                 "kind"}
    assert CANARY.encode() not in store_bytes(root)
    captured = capfd.readouterr()
    assert CANARY not in captured.out + captured.err


def test_server_to_client_requests_are_not_recorded_and_keep_the_pending_call(root: Path) -> None:
    _, output = shim_inproc(root, call(5, "ask"))
    assert output.count(b'"id": 5') == 2
    assert [(r["method"], r["tool"], r["outcome"]) for r in journal(root)] == [("tools/call", "ask", "ok")]


def test_the_session_is_the_opaque_token_of_mcpeval_session(root: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPEVAL_SESSION", CANARY)
    shim_inproc(root, call(1, "navigate"))
    assert journal(root)[0]["session"] == opaque_session(CANARY)
    assert CANARY.encode() not in store_bytes(root)


def test_without_mcpeval_session_each_run_gets_its_own_session(root: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCPEVAL_SESSION", raising=False)
    shim_inproc(root, call(1, "navigate"))
    shim_inproc(root, call(1, "navigate"))
    sessions = [r["session"] for r in journal(root)]
    assert len(set(sessions)) == 2 and all(s.startswith("session:") for s in sessions)


def test_the_shim_exits_with_the_server_exit_code_and_passes_stderr_through(
        root: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert shim_inproc(root, b"", "--exit-code", "7") == (7, b"")
    # The shim's one line naming its root (--root), then the server's stderr byte for byte.
    assert capfd.readouterr().err == f"mcpeval-nb shim: recording to {root} (--root)\nfixture stderr exact\n"
    assert journal(root) == [] or not (root / "store").exists()


def test_a_server_killed_by_a_signal_gives_128_plus_the_signal(root: Path) -> None:
    assert shim_inproc(root, b"", "--signal", "TERM")[0] == 128 + signal.SIGTERM
    assert shim_inproc(root, b"", "--signal", "KILL")[0] == 128 + signal.SIGKILL


def test_a_label_outside_the_grammar_refuses_to_start(root: Path) -> None:
    done = run(shim_argv(server="bad label"), call(1, "navigate"))
    assert done.returncode == 2
    assert done.stderr.decode().strip() == (
        "mcpeval-nb: server must be a 1-128 character label using only ASCII letters, digits, '.', '_', '-', "
        "or ':'")
    assert done.stdout == b""
    assert not root.exists()


def test_a_missing_server_command_is_a_transport_error(root: Path) -> None:
    with pytest.raises(TransportError, match="cannot start the server command"):
        shim_inproc(root, b"", command=[str(root / "nope")])


def test_many_calls_give_one_valid_record_each_in_order(root: Path) -> None:
    frames = b"".join(call(i, "navigate", n=i) for i in range(1, 201))
    assert shim_inproc(root, frames)[0] == 0
    records = journal(root)
    assert [r["seq"] for r in records] == list(range(1, 201))
    assert all(r["args"] == {"n": f"num:{r['seq']}"} for r in records)
    assert all(json.dumps(r) for r in records)
