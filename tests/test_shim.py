"""The stdio recording shim, run as the real CLI between a test client and the echo fixture server."""

from __future__ import annotations

import json
from pathlib import Path

from mcpeval_nb.privacy.grammar import opaque_session
from mcpeval_nb.testing import server_command
from tests.shim_helpers import CANARY, call, journal, rpc, run, shim_argv, store_bytes


def test_frames_pass_byte_for_byte_in_both_directions(root: Path) -> None:
    frames = (rpc(1, "initialize", {"x": [1, 2.50, "é"]}) + b'{ "jsonrpc" : "2.0", "id":2, "method":"ping"}\n'
              + b"not json at all\n" + b"\n" + "{\"unicode\": \"\u00e9\u2603\"}\n".encode())
    direct = run(server_command("echo"), frames)
    shimmed = run(shim_argv(), frames)
    assert shimmed.returncode == 0
    assert shimmed.stdout == direct.stdout
    assert b"not json at all\n" in shimmed.stdout


def test_completed_calls_are_journaled_with_learned_enums_in_arrival_order(root: Path) -> None:
    listing = run(shim_argv(), rpc(1, "tools/list"))
    assert listing.returncode == 0
    # A second process learns the enum from its own tools/list; send the call after the listing.
    frames = rpc(1, "tools/list") + call(2, "navigate", waitUntil="networkIdle", url="https://a.example.co.uk/x",
                                         count=3)
    done = run(shim_argv(), frames)
    assert done.returncode == 0
    records = journal(root)
    assert [r["seq"] for r in records] == [1, 1, 2]
    assert len({r["session"] for r in records}) == 2
    last = records[-1]
    assert last["method"] == "tools/call" and last["tool"] == "navigate" and last["outcome"] == "ok"
    assert last["kind"] == "real" and last["server"] == "demo"
    assert last["args"]["url"] == "url:example.co.uk" and last["args"]["count"] == "num:3"
    assert last["args"]["waitUntil"] in ("enum:networkIdle", "str<32")  # enum only once the listing arrived
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
        proc.stdin.write(call(2, "navigate", waitUntil="networkIdle"))
        proc.stdin.close()
        assert proc.stdout.read() == b'{"jsonrpc": "2.0", "id": 2, "result": {"echo": true}}\n'
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait()
    assert journal(root)[-1]["args"] == {"waitUntil": "enum:networkIdle"}


def test_numeric_and_string_ids_never_collide(root: Path) -> None:
    frames = call(7, "navigate") + call("7", "boom")
    assert run(shim_argv(), frames).returncode == 0
    records = journal(root)
    assert [(r["tool"], r["outcome"]) for r in records] == [("navigate", "ok"), ("boom", "error")]
    assert records[1]["error"]["code"] == -32000 and records[1]["error"]["template"] == "{message}"


def test_tool_errors_notifications_and_unparsed_frames_are_recorded_content_free(root: Path) -> None:
    frames = (call(1, "tool_error", message=CANARY) + call(2, "notify", message=CANARY)
              + call(3, "banner", message=CANARY) + CANARY.encode() + b"\n")
    done = run(shim_argv(), frames)
    assert done.returncode == 0
    records = journal(root)
    summary = sorted((r["method"], r.get("tool", ""), r["outcome"]) for r in records)
    assert summary == [("notifications/message", "", "unknown"), ("tools/call", "banner", "ok"),
                       ("tools/call", "notify", "ok"), ("tools/call", "tool_error", "error"),
                       ("unparsed/inbound", "", "unparsed"), ("unparsed/inbound", "", "unparsed"),
                       ("unparsed/outbound", "", "unparsed")]
    assert [r["seq"] for r in records] == list(range(1, 8))
    methods = [r["method"] for r in records]
    assert methods.index("notifications/message") < [r.get("tool") for r in records].index("notify")
    failed = next(r for r in records if r.get("tool") == "tool_error")
    assert failed["error"]["code"] == "tool-error"
    note = next(r for r in records if r["method"] == "notifications/message")
    assert note["shim_self_us"] == 0 and "latency_ms" not in note
    for unparsed in (r for r in records if r["outcome"] == "unparsed"):
        assert set(unparsed) == {"ts", "session", "seq", "server", "method", "outcome", "shim_self_us",
                                 "kind"}
    assert CANARY.encode() not in store_bytes(root)
    assert CANARY.encode() not in done.stderr


def test_server_to_client_requests_are_not_recorded_and_keep_the_pending_call(root: Path) -> None:
    done = run(shim_argv(), call(5, "ask"))
    assert done.stdout.count(b'"id": 5') == 2
    records = journal(root)
    assert [(r["method"], r["tool"], r["outcome"]) for r in records] == [("tools/call", "ask", "ok")]


def test_the_session_is_the_opaque_token_of_mcpeval_session(root: Path) -> None:
    run(shim_argv(), call(1, "navigate"), env={"MCPEVAL_SESSION": CANARY})
    assert journal(root)[0]["session"] == opaque_session(CANARY)
    assert CANARY.encode() not in store_bytes(root)


def test_the_shim_exits_with_the_server_exit_code_and_passes_stderr_through(root: Path) -> None:
    done = run(shim_argv("--exit-code", "7"), b"")
    assert done.returncode == 7
    assert done.stderr == b"fixture stderr exact\n"
    assert journal(root) == [] or not (root / "store").exists()


def test_a_server_killed_by_a_signal_gives_128_plus_the_signal(root: Path) -> None:
    assert run(shim_argv("--signal", "TERM"), b"").returncode == 128 + 15
    assert run(shim_argv("--signal", "KILL"), b"").returncode == 128 + 9


def test_a_label_outside_the_grammar_refuses_to_start(root: Path) -> None:
    done = run(shim_argv(server="bad label"), call(1, "navigate"))
    assert done.returncode == 2
    assert done.stderr.decode().strip() == (
        "mcpeval-nb: server must be a 1-128 character label using only ASCII letters, digits, '.', '_', '-', "
        "or ':'")
    assert done.stdout == b""
    assert not root.exists()


def test_a_missing_server_command_is_a_transport_error(root: Path) -> None:
    import sys

    argv = [sys.executable, "-m", "mcpeval_nb", "shim", "--server", "demo", "--", str(root / "nope")]
    done = run(argv, b"")
    assert done.returncode == 3
    assert "cannot start the server command" in done.stderr.decode()


def test_records_are_valid_json_lines_one_per_completed_call(root: Path) -> None:
    frames = b"".join(call(i, "navigate", n=i) for i in range(1, 51))
    assert run(shim_argv(), frames).returncode == 0
    records = journal(root)
    assert [r["seq"] for r in records] == list(range(1, 51))
    assert all(r["args"] == {"n": f"num:{r['seq']}"} for r in records)
    assert all(json.dumps(r) for r in records)
