"""The 2026-07-28 revision in the correlator: one operation, one record (multi round-trip requests and
tasks), ``resultType``, per-request protocol versions, trace context and content-free flags, with the
legacy bytes unchanged and no opaque value (requestState, task ids, answers, URLs) ever kept."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpeval_nb.capture import Correlator, classify_frame
from mcpeval_nb.capture.operations import Operations
from mcpeval_nb.capture.wire import HttpFacts, traceparent
from mcpeval_nb.privacy.ext import ABANDONED, TASK_CANCELLED, sanitize_ext
from mcpeval_nb.privacy.records import CallRecord

SALT = bytes(range(32))
V = "2026-07-28"
TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN = "b7ad6b7169203331"
CANARY = "CANARY-op-5d1e"


def _meta(**extra: Any) -> dict[str, Any]:
    caps: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    return {"io.modelcontextprotocol/protocolVersion": V, "io.modelcontextprotocol/clientCapabilities": caps,
            **extra}


def _send(c: Correlator, direction: str, msg: dict[str, Any], now: int, **kw: Any) -> list[CallRecord]:
    frame = json.dumps({"jsonrpc": "2.0", **msg}).encode()
    return c.observe(direction, classify_frame(frame), now_ms=now, **kw)


def _call(c: Correlator, id_: Any, now: int, *, state: str | None = None, responses: Any = None,
          name: str = "ask", meta: dict[str, Any] | None = None, **arguments: Any) -> list[CallRecord]:
    params: dict[str, Any] = {"name": name, "arguments": arguments, "_meta": meta or _meta()}
    if state is not None:
        params["requestState"] = state
    if responses is not None:
        params["inputResponses"] = responses
    return _send(c, "outbound", {"id": id_, "method": "tools/call", "params": params}, now)


def _answer(c: Correlator, id_: Any, now: int, result: dict[str, Any]) -> list[CallRecord]:
    return _send(c, "inbound", {"id": id_, "result": result}, now)


def _ask(state: str | None, url: str | None = None) -> dict[str, Any]:
    params = {"mode": "url", "message": CANARY, "url": url} if url else {
        "mode": "form", "message": CANARY, "requestedSchema": {"type": "object"}}
    result: dict[str, Any] = {"resultType": "input_required",
                              "inputRequests": {"q": {"method": "elicitation/create", "params": params}}}
    if state is not None:
        result["requestState"] = state
    return result


DONE = {"resultType": "complete", "content": [{"type": "text", "text": CANARY}]}
ANSWERS = {"q": {"action": "accept", "content": {"answer": CANARY}}}


def _corr(**kw: Any) -> Correlator:
    return Correlator(server="demo", session="s", salt=SALT, **kw)


def _text(records: list[CallRecord]) -> str:
    return "\n".join(r.sanitized().encode() for r in records)


def test_a_three_round_operation_is_one_record_with_its_rounds_latency_and_wait() -> None:
    c = _corr()
    out = _call(c, 1, 1_000, query=CANARY) + _answer(c, 1, 1_200, _ask(f"{CANARY}-s1"))
    out += _call(c, 2, 3_200, state=f"{CANARY}-s1", responses=ANSWERS, query=CANARY)
    out += _answer(c, 2, 3_500, _ask(f"{CANARY}-s2"))
    out += _call(c, "3", 6_500, state=f"{CANARY}-s2", responses=ANSWERS, query=CANARY)
    out += _answer(c, "3", 6_600, DONE)
    (record,) = out
    assert (record.method, record.tool, record.outcome) == ("tools/call", "ask", "ok")
    assert record.latency_ms == 5_600
    assert record.args == {"query": "str<32"}
    assert record.ext == {"protocol": V, "request_id": "1", "rounds": 3, "wait_ms": 2_000 + 3_000,
                          "transport": "pipe"}
    assert len(c.operations) == 0 and len(c.pending) == 0
    assert CANARY not in _text(out)


@pytest.mark.parametrize(("retry_state", "issued", "flag"), [
    ("tampered", "issued", "state-changed"),
    (None, "issued", "state-dropped"),
    ("made-up", None, "state-invented"),
])
def test_a_retry_whose_state_was_changed_dropped_or_invented_is_flagged(
        retry_state: str | None, issued: str | None, flag: str) -> None:
    c = _corr()
    _call(c, 1, 0, item=CANARY)
    _answer(c, 1, 10, _ask(issued))
    out = _call(c, 2, 20, state=retry_state, responses=ANSWERS, item=CANARY)
    out += _send(c, "inbound", {"id": 2, "error": {"code": -32602, "message": f"bad state {CANARY}"}}, 30)
    (record,) = out
    assert record.outcome == "error" and record.error is not None and record.error["code"] == -32602
    assert record.ext is not None and record.ext["flags"] == [flag] and record.ext["rounds"] == 2
    assert CANARY not in _text(out)


def test_an_invented_state_with_no_operation_at_all_is_flagged_too() -> None:
    c = _corr()
    (record,) = _call(c, 1, 0, state="out of nowhere", responses=ANSWERS) + _answer(c, 1, 5, DONE)
    assert record.ext is not None and record.ext["flags"] == ["state-invented"] and "rounds" not in record.ext


def test_an_operation_the_client_never_finishes_is_abandoned_at_close_without_its_state() -> None:
    c = _corr()
    url = f"https://{CANARY}.io/x"
    assert _call(c, 1, 1_000, page=CANARY) + _answer(c, 1, 1_040, _ask(CANARY, url=url)) == []
    (record,) = c.close()
    assert (record.outcome, record.error, record.latency_ms) == ("unknown", {"code": ABANDONED}, 40)
    assert record.ext == {"protocol": V, "request_id": "1", "result_type": "input_required",
                          "transport": "pipe"}
    assert CANARY not in _text([record])


def test_waiting_operations_are_bounded_and_expire() -> None:
    c = _corr(operations=Operations(max_open=2, idle_ms=1_000))
    for n in range(3):
        _call(c, n, n, k=n)
        out = _answer(c, n, n + 1, _ask(f"s{n}"))
    assert [r.error for r in out] == [{"code": ABANDONED}]  # the third pushed the first out
    late = _send(c, "inbound", {"method": "notifications/message", "params": {}}, 5_000)
    assert [r.error for r in late[:2]] == [{"code": ABANDONED}] * 2
    assert late[2].method == "notifications/message"


def _job(c: Correlator, id_: Any, now: int) -> list[CallRecord]:
    out = _call(c, id_, now, name="job", ms=5, note=CANARY)
    handle = {"resultType": "task", "taskId": f"{CANARY}-task", "status": "working"}
    return out + _answer(c, id_, now + 2, handle)


def _poll(c: Correlator, id_: Any, now: int, view: dict[str, Any], method: str = "tasks/get",
          **params: Any) -> list[CallRecord]:
    out = _send(c, "outbound", {"id": id_, "method": method,
                                "params": {"taskId": f"{CANARY}-task", "_meta": _meta(), **params}}, now)
    return out + _answer(c, id_, now + 1, {"resultType": "complete", "taskId": f"{CANARY}-task", **view})


def test_a_task_is_one_operation_to_its_terminal_status_and_polling_is_not_a_call() -> None:
    c = _corr()
    out = _job(c, 1, 100) + _poll(c, 2, 120, {"status": "working"})
    out += _poll(c, 3, 140, {"status": "input_required", "inputRequests": {"go": {"method": "x"}}})
    out += _poll(c, 4, 400, {}, method="tasks/update", inputResponses={"go": {"answer": CANARY}})
    out += _poll(c, 5, 420, {"status": "completed", "result": {"content": [{"type": "text", "text": CANARY}],
                                                                "isError": True}})
    (record,) = out
    assert (record.method, record.tool, record.outcome) == ("tools/call", "job", "error")
    assert record.latency_ms == 321
    assert record.error is not None and record.error["code"] == "tool-error"
    assert record.ext == {"protocol": V, "polls": 4, "request_id": "1", "result_type": "task",
                          "task": "completed", "transport": "pipe", "wait_ms": 400 - 141}
    assert CANARY not in _text(out)


@pytest.mark.parametrize(("view", "outcome", "code"), [
    ({"status": "failed", "error": {"code": -32603, "message": CANARY}}, "error", -32603),
    ({"status": "cancelled"}, "unknown", TASK_CANCELLED),
])
def test_a_failed_or_cancelled_task_ends_its_operation(view: dict[str, Any], outcome: str, code: Any) -> None:
    c = _corr()
    method = "tasks/cancel" if view["status"] == "cancelled" else "tasks/get"
    (record,) = _job(c, 1, 0) + _poll(c, 2, 10, view, method=method)
    assert (record.outcome, record.error["code"] if record.error else None) == (outcome, code)
    assert record.ext is not None and record.ext["task"] == view["status"]


def test_a_task_never_polled_to_its_end_is_abandoned_and_a_poll_for_an_unknown_task_is_a_plain_call() -> None:
    c = _corr()
    assert _job(c, 1, 0) == []
    (plain,) = _send(c, "outbound", {"id": 9, "method": "tasks/get", "params": {"taskId": "other"}}, 5) + \
        _answer(c, 9, 6, {"status": "failed"})
    assert (plain.method, plain.outcome, plain.ext) == ("tasks/get", "ok", None)
    (abandoned,) = c.close()
    assert abandoned.error == {"code": ABANDONED} and abandoned.ext is not None
    assert (abandoned.ext["result_type"], abandoned.ext["task"]) == ("task", "working")


def test_a_legacy_call_has_no_ext_and_the_same_bytes_as_before() -> None:
    c = _corr()
    _send(c, "outbound", {"id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"t": "x"},
                                                                     "_meta": {"progressToken": 3}}}, 0)
    (record,) = _answer(c, 1, 7, {"content": []})
    assert record.ext is None
    tail = '"latency_ms":7,"outcome":"ok","shim_self_us":0,"kind":"real"}'
    assert record.sanitized().encode().endswith(tail)


def test_trace_context_is_kept_as_bounded_ids_and_baggage_and_tracestate_are_dropped() -> None:
    c = _corr()
    meta = _meta(traceparent=f"00-{TRACE}-{SPAN}-01", tracestate=f"v={CANARY}", baggage=f"user={CANARY}")
    (record,) = _call(c, 1, 0, name="echo", meta=meta) + _answer(c, 1, 1, DONE)
    assert record.ext is not None and (record.ext["trace_id"], record.ext["parent_span_id"]) == (TRACE, SPAN)
    assert CANARY not in _text([record])
    legacy = _corr()
    _send(legacy, "outbound", {"id": 1, "method": "ping", "params": {"_meta": {"traceparent":
                                                                              f"00-{TRACE}-{SPAN}-01"}}}, 0)
    (traced,) = _answer(legacy, 1, 1, {})
    assert traced.ext == {"trace_id": TRACE, "parent_span_id": SPAN, "request_id": "1", "transport": "pipe"}


@pytest.mark.parametrize("value", [
    f"00-{'0' * 32}-{SPAN}-01", f"00-{TRACE}-{'0' * 16}-01", f"ff-{TRACE}-{SPAN}-01",
    f"00-{TRACE}-{SPAN}-01-extra", f"00-{TRACE.upper()}-{SPAN}-01", CANARY, 7])
def test_an_invalid_traceparent_is_not_kept(value: Any) -> None:
    assert traceparent(value) is None


def test_the_http_header_trace_context_and_a_header_body_mismatch_are_recorded() -> None:
    c = _corr(transport="tcp", address="127.0.0.1", port=8931)
    http = HttpFacts(method="tools/call", name="other", traceparent=f"00-{TRACE}-{SPAN}-00")
    msg = {"id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {}, "_meta": _meta()}}
    _send(c, "outbound", msg, 0, http=http)
    (record,) = _send(c, "inbound", {"id": 1, "error": {"code": -32020, "message": "Header mismatch"}}, 3)
    assert record.ext == {"address": "127.0.0.1", "flags": ["header-mismatch"], "parent_span_id": SPAN,
                          "port": 8931, "protocol": V, "request_id": "1", "trace_id": TRACE,
                          "transport": "tcp"}


def test_result_types_and_a_bounded_protocol_version() -> None:
    c = _corr()
    _send(c, "outbound", {"id": 1, "method": "server/discover", "params": {"_meta": _meta()}}, 0)
    (discover,) = _answer(c, 1, 2, {"supportedVersions": [V]})
    assert (discover.method, discover.outcome, discover.ext) == (
        "server/discover", "ok", {"protocol": V, "request_id": "1", "transport": "pipe"})
    weird = _meta()
    weird["io.modelcontextprotocol/protocolVersion"] = CANARY
    (other,) = _call(c, 2, 0, name="x", meta=weird) + _answer(c, 2, 1, {"resultType": CANARY})
    assert (other.outcome, other.ext) == ("unknown", {"protocol": "invalid", "request_id": "2",
                                                      "result_type": "other", "transport": "pipe"})


def test_an_acknowledged_listen_ends_ok_when_its_stream_closes() -> None:
    c = _corr(transport="tcp")
    listen = {"id": 4, "method": "subscriptions/listen", "params": {"_meta": _meta(), "notifications": {}}}
    _send(c, "outbound", listen, 100, scope="x")
    ack = {"method": "notifications/subscriptions/acknowledged",
           "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 4}}}
    (note,) = _send(c, "inbound", ack, 110, scope="x")
    assert note.ext == {"protocol": V, "transport": "tcp"}
    (closed,) = c.end_scope("x", now_ms=5_100)
    assert (closed.method, closed.outcome, closed.latency_ms) == ("subscriptions/listen", "ok", 5_000)
    _send(c, "outbound", listen, 0, scope="y")
    (unacked,) = c.end_scope("y", now_ms=10)
    assert unacked.outcome == "unknown" and unacked.error == {"code": "capture-exchange-ended"}


def test_the_ext_read_rule_keeps_only_known_members_within_their_grammars() -> None:
    assert sanitize_ext({"rounds": 2, "wait_ms": -1, "flags": ["state-changed", CANARY, "state-changed"],
                         "trace_id": "0" * 32, "task": CANARY, "protocol": CANARY, CANARY: 1,
                         "address": f"{CANARY} x", "port": 70000}) == {
        "flags": ["state-changed"], "protocol": "invalid", "rounds": 2}
    assert sanitize_ext({"polls": True}) is None and sanitize_ext([1]) is None


@pytest.mark.parametrize(("msg_id", "kept"), [(7, "7"), ("req-7", "req-7"), (-3, "-3"), (1.5, None),
                                             (f"{CANARY} with spaces", None), ("x" * 65, None)])
def test_the_request_id_is_kept_only_within_its_grammar_and_a_prompt_name_beside_it(msg_id: Any,
                                                                                    kept: str | None) -> None:
    c = _corr()
    get = {"id": msg_id, "method": "prompts/get", "params": {"name": "greet", "_meta": _meta()}}
    _send(c, "outbound", get, 0)
    (record,) = _send(c, "inbound", {"id": msg_id, "result": {"messages": []}}, 1)
    assert record.ext is not None and record.ext.get("request_id") == kept and record.ext["prompt"] == "greet"
    assert CANARY not in _text([record])


def test_a_reader_of_specs_fields_only_loads_every_modern_record_as_a_valid_call(tmp_path: Any) -> None:
    from mcpeval_nb.testing.operations import operations_store

    operations_store(tmp_path / "r", operations=18, seed=1)
    lines = [line for p in sorted((tmp_path / "r" / "store").glob("calls-*.jsonl"))
             for line in p.read_text().splitlines()]
    spec_keys = {"identity", "ts", "session", "seq", "server", "method", "tool", "args", "latency_ms",
                 "outcome", "error", "shim_self_us", "kind"}
    assert any('"ext":' in line for line in lines)
    for line in lines:
        fields = json.loads(line)
        assert set(fields) <= spec_keys | {"ext"}
        spec_line = line.split(',"ext":', 1)[0] + ("}" if '"ext":' in line else "")
        spec = {k: v for k, v in fields.items() if k != "ext"}  # what SPEC's reader (serde) keeps
        record = CallRecord.from_dict(spec).sanitized()
        assert record.encode() == spec_line  # a valid, already sanitised SPEC record, byte for byte
        assert record.outcome in ("ok", "error", "unparsed", "unknown") and record.kind == "real"
