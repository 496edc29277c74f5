"""The correlator (SPEC 2.4-2.6): frames in, sanitisable call records out, in arrival order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpeval_nb import CallRecord, append_record, opaque_session, read_records
from mcpeval_nb.capture import Correlator, classify_frame
from mcpeval_nb.capture.pending import PendingTable
from mcpeval_nb.privacy import template_id

SALT = bytes(range(32))


def _frame(**msg: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **msg}).encode()


def _call(id_: Any, tool: str = "echo", **arguments: Any) -> bytes:
    return _frame(id=id_, method="tools/call", params={"name": tool, "arguments": arguments})


def _ok(id_: Any, result: Any = None) -> bytes:
    return _frame(id=id_, result={"content": []} if result is None else result)


def _corr() -> Correlator:
    return Correlator(server="demo", session="raw-session-CANARY", salt=SALT)


def test_a_matched_request_and_response_make_one_record() -> None:
    c = _corr()
    assert c.on_outbound(_call(1, "echo", text="CANARY-argument"), now_ms=1000, overhead_us=5) is None
    record = c.on_inbound(_ok(1), now_ms=1250, overhead_us=7)
    assert isinstance(record, CallRecord)
    assert (record.seq, record.method, record.tool, record.outcome, record.kind) == (
        1,
        "tools/call",
        "echo",
        "ok",
        "real",
    )
    assert record.args == {"text": "str<32"}
    assert record.latency_ms == 250
    assert record.shim_self_us == 12
    assert record.session == opaque_session("raw-session-CANARY")
    assert "CANARY" not in record.sanitized().encode()


def test_numeric_and_string_ids_never_collide() -> None:
    c = _corr()
    c.on_outbound(_call(7, "numeric"), now_ms=0)
    c.on_outbound(_call("7", "stringy"), now_ms=0)
    first = c.on_inbound(_ok("7"), now_ms=1)
    second = c.on_inbound(_ok(7), now_ms=1)
    assert first is not None and first.tool == "stringy"
    assert second is not None and second.tool == "numeric"
    assert c.on_inbound(_ok(7), now_ms=1) is None


def test_two_requests_in_flight_with_one_id_are_both_recorded_and_never_mixed() -> None:
    c = _corr()
    assert c.observe("outbound", classify_frame(_call(1, "first", a="x")), now_ms=0) == []
    (displaced,) = c.observe("outbound", classify_frame(_call(1, "second", b=2)), now_ms=10)
    assert (displaced.tool, displaced.args, displaced.outcome, displaced.latency_ms) == (
        "first", {"a": "str<8"}, "unknown", None)
    assert displaced.error == {"code": "capture-id-collision"}
    (answered,) = c.observe("inbound", classify_frame(_frame(id=1, error={"code": -1, "message": "m"})),
                            now_ms=15)
    assert (answered.tool, answered.args, answered.outcome, answered.latency_ms) == (
        "second", {"b": "num:2"}, "unknown", None)
    assert answered.error == {"code": "capture-id-collision"}  # not the first answer's error
    assert c.observe("inbound", classify_frame(_ok(1)), now_ms=20) == []
    assert [r.seq for r in (displaced, answered)] == [1, 2]


def test_pending_requests_are_bounded_by_count_and_the_oldest_is_recorded_as_unknown() -> None:
    table = PendingTable(max_entries=3, max_bytes=1 << 30)
    c = Correlator(server="demo", session="s", salt=SALT, pending=table)
    evicted = [r for i in range(5)
               for r in c.observe("outbound", classify_frame(_call(i, f"t{i}")), now_ms=i)]
    gone = {"code": "capture-pending-evicted"}
    assert [(r.tool, r.outcome, r.error) for r in evicted] == [("t0", "unknown", gone),
                                                              ("t1", "unknown", gone)]
    assert len(c.pending) == 3
    assert c.on_inbound(_ok(0), now_ms=9) is None  # evicted: its late answer matches nothing
    record = c.on_inbound(_ok(4), now_ms=9)
    assert record is not None and (record.tool, record.outcome, record.latency_ms) == ("t4", "ok", 5)


def test_pending_requests_are_bounded_by_bytes() -> None:
    table = PendingTable(max_entries=100, max_bytes=4096)
    c = Correlator(server="demo", session="s", salt=SALT, pending=table)
    wide = {f"key{i:04d}": i for i in range(200)}  # a shape of about 3 KB
    records = [r for i in range(4) for r in c.observe("outbound", classify_frame(_call(i, "w", **wide)))]
    assert [r.tool for r in records] == ["w", "w", "w"] and len(c.pending) == 1
    assert c.pending.bytes <= 4096 + 4096


def test_an_ended_http_exchange_records_its_unanswered_requests_and_forgets_them() -> None:
    c = _corr()
    c.on_outbound(_call(1, "gone"), scope="exchange-a", now_ms=0)
    c.on_outbound(_call(1, "kept"), scope="exchange-b", now_ms=0)
    (ended,) = c.end_scope("exchange-a")
    assert (ended.tool, ended.outcome, ended.error) == ("gone", "unknown", {"code": "capture-exchange-ended"})
    assert c.end_scope("exchange-a") == [] and len(c.pending) == 1
    assert c.on_inbound(_ok(1), scope="exchange-a") is None


def test_scopes_keep_equal_ids_apart() -> None:
    c = _corr()
    c.on_outbound(_call(1, "a"), scope="req-a", now_ms=0)
    c.on_outbound(_call(1, "b"), scope="req-b", now_ms=0)
    record = c.on_inbound(_ok(1), scope="req-b", now_ms=0)
    assert record is not None and record.tool == "b"
    assert c.on_inbound(_ok(1), now_ms=0) is None


def test_a_response_without_a_pending_request_is_not_recorded() -> None:
    c = _corr()
    assert c.on_inbound(_ok(99), now_ms=0) is None
    assert c.seq == 0


def test_latency_comes_from_now_ms_and_saturates_at_zero() -> None:
    c = _corr()
    c.on_outbound(_call(1), now_ms=5000)
    record = c.on_inbound(_ok(1), now_ms=4000)
    assert record is not None and record.latency_ms == 0


def test_enums_are_learned_from_tools_list_then_used_for_calls() -> None:
    c = _corr()
    c.on_outbound(_call(1, "navigate", waitUntil="networkIdle"), now_ms=0)
    before = c.on_inbound(_ok(1), now_ms=0)
    assert before is not None and before.args == {"waitUntil": "str<32"}
    c.on_outbound(_frame(id=2, method="tools/list", params={}), now_ms=0)
    schema = {"type": "object", "properties": {"waitUntil": {"enum": ["load", "networkIdle"]}}}
    listing = c.on_inbound(
        _ok(2, {"tools": [{"name": "navigate", "description": "CANARY", "inputSchema": schema}]}), now_ms=0
    )
    assert listing is not None and listing.method == "tools/list" and listing.tool is None
    assert listing.args is None
    c.on_outbound(_call(3, "navigate", waitUntil="networkIdle"), now_ms=0)
    after = c.on_inbound(_ok(3), now_ms=0)
    assert after is not None and after.args == {"waitUntil": "enum:networkIdle"}


def test_a_tools_list_result_for_another_method_teaches_nothing() -> None:
    c = _corr()
    c.on_outbound(_frame(id=1, method="resources/list"), now_ms=0)
    schema = {"properties": {"m": {"enum": ["x"]}}}
    c.on_inbound(_ok(1, {"tools": [{"name": "t", "inputSchema": schema}]}), now_ms=0)
    c.on_outbound(_call(2, "t", m="x"), now_ms=0)
    record = c.on_inbound(_ok(2), now_ms=0)
    assert record is not None and record.args == {"m": "str<8"}


def test_a_jsonrpc_error_response_is_an_error_with_templated_info() -> None:
    c = _corr()
    c.on_outbound(_call(1, "boom"), now_ms=0)
    message = "unknown tool 'CANARY' at /srv/CANARY"
    record = c.on_inbound(
        _frame(id=1, error={"code": -32602, "message": message, "data": "CANARY"}), now_ms=0
    )
    assert record is not None and record.outcome == "error"
    assert record.error == {
        "code": -32602,
        "template": "{message}",
        "template_id": template_id(SALT, message),
    }


def test_is_error_true_is_a_tool_error() -> None:
    c = _corr()
    c.on_outbound(_call(1, "boom"), now_ms=0)
    text = "CANARY failure 42"
    record = c.on_inbound(_ok(1, {"isError": True, "content": [{"type": "text", "text": text}]}), now_ms=0)
    assert record is not None and record.outcome == "error"
    assert record.error == {
        "code": "tool-error",
        "template": "{message}",
        "template_id": template_id(SALT, text),
    }


@pytest.mark.parametrize(
    ("flag", "outcome"), [(False, "ok"), ("true", "unknown"), (1, "unknown"), (None, "unknown")]
)
def test_is_error_other_than_true(flag: Any, outcome: str) -> None:
    c = _corr()
    c.on_outbound(_call(1), now_ms=0)
    record = c.on_inbound(_ok(1, {"isError": flag, "content": []}), now_ms=0)
    assert record is not None and record.outcome == outcome and record.error is None


def test_is_error_only_counts_for_tools_call() -> None:
    c = _corr()
    c.on_outbound(_frame(id=1, method="prompts/get", params={"name": "p"}), now_ms=0)
    record = c.on_inbound(_ok(1, {"isError": True}), now_ms=0)
    assert record is not None and record.outcome == "ok" and record.tool is None


def test_inbound_notifications_are_recorded_with_outcome_unknown_on_disk(root: Path) -> None:
    c = _corr()
    record = c.on_inbound(_frame(method="notifications/message", params={"data": "CANARY"}), overhead_us=9)
    assert record is not None
    assert (record.method, record.outcome, record.latency_ms, record.shim_self_us) == (
        "notifications/message",
        "notification",
        None,
        0,
    )
    path = append_record(root, record)
    (entry,) = read_records(path)
    assert entry.record.outcome == "unknown"
    assert b'"outcome":"unknown"' in path.read_bytes()
    assert b"CANARY" not in path.read_bytes()


def test_server_to_client_requests_are_ignored_and_leave_pending_untouched() -> None:
    c = _corr()
    c.on_outbound(_call(5, "slow"), now_ms=0)
    assert (
        c.on_inbound(_frame(id=5, method="sampling/createMessage", params={"x": "CANARY"}), now_ms=1) is None
    )
    assert c.on_outbound(_frame(id=5, result={"answer": "CANARY"})) is None
    record = c.on_inbound(_ok(5), now_ms=3)
    assert record is not None and record.tool == "slow" and record.seq == 1


def test_outbound_notifications_and_responses_are_not_recorded() -> None:
    c = _corr()
    assert c.on_outbound(_frame(method="notifications/initialized")) is None
    assert c.on_outbound(_frame(method="notifications/cancelled", params={"requestId": 1})) is None
    assert c.on_outbound(_frame(id=1, error={"code": 1, "message": "m"})) is None
    assert c.seq == 0
    assert c.on_inbound(_ok(1), now_ms=0) is None


def _nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


UNPARSED = [
    b"not json CANARY",
    b"",
    b"[1,2]",
    b'"CANARY"',
    json.dumps({"jsonrpc": "1.0", "id": 1, "method": "x"}).encode(),
    json.dumps({"id": 1, "method": "tools/call"}).encode(),
    _frame(id=1, method="bad method CANARY"),
    _frame(id=1, method="/bad"),
    _frame(id=1, method=7),
    _frame(id=1, method="x", result={}),
    _frame(id=None, method="x"),
    _frame(id=[1], method="x"),
    _frame(id=True, method="x"),
    _frame(id=1, method="x", params="CANARY"),
    _frame(id=1, method="x", params=None),
    _frame(id=1),
    _frame(id=1, result={}, error={"code": 1, "message": "m"}),
    _frame(result={}),
    _frame(id=None, result={}),
    _frame(id=1, error="CANARY"),
    _frame(id=1, error={"code": 1.5, "message": "m"}),
    _frame(id=1, error={"code": True, "message": "m"}),
    _frame(id=1, error={"code": 1}),
    _frame(id=1, error={"code": 1, "message": 2}),
    # 127 levels (object + params + 125 arrays) parse; this frame has 128 and is unparsed.
    _frame(id=1, method="tools/call", params={"arguments": _nested(126)}),
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"v":NaN}}',
]


@pytest.mark.parametrize("frame", UNPARSED)
def test_frames_that_are_not_valid_jsonrpc_are_unparsed(frame: bytes) -> None:
    assert classify_frame(frame) is None
    c = _corr()
    out = c.on_outbound(frame, overhead_us=3)
    inn = c.on_inbound(frame, overhead_us=4)
    assert out is not None and inn is not None
    assert out.to_dict() == {
        "ts": out.ts,
        "session": out.session,
        "seq": 1,
        "server": "demo",
        "method": "unparsed/outbound",
        "outcome": "unparsed",
        "shim_self_us": 3,
        "kind": "real",
    }
    assert (inn.seq, inn.method, inn.outcome, inn.shim_self_us) == (2, "unparsed/inbound", "unparsed", 4)
    assert "CANARY" not in out.encode() + inn.encode()


def test_nesting_of_127_levels_is_parsed() -> None:
    frame = _frame(id=1, method="tools/call", params={"name": "t", "arguments": _nested(125)})
    assert classify_frame(frame) is not None
    c = _corr()
    assert c.on_outbound(frame, now_ms=0) is None
    record = c.on_inbound(_ok(1), now_ms=0)
    assert record is not None and record.tool == "t"


@pytest.mark.parametrize(
    "frame",
    [
        _frame(id=1, method="tools/call", params=[1]),
        _frame(id="a", method="ping"),
        _frame(id=1.5, result=None),
        _frame(method="notifications/x"),
        _frame(id=0, error={"code": -1, "message": ""}),
    ],
)
def test_valid_jsonrpc_messages_are_classified(frame: bytes) -> None:
    assert classify_frame(frame) is not None
    assert classify_frame(frame.decode()) is not None


def test_seq_strictly_increases_in_arrival_order() -> None:
    c = _corr()
    c.on_outbound(_call(1), now_ms=0)
    c.on_outbound(_call(2), now_ms=0)
    seqs = []
    for record in [
        c.on_inbound(_ok(2), now_ms=0),
        c.on_inbound(b"junk"),
        c.on_outbound(b"junk"),
        c.on_inbound(_frame(method="notifications/progress")),
        c.on_inbound(_ok(1), now_ms=0),
    ]:
        assert record is not None
        seqs.append(record.seq)
    assert seqs == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("name", ["bad name CANARY", "a/b", "", "x" * 129, 7, None])
def test_a_tool_name_outside_the_grammar_is_recorded_as_unlisted(name: Any) -> None:
    c = _corr()
    c.on_outbound(_frame(id=1, method="tools/call", params={"name": name, "arguments": {}}), now_ms=0)
    record = c.on_inbound(_ok(1), now_ms=0)
    assert record is not None and record.tool == "unlisted"
    assert "CANARY" not in record.encode()


def test_a_grammar_valid_tool_is_kept_even_when_never_listed() -> None:
    c = _corr()
    c.on_outbound(_call(1, "never.listed:tool"), now_ms=0)
    record = c.on_inbound(_ok(1), now_ms=0)
    assert record is not None and record.tool == "never.listed:tool"


def test_requests_without_arguments_have_no_args() -> None:
    c = _corr()
    c.on_outbound(_frame(id=1, method="tools/call", params={"name": "t"}), now_ms=0)
    c.on_outbound(_frame(id=2, method="ping"), now_ms=0)
    first, second = c.on_inbound(_ok(1), now_ms=0), c.on_inbound(_ok(2), now_ms=0)
    assert first is not None and first.args is None
    assert second is not None and second.args is None and second.tool is None
    assert '"args"' not in first.encode()
