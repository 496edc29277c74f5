"""Invariants of the privacy boundary and the journal, checked with hypothesis.

* no canary placed in arguments, error messages, error data, server labels, methods, tool names or
  sessions survives into an encoded record;
* ``sanitized()`` and ``sanitize_shape`` are idempotent;
* encode -> append -> read (the real journal reader) -> encode is byte-identical.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpeval_nb import CallRecord, append_record, read_records, sanitize_shape
from mcpeval_nb.capture import Correlator
from mcpeval_nb.journal import encode_line
from mcpeval_nb.journal.read import _read_raw_records
from mcpeval_nb.privacy import AnnotationRecord

MARK = "CANARY"
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        # keys are kept by shaping (SPEC 3): a generated key must not spell the marker by chance
        | st.dictionaries(st.text(max_size=6).filter(lambda k: MARK.lower() not in k.lower()), children,
                          max_size=4)
    ),
    max_leaves=16,
)

# A canary always carries a character outside every grammar (a space), so grammar-checked fields refuse it.
canaries = st.builds(lambda a, b: f"{a}{MARK} {b}", st.text(max_size=6), st.text(max_size=6))
canary_urls = st.builds(
    lambda sub, path: f"https://{MARK.lower()}{sub}.example.com/{MARK}{path}?q={MARK}",
    st.integers(min_value=0, max_value=999),
    st.text(alphabet="abc/", max_size=5),
)
canary_strings = canaries | canary_urls


def _plant(value: Any, canary: str, where: int) -> Any:
    """Put ``canary`` somewhere inside a JSON value (as a value, never as an object key)."""
    if isinstance(value, dict) and value:
        keys = sorted(value)
        key = keys[where % len(keys)]
        return {**value, key: _plant(value[key], canary, where // 2)}
    if isinstance(value, list) and value:
        # Only the first element is shaped; plant there so the test is not vacuous.
        return [_plant(value[0], canary, where // 2), *value[1:]]
    return canary


def _frame(**msg: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **msg}).encode()


@SETTINGS
@given(
    args=json_values,
    canary=canary_strings,
    where=st.integers(min_value=0, max_value=64),
    message=canaries,
    data=json_values,
    code=canaries | st.integers(),
    label=canaries,
    method=canaries,
    tool=canaries,
    session=canaries,
    enum_member=canaries,
    tool_text=canaries,
)
def test_no_canary_survives_into_an_encoded_record(
    args: Any,
    canary: str,
    where: int,
    message: str,
    data: Any,
    code: Any,
    label: str,
    method: str,
    tool: str,
    session: str,
    enum_member: str,
    tool_text: str,
) -> None:
    planted = _plant(args, canary, where)
    c = Correlator(server="demo", session=session, salt=bytes(32))
    records: list[CallRecord | None] = []
    schema = {"properties": {"k": {"enum": [enum_member]}}}
    records.append(c.on_outbound(_frame(id=0, method="tools/list")))
    records.append(
        c.on_inbound(
            _frame(id=0, result={"tools": [{"name": "t", "inputSchema": schema, "description": canary}]})
        )
    )
    records.append(
        c.on_outbound(_frame(id=1, method="tools/call", params={"name": "t", "arguments": planted}))
    )
    records.append(
        c.on_inbound(
            _frame(id=1, error={"code": 1, "message": message, "data": _plant(data, canary, where)}), now_ms=0
        )
    )
    records.append(
        c.on_outbound(
            _frame(id=2, method="tools/call", params={"name": tool, "arguments": {"k": enum_member}})
        )
    )
    records.append(
        c.on_inbound(_frame(id=2, result={"isError": True, "content": [{"type": "text", "text": tool_text}]}))
    )
    records.append(c.on_outbound(_frame(id=3, method=method)))
    records.append(c.on_inbound(_frame(method="notifications/message", params={"data": canary})))
    records.append(
        CallRecord(
            ts=message,
            session=session,
            seq=1,
            server=label,
            method=method,
            tool=tool,
            args=planted,
            outcome=canary,
            kind=canary,
            error={
                "code": code,
                "layer": canary,
                "kind": message,
                "template": message,
                "template_id": canary,
            },
        )
    )
    lines = [encode_line(r).decode() for r in records if r is not None]
    assert len(lines) >= 6
    for line in lines:
        assert MARK not in line
        # URL canaries sit in subdomains and paths: only the registrable domain may be kept.
        assert MARK.lower() not in line


@SETTINGS
@given(json_values)
def test_sanitize_shape_is_idempotent(value: Any) -> None:
    once = sanitize_shape(value)
    assert sanitize_shape(once) == once


records = st.builds(
    CallRecord,
    ts=st.sampled_from(["2026-08-04T12:00:00.250Z", "bad", "2026-02-30T00:00:00Z"]) | st.text(max_size=30),
    session=st.text(max_size=80),
    seq=st.integers(min_value=0, max_value=2**64 - 1),
    server=st.sampled_from(["demo", "a:b.c-d"]) | st.text(max_size=10),
    method=st.sampled_from(["tools/call", "unparsed/inbound", "a//b"]) | st.text(max_size=10),
    outcome=st.sampled_from(["ok", "error", "unparsed", "unknown", "notification"]) | st.text(max_size=5),
    shim_self_us=st.integers(min_value=0, max_value=2**64 - 1),
    kind=st.sampled_from(["real", "synthetic", "unparsed"]) | st.text(max_size=5),
    tool=st.none() | st.sampled_from(["echo", "unlisted"]) | st.text(max_size=10),
    args=st.none() | json_values,
    latency_ms=st.none() | st.integers(min_value=0, max_value=2**64 - 1),
    error=st.none()
    | st.fixed_dictionaries(
        {},
        optional={
            "code": json_values,
            "layer": st.text(max_size=10),
            "retryable": st.booleans(),
            "kind": st.text(max_size=10),
            "template": st.text(max_size=10),
            "template_id": st.sampled_from(["0123456789abcdef", "nope"]),
        },
    ),
)


@SETTINGS
@given(records)
def test_call_record_sanitized_is_idempotent(record: CallRecord) -> None:
    once = record.sanitized()
    assert once.sanitized() == once
    assert once.sanitized().encode() == once.encode()


annotations = st.builds(
    AnnotationRecord,
    ts=st.text(max_size=30) | st.just("2026-08-04T12:00:00.000Z"),
    session=st.text(max_size=20),
    kind=st.sampled_from(["workaround", "false-success"]) | st.text(max_size=8),
    note=st.text(max_size=300),
    seq=st.none() | st.integers(min_value=0, max_value=2**64 - 1),
)


@SETTINGS
@given(annotations)
def test_annotation_sanitized_is_idempotent(record: AnnotationRecord) -> None:
    once = record.sanitized()
    assert once.sanitized() == once


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(records, min_size=1, max_size=5))
def test_encode_append_read_encode_is_byte_identical(batch: list[CallRecord]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        written: dict[Path, list[bytes]] = {}
        for record in batch:
            path = append_record(root, record)
            written.setdefault(path, []).append(encode_line(record))
        for path, lines in written.items():
            assert path.read_bytes() == b"".join(lines)
            raw = [encode_line(e.record) for e in _read_raw_records(path)]
            clean = [encode_line(e.record) for e in read_records(path)]
            assert raw == lines
            assert clean == lines
