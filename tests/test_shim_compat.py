"""Byte compatibility with the reference found on real captures: error codes past i64, long numbers."""

from __future__ import annotations

from pathlib import Path

from tests.shim_helpers import CANARY, call, journal, shim_inproc, store_bytes


def test_an_error_code_outside_signed_64_bits_is_not_json_rpc_as_for_the_reference(root: Path) -> None:
    frames = (call(1, "rpc_error", code=18446744073709551615, message=CANARY)
              + call(2, "rpc_error", code=2**63, message=CANARY)
              + call(3, "rpc_error", code=-(2**63) - 1, message=CANARY)
              + call(4, "rpc_error", code=-(2**63), message=CANARY))
    code, output = shim_inproc(root, frames)
    assert code == 0 and output.count(b"\n") == 4
    records = journal(root)
    assert [(r["method"], r["outcome"]) for r in records] == [
        ("unparsed/inbound", "unparsed"), ("unparsed/inbound", "unparsed"), ("unparsed/inbound", "unparsed"),
        ("tools/call", "error")]
    assert records[-1]["error"]["code"] == -(2**63)
    assert CANARY.encode() not in store_bytes(root)


def test_numbers_past_a_doubles_precision_are_shaped_as_the_reference_shapes_them(root: Path) -> None:
    frame = (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reflect","arguments":'
             b'{"big":123456789012345678901234,"neg":-123456789012345678901234,'
             b'"tiny":2.2250738585072011e-308,"plain":0.1,"max":18446744073709551615}}}\n')
    code, _ = shim_inproc(root, frame)
    assert code == 0
    (record,) = journal(root)
    assert record["args"] == {"big": "num:1.2345678901234567e23", "neg": "num:-1.2345678901234567e23",
                              "tiny": "num:2.2250738585072014e-308", "plain": "num:0.1",
                              "max": "num:18446744073709551615"}


def test_two_in_flight_requests_with_one_id_are_both_recorded_and_never_mixed(root: Path) -> None:
    frames = (call(5, "navigate", waitUntil="commit") + call(5, "rpc_error", message=CANARY)
              + call(6, "navigate"))
    code, output = shim_inproc(root, frames)  # the echo fixture answers both id 5 requests
    assert code == 0 and output.count(b'"id": 5') == 2
    records = journal(root)
    assert [(r["tool"], r["outcome"], r.get("error"), "latency_ms" in r) for r in records] == [
        ("navigate", "unknown", {"code": "capture-id-collision"}, False),
        ("rpc_error", "unknown", {"code": "capture-id-collision"}, False),  # not the first answer's ok
        ("navigate", "ok", None, True)]
    assert records[0]["args"] == {"waitUntil": "str<8"} and records[1]["args"] == {"message": "str<32"}
