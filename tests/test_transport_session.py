"""The session layer over real fixture processes: handshake, catalog, classification, lifetime, budget."""

from __future__ import annotations

import os

import pytest

from mcpeval_nb.errors import TransportError
from mcpeval_nb.testing.servers.transport_fault import CANARY
from mcpeval_nb.transport import Budget, McpSession, StdioTarget, jsonrpc

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


def test_server_stderr_goes_to_dev_null() -> None:
    with fixture_session("resource_bounds", "pid") as session:
        pid = session.request("ping").result["pid"]
        assert os.readlink(f"/proc/{pid}/fd/2") == "/dev/null"


def test_a_command_that_cannot_start_is_a_transport_error_without_its_path() -> None:
    secret = f"/nonexistent/{CANARY}/server"
    with pytest.raises(TransportError) as info:
        McpSession.connect(StdioTarget((secret,)))
    assert (info.value.reason, str(info.value)) == ("transport-error", jsonrpc.SPAWN_FAILED)


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
