"""The dual-era client against the official SDK's servers: negotiation, headers, rounds, tasks, mismatches."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mcpeval_nb.errors import ProtocolMismatch, UsageError
from mcpeval_nb.testing.servers._eras_readiness import CANARY_TASK
from mcpeval_nb.transport import HttpTarget, McpSession, Response, RpcError, Target
from mcpeval_nb.transport.era import check_protocol
from mcpeval_nb.transport.headers import encode_value, param_headers, request_headers
from mcpeval_nb.transport.negotiate import open_session

from .era_support import era_http, era_stdio

ALL_CAPS = {"elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}},
            "extensions": {"io.modelcontextprotocol/tasks": {}}}


@pytest.fixture(scope="module")
def http_targets() -> Iterator[dict[str, HttpTarget]]:
    with era_http("modern") as modern, era_http("dual") as dual, era_http("legacy") as legacy:
        yield {"modern": modern, "dual": dual, "legacy": legacy}


def _open(target: Target, protocol: str, caps: dict[str, Any] | None = None) -> McpSession:
    return open_session(lambda: McpSession.connect(target, timeout=120.0), protocol=protocol,
                        capabilities=caps)


def _stub(method: str, params: Any) -> Response:
    if method == "elicitation/create":
        return Response(result={"action": "accept"} if params.get("mode") == "url"
                        else {"action": "accept", "content": {"ok": True}})
    return Response(result={"role": "assistant", "content": {"type": "text", "text": "stub"},
                            "model": "stub", "stopReason": "endTurn"})


@pytest.mark.parametrize(("era", "protocol", "expected"), [
    ("modern", "auto", "modern"), ("modern", "2026-07-28", "modern"),
    ("dual", "auto", "modern"), ("dual", "2026-07-28", "modern"), ("dual", "legacy", "legacy"),
    ("legacy", "auto", "legacy"), ("legacy", "legacy", "legacy")])
def test_http_negotiation_picks_the_era_the_server_serves(http_targets: dict[str, HttpTarget], era: str,
                                                           protocol: str, expected: str) -> None:
    with _open(http_targets[era], protocol) as session:
        assert session.negotiated is not None and session.negotiated.era == expected
        catalog = session.list_tools()
        assert "describe_weather" in catalog.names
        assert session.call_tool("describe_weather", {"city": "Oslo"}).ok
        if expected == "modern":
            assert session.negotiated.version == "2026-07-28" and session.supported_versions


def test_a_legacy_client_against_a_modern_only_server_names_the_fix(
        http_targets: dict[str, HttpTarget]) -> None:
    with pytest.raises(ProtocolMismatch, match=r"requires protocol 2026-07-28; run with --protocol auto"):
        _open(http_targets["modern"], "legacy")


def test_a_modern_client_against_a_legacy_server_names_the_fix(http_targets: dict[str, HttpTarget]) -> None:
    with pytest.raises(ProtocolMismatch, match=r"does not serve protocol 2026-07-28.*--protocol auto"):
        _open(http_targets["legacy"], "2026-07-28")


def test_stdio_modern_only_server_is_probed_with_discover_and_refuses_the_handshake() -> None:
    with _open(era_stdio("modern"), "auto") as session:
        assert session.negotiated is not None and session.negotiated.modern
        assert session.call_tool("region_lookup", {"region": "eu-north-1"}).ok
    with pytest.raises(ProtocolMismatch, match="requires protocol 2026-07-28"):
        _open(era_stdio("modern"), "legacy")


def test_stdio_legacy_server_falls_back_to_the_handshake_and_refuses_modern() -> None:
    with _open(era_stdio("legacy"), "auto") as session:
        assert session.negotiated is not None and session.negotiated.era == "legacy"
        assert session.call_tool("describe_weather", {"city": "Lima"}).ok
    with pytest.raises(ProtocolMismatch, match="does not serve protocol 2026-07-28"):
        _open(era_stdio("legacy"), "2026-07-28")


def test_mcp_param_header_is_mirrored_and_accepted_by_the_sdk_server(
        http_targets: dict[str, HttpTarget]) -> None:
    # the SDK server answers a missing or mismatched Mcp-Param-Region with HTTP 400 / -32020
    with _open(http_targets["modern"], "2026-07-28") as session:
        session.list_tools()
        outcome = session.call_tool("region_lookup", {"region": "ünï code "})
        assert outcome.ok, outcome


def test_a_call_without_the_tools_header_declaration_is_refused_as_a_header_mismatch(
        http_targets: dict[str, HttpTarget]) -> None:
    with _open(http_targets["modern"], "2026-07-28") as session:  # no tools/list: no Mcp-Param-Region
        outcome = session.call_tool("region_lookup", {"region": "eu-west-1"})
        assert outcome.kind == "rpc-error" and outcome.code == -32020
        assert not session.closed


@pytest.mark.parametrize("tool", ["confirm_action", "open_portal", "ask_model"])
def test_input_required_rounds_are_answered_by_the_handler_and_retried(http_targets: dict[str, HttpTarget],
                                                                       tool: str) -> None:
    with _open(http_targets["modern"], "2026-07-28", ALL_CAPS) as session:
        session.list_tools()
        args = {"item": "x"} if tool == "confirm_action" else {}
        outcome = session.call_tool(tool, args, on_server_request=_stub)
        assert outcome.ok and outcome.server_requests == 1
        assert session.observed.input_rounds == 1 and session.observed.input_undeclared == 0


def test_a_declined_input_request_ends_the_operation_with_the_decline(
        http_targets: dict[str, HttpTarget]) -> None:
    with _open(http_targets["modern"], "2026-07-28", ALL_CAPS) as session:
        outcome = session.call_tool("confirm_action", {"item": "x"})  # default handler: -32601
        assert outcome.kind == "rpc-error" and outcome.code == -32601


def test_input_requests_count_against_the_server_request_bound(http_targets: dict[str, HttpTarget]) -> None:
    with _open(http_targets["modern"], "2026-07-28", ALL_CAPS) as session, \
            pytest.raises(Exception, match="more sub-requests than the declared bound"):
        session.call_tool("confirm_action", {"item": "x"}, on_server_request=_stub, max_server_requests=0)


def test_a_task_is_polled_to_its_result(http_targets: dict[str, HttpTarget]) -> None:
    with _open(http_targets["modern"], "2026-07-28", ALL_CAPS) as session:
        outcome = session.call_tool("job", {"ms": 200, "note": CANARY_TASK}, timeout=60.0)
        assert outcome.ok and CANARY_TASK in outcome.result["content"][0]["text"]
        assert session.observed.tasks == 1 and session.observed.tasks_finished == 1


def test_without_the_tasks_extension_the_same_tool_answers_synchronously(
        http_targets: dict[str, HttpTarget]) -> None:
    with _open(http_targets["modern"], "2026-07-28") as session:
        assert session.call_tool("job", {"ms": 1}).ok and session.observed.tasks == 0


def test_legacy_era_serves_url_elicitation_and_sampling_with_tools_as_server_requests() -> None:
    seen: list[tuple[str, tuple[str, ...]]] = []

    def handler(method: str, params: Any) -> Response:
        seen.append((method, tuple(sorted(params))))
        return _stub(method, params)

    with _open(era_stdio("dual"), "legacy", ALL_CAPS) as session:  # JSON-only HTTP cannot carry them
        assert session.call_tool("open_portal", {}, on_server_request=handler).ok
        assert session.call_tool("ask_model", {}, on_server_request=handler).ok
    assert seen[0] == ("elicitation/create", ("elicitationId", "message", "mode", "url"))
    assert seen[1][0] == "sampling/createMessage" and "tools" in seen[1][1] and "toolChoice" in seen[1][1]


def test_header_values_follow_the_encoding_rule() -> None:
    assert encode_value("us-west1") == "us-west1"
    assert encode_value("Hello, 世界") == "=?base64?SGVsbG8sIOS4lueVjA==?="
    assert encode_value(" padded ") == "=?base64?IHBhZGRlZCA=?="
    assert encode_value("=?base64?literal?=") == "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="


def test_header_declarations_are_checked_against_the_constraints() -> None:
    ok = {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Region"},
                                           "n": {"type": "object", "properties": {
                                               "b": {"type": "integer", "x-mcp-header": "Count"}}}}}
    assert param_headers(ok) == ((("a",), "Region"), (("n", "b"), "Count"))
    for bad in ({"type": "number", "x-mcp-header": "N"}, {"type": "string", "x-mcp-header": "a b"},
                {"type": "string", "x-mcp-header": ""}):
        assert param_headers({"type": "object", "properties": {"x": bad}}) is None
    dup = {"type": "object", "properties": {"x": {"type": "string", "x-mcp-header": "A"},
                                            "y": {"type": "string", "x-mcp-header": "a"}}}
    assert param_headers(dup) is None
    nested = {"type": "object", "properties": {"x": {"type": "array", "items": {
        "type": "string", "x-mcp-header": "A"}}}}
    assert param_headers(nested) is None


def test_request_headers_carry_method_name_and_params() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "lookup", "arguments": {"a": "x", "n": {"b": 7}, "flag": True}}}
    spec = ((("a",), "Region"), (("n", "b"), "Count"), (("flag",), "Flag"), (("missing",), "Gone"))
    headers = request_headers(message, version="2026-07-28", params=spec)
    assert headers == {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "lookup",
                       "Mcp-Param-Region": "x", "Mcp-Param-Count": "7", "Mcp-Param-Flag": "true"}
    task = request_headers({"method": "tasks/get", "params": {"taskId": "t-1"}}, version="2026-07-28")
    assert task["Mcp-Name"] == "t-1"


def test_protocol_choice_is_validated_without_echoing_the_value() -> None:
    assert check_protocol("auto") == "auto"
    with pytest.raises(UsageError) as caught:
        check_protocol("CANARY-proto")
    assert "CANARY" not in str(caught.value)


def test_rpc_error_repr_never_shows_server_text() -> None:
    assert "CANARY" not in repr(Response(error=RpcError(-32020, "CANARY header text")))


def test_subscriptions_listen_is_acknowledged_and_delivers_list_changes(
        http_targets: dict[str, HttpTarget]) -> None:
    with _open(http_targets["modern"], "2026-07-28") as session:
        subscription = session.listen({"toolsListChanged": True}, timeout=30.0)
        assert subscription is not None
        assert session.call_tool("touch", {}).ok

        def changed(note: dict[str, Any]) -> bool:
            return note.get("method") == "notifications/tools/list_changed" and subscription.tagged(note)

        import time
        assert subscription.wait(changed, deadline=time.monotonic() + 30.0) is not None
        subscription.close()
        assert session.call_tool("describe_weather", {"city": "Rome"}).ok  # the session is still usable
