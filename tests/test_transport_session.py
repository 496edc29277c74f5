"""The session layer over real fixture processes: handshake, catalog, classification, lifetime, budget."""

from __future__ import annotations

import os
import sys

import pytest

from mcpeval_nb.errors import TransportError, describe
from mcpeval_nb.testing.servers.transport_fault import CANARY
from mcpeval_nb.transport import Budget, McpSession, StdioTarget, jsonrpc
from mcpeval_nb.transport.stderr_tail import MAX_TAIL_LINE_CHARS, MAX_TAIL_LINES

from .transport_helpers import assert_gone, assert_reaped, child_pid, fixture_session


def test_handshake_records_the_negotiated_version_and_capabilities() -> None:
    with fixture_session("transport_fault") as session:
        result = session.initialize()
        assert session.protocol_version == "2025-06-18"
        assert session.server_capabilities == {"tools": {}}
        assert result["serverInfo"]["name"] == "transport-fault"


def test_catalog_lists_every_tool_once_in_listing_order() -> None:
    with fixture_session("transport_fault", "explode", "ok") as session:
        session.initialize()
        catalog = session.list_tools()
    assert catalog.names == ["ok", "slow", "crash", "explode"]
    assert catalog.pages == 1
    assert CANARY not in repr(catalog)


def test_tool_calls_are_classified_success_or_rpc_error() -> None:
    with fixture_session("transport_fault") as session:
        session.initialize()
        ok = session.call_tool("ok", {})
        unknown = session.call_tool("missing", {"secret": CANARY})
    assert (ok.kind, ok.code, ok.payload) == ("success", None, None)
    assert (unknown.kind, unknown.code) == ("rpc-error", -32602)
    assert unknown.payload is not None and unknown.payload["code"] == -32602
    assert CANARY not in repr(ok) + repr(unknown)


def test_a_timed_out_call_leaves_the_session_usable() -> None:
    with fixture_session("transport_fault") as session:
        session.initialize()
        with pytest.raises(TransportError) as info:
            session.call_tool("slow", {"ms": 400}, timeout=0.05)
        assert info.value.reason == "transport-timeout"
        assert session.ping().result == {}
        assert session.call_tool("ok", {}).ok


def test_a_crashing_tool_reports_transport_closed_and_the_child_is_reaped() -> None:
    session = fixture_session("transport_fault", "explode")
    pid = child_pid(session)
    session.initialize()
    with pytest.raises(TransportError) as info:
        session.call_tool("explode", {})
    assert (info.value.reason, str(info.value)) == ("transport-closed", jsonrpc.CLOSED)
    assert session.closed
    assert_reaped(pid)
    with pytest.raises(TransportError) as again:
        session.ping()
    assert again.value.reason == "transport-closed"


def test_close_terminates_and_reaps_the_child_and_its_process_group() -> None:
    session = fixture_session("resource_bounds", "grandchild")
    pids = session.request("tools/call", {"name": "x"}).result
    assert pids["pid"] == child_pid(session)
    session.close()
    session.close()
    assert_reaped(pids["pid"])
    assert_gone(pids["child"])


def test_server_stderr_is_drained_through_a_pipe() -> None:
    with fixture_session("resource_bounds", "pid") as session:
        pid = session.request("ping").result["pid"]
        assert os.readlink(f"/proc/{pid}/fd/2").startswith("pipe:")


def test_a_command_that_cannot_start_names_the_program_and_the_errno_but_not_its_directory() -> None:
    secret = f"/nonexistent/{CANARY}/server"
    with pytest.raises(TransportError) as info:
        McpSession.connect(StdioTarget((secret,)))
    assert info.value.reason == "transport-error"
    assert str(info.value) == f'{jsonrpc.SPAWN_FAILED} "server": No such file or directory (ENOENT)'
    assert CANARY not in describe(info.value)


def test_a_program_missing_from_path_says_so() -> None:
    with pytest.raises(TransportError) as info:
        McpSession.connect(StdioTarget(("mcpeval-no-such-program",)))
    assert str(info.value).endswith('"mcpeval-no-such-program": No such file or directory (ENOENT), '
                                    "not found on PATH")


def _crash(stderr: str, status: int = 1) -> TransportError:
    code = f"import sys; sys.stderr.write({stderr!r}); sys.stderr.flush(); sys.exit({status})"
    with pytest.raises(TransportError) as info, McpSession.connect(
            StdioTarget((sys.executable, "-c", code))) as session:
        session.initialize()
    return info.value


def test_a_server_that_exits_at_start_shows_its_status_and_last_stderr_lines() -> None:
    lines = "".join(f"line {i}\n" for i in range(20)) + "ModuleNotFoundError: No module named 'foo'\n"
    error = _crash(lines, status=4)
    assert (error.reason, str(error)) == ("transport-closed", jsonrpc.CLOSED)
    assert error.detail[0] == "the server exited with status 4; its last stderr lines:"
    assert error.detail[-1] == "| ModuleNotFoundError: No module named 'foo'"
    assert len(error.detail) == 1 + MAX_TAIL_LINES  # bounded: only the last lines
    assert describe(error).splitlines()[0] == jsonrpc.CLOSED


def test_stderr_lines_the_redaction_check_flags_are_withheld_and_long_lines_cut() -> None:
    error = _crash(f"user {CANARY}@example.com\nopen /home/{CANARY}/x\n{'x' * 5000}\n")
    text = describe(error)
    assert CANARY not in text
    assert "| [line withheld: email-like]" in text and "| [line withheld: home-path]" in text
    assert max(len(line) for line in text.splitlines()) < MAX_TAIL_LINE_CHARS + 10


def test_a_silent_crash_says_it_wrote_nothing() -> None:
    assert _crash("", status=2).detail == ("the server exited with status 2 and wrote nothing to stderr",)


def test_cancelled_call_unanswered_in_the_grace_period_returns_none_and_its_late_reply_is_dropped() -> None:
    with fixture_session("transport_fault") as session:
        session.initialize()
        pending = session.start_call("slow", {"ms": 300})
        assert session.cancel(pending, grace_seconds=0.05) is None
        assert session.ping(timeout=10.0).result == {}


def test_finish_waits_for_a_started_call() -> None:
    with fixture_session("transport_fault") as session:
        session.initialize()
        pending = session.start_call("slow", {"ms": 50})
        response = session.finish(pending)
    assert response.ok and response.result["content"][0]["type"] == "text"


def test_the_shared_budget_refuses_requests_past_its_count() -> None:
    budget = Budget(max_requests=3)
    with fixture_session("transport_fault", budget=budget) as session:
        session.initialize()
        session.ping()
        session.ping()
        with pytest.raises(TransportError) as info:
            session.ping()
    assert info.value.reason == "evaluation-budget-exceeded"
    assert budget.exhausted and budget.used == 3
    with pytest.raises(TransportError) as again:
        fixture_session("transport_fault", budget=budget)
    assert again.value.reason == "evaluation-budget-exceeded"


def test_the_budget_deadline_caps_a_response_wait_and_takes_precedence_over_the_timeout() -> None:
    budget = Budget(max_seconds=1.5)
    with fixture_session("transport_fault", budget=budget, timeout=30.0) as session:
        session.initialize()
        with pytest.raises(TransportError) as info:
            session.call_tool("slow", {"ms": 20_000})  # would succeed if the budget did not cap the wait
    assert info.value.reason == "evaluation-budget-exceeded"
