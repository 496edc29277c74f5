"""Catalog walking against the paged fixture server, and the SSE reader, budget and classification rules."""

from __future__ import annotations

import io

import pytest

from mcpeval_nb.errors import TransportError
from mcpeval_nb.transport import Budget, Response, RpcError
from mcpeval_nb.transport.classify import classify_tool_response, parse_response
from mcpeval_nb.transport.sse import SseReader

from .transport_helpers import fixture_session


def _catalog(mode: str) -> tuple[list[str], int]:
    with fixture_session("probe_paged", mode) as session:
        session.initialize()
        catalog = session.list_tools()
    return catalog.names, catalog.pages


def test_catalog_follows_cursors_across_pages() -> None:
    assert _catalog("clean") == (["alpha_read", "beta_status", "slow_read", "gamma_reset", "delta_slow"], 2)


def test_catalog_keeps_the_first_listing_of_a_repeated_name() -> None:
    names, _pages = _catalog("duplicate")
    assert names.count("alpha_read") == 1 and names[0] == "alpha_read"


def test_catalog_stops_after_twenty_pages_of_a_never_ending_cursor() -> None:
    assert _catalog("stalled")[1] == 20


def test_a_failing_page_after_the_first_ends_the_catalog() -> None:
    assert _catalog("page-error") == (["alpha_read", "beta_status", "slow_read"], 1)


def _events(raw: bytes, limit: int = 1 << 20) -> list[bytes]:
    return list(SseReader(io.BytesIO(raw), limit=limit))


def test_sse_reader_joins_data_lines_and_normalises_crlf() -> None:
    raw = b"data: {\"a\":\r\ndata: 1}\r\n\r\n: comment\n\nid: 7\ndata:x\n\n"
    assert _events(raw) == [b"{\"a\":\n1}", b"x"]


def test_sse_reader_skips_other_event_types_and_an_unterminated_last_event() -> None:
    raw = b"event: ping\ndata: skipped\n\nevent: message\ndata: kept\n\ndata: partial"
    assert _events(raw) == [b"kept"]


def test_sse_reader_refuses_a_stream_over_its_limit_without_quoting_it() -> None:
    raw = b"data: " + b"CANARY" * 100 + b"\n\n"
    with pytest.raises(TransportError) as info:
        _events(raw, limit=64)
    assert info.value.reason == "transport-error" and "CANARY" not in str(info.value)


def test_a_budget_with_zero_seconds_is_exhausted_at_once() -> None:
    budget = Budget(max_seconds=0)
    assert budget.exhausted
    with pytest.raises(TransportError) as info:
        budget.charge()
    assert info.value.reason == "evaluation-budget-exceeded"


def test_a_response_must_carry_exactly_one_of_result_and_error() -> None:
    for message in ({"jsonrpc": "2.0", "id": 1}, {"jsonrpc": "2.0", "id": 1, "result": 1, "error": {}}):
        with pytest.raises(TransportError):
            parse_response(message)
    with pytest.raises(TransportError):
        parse_response({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "CANARY"}})


def test_is_error_results_are_tool_errors_with_the_first_text_as_message() -> None:
    result = {"isError": True, "content": [{"type": "text", "text": "CANARY detail"}]}
    outcome = classify_tool_response(Response(result=result), latency_ms=3)
    assert (outcome.kind, outcome.code) == ("tool-error", -32000)
    assert outcome.payload == {"code": "tool-error", "message": "CANARY detail"}
    bare = classify_tool_response(Response(result={"isError": True}), latency_ms=0)
    assert bare.payload == {"code": "tool-error", "message": "tool error"}
    assert classify_tool_response(Response(result={"isError": "yes"}), latency_ms=0).kind == "success"


def test_rpc_errors_keep_their_code_and_whole_error_object() -> None:
    error = parse_response({"jsonrpc": "2.0", "id": 1,
                            "error": {"code": -32001, "message": "CANARY", "retryable": True}}).error
    assert isinstance(error, RpcError)
    outcome = classify_tool_response(Response(error=error), latency_ms=1)
    assert (outcome.kind, outcome.code, outcome.payload["retryable"]) == ("rpc-error", -32001, True)
    assert "CANARY" not in repr(outcome) + repr(error)
