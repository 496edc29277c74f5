"""Record types and their byte-exact encoders (SPEC 2, 5, 7.1-7.2)."""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

import pytest

from mcpeval_nb.clock import day_of, now_ts, valid_rfc3339
from mcpeval_nb.errors import ProfileError
from mcpeval_nb.jsonfmt import loads
from mcpeval_nb.privacy import (
    AnnotationRecord,
    CallRecord,
    EnumIndex,
    Identity,
    MeasurementProfile,
    TrendPoint,
    error_info,
    sanitize_shape,
    shape,
)

SESSION = "session:bd717b467075e051242456dd00511c90a39afc62b1da71a80714c0fb3986cb4d"
SPEC_OK = (
    '{"ts":"2026-08-04T12:00:00.250Z","session":"'
    + SESSION
    + '","seq":2,"server":"demo","method":"tools/call",'
    '"tool":"navigate","args":{"count":"num:3","note":"str<8","waitUntil":"enum:networkIdle"},"latency_ms":250,'
    '"outcome":"ok","shim_self_us":41,"kind":"real"}'
)
SPEC_ERROR = (
    '{"ts":"2026-08-04T12:00:01.000Z","session":"'
    + SESSION
    + '","seq":3,"server":"demo","method":"tools/call",'
    '"tool":"boom","args":{},"latency_ms":10,"outcome":"error","error":{"code":-32000,"template":"{message}",'
    '"template_id":"eb5b81a70555da3b"},"shim_self_us":57,"kind":"real"}'
)
SPEC_UNPARSED = (
    '{"ts":"2026-08-04T12:00:02.000Z","session":"' + SESSION + '","seq":4,"server":"demo",'
    '"method":"unparsed/inbound","outcome":"unparsed","shim_self_us":12,"kind":"real"}'
)
SPEC_ANNOTATION = (
    '{"ts":"2026-08-04T12:00:00.000Z","session":"session:e8bc163c82eee18733288c7d4ac636db3a6deb013ef2d37b68322be20'
    'edc45cc","seq":7,"kind":"false-success","note":"click reported success, nothing changed"}'
)
CAP = "0be9b59c-1234-4abc-8def-0123456789ab"
EVT = "4c1f0000-1111-4222-8333-444455556666"


def test_spec_successful_call_record_byte_for_byte() -> None:
    enums = EnumIndex()
    enums.learn("navigate", {"properties": {"waitUntil": {"enum": ["load", "networkIdle"]}}})
    args = shape({"note": "hello", "waitUntil": "networkIdle", "count": 3}, "navigate", enums)
    record = CallRecord(
        ts="2026-08-04T12:00:00.250Z",
        session=SESSION,
        seq=2,
        server="demo",
        method="tools/call",
        tool="navigate",
        args=args,
        latency_ms=250,
        outcome="ok",
        shim_self_us=41,
        kind="real",
    )
    assert record.sanitized().encode() == SPEC_OK


def test_spec_error_call_record_byte_for_byte() -> None:
    message = {"jsonrpc": "2.0", "id": 3, "error": {"code": -32000, "message": f"session {CAP} gone"}}
    record = CallRecord(
        ts="2026-08-04T12:00:01.000Z",
        session=SESSION,
        seq=3,
        server="demo",
        method="tools/call",
        tool="boom",
        args=shape({}),
        latency_ms=10,
        outcome="error",
        error=error_info(message, bytes(32)),
        shim_self_us=57,
    )
    assert record.sanitized().encode() == SPEC_ERROR


def test_spec_unparsed_record_byte_for_byte() -> None:
    record = CallRecord(
        ts="2026-08-04T12:00:02.000Z",
        session=SESSION,
        seq=4,
        server="demo",
        method="unparsed/inbound",
        outcome="unparsed",
        shim_self_us=12,
    )
    assert record.sanitized().encode() == SPEC_UNPARSED


def test_spec_synthetic_probe_record_uses_sanitize_shape_of_raw_arguments() -> None:
    session = "session:" + hashlib.sha256(CAP.encode()).hexdigest()
    record = CallRecord(
        ts="2026-10-01T09:00:00.123Z",
        session=CAP,
        seq=1,
        server="demo",
        method="tools/call",
        tool="read_counter",
        args={"secret": "CANARY-manifest-argument", "limit": 5},
        latency_ms=3,
        outcome="ok",
        shim_self_us=0,
        kind="synthetic",
    )
    assert record.sanitized().encode() == (
        '{"ts":"2026-10-01T09:00:00.123Z","session":"' + session + '","seq":1,"server":"demo",'
        '"method":"tools/call","tool":"read_counter","args":{"limit":"num:5","secret":"str<32"},"latency_ms":3,'
        '"outcome":"ok","shim_self_us":0,"kind":"synthetic"}'
    )


@pytest.mark.parametrize("line", [SPEC_OK, SPEC_ERROR, SPEC_UNPARSED])
def test_spec_records_decode_and_reencode_byte_for_byte(line: str) -> None:
    record = CallRecord.from_dict(loads(line))
    assert record.encode() == line
    assert record.sanitized().encode() == line
    assert record.day == "2026-08-04"


def test_spec_annotation_byte_for_byte_with_session_hashed() -> None:
    record = AnnotationRecord(
        ts="2026-08-04T12:00:00.000Z",
        session="s1",
        seq=7,
        kind="false-success",
        note="click reported success, nothing changed",
    )
    assert record.sanitized().encode() == SPEC_ANNOTATION
    assert AnnotationRecord.from_dict(loads(SPEC_ANNOTATION)).sanitized().encode() == SPEC_ANNOTATION


def test_call_record_sanitisation_applies_every_rule() -> None:
    record = CallRecord(
        ts="yesterday CANARY",
        session="raw-CANARY",
        seq=1,
        server="bad server",
        method="not a method",
        tool="bad/tool",
        args={"k": "CANARY value", "n": [True]},
        outcome="notification",
        kind="CANARY",
        error={"code": "CANARY code", "template": "CANARY", "template_id": "x"},
    )
    clean = record.sanitized()
    assert clean.ts == "unknown" and clean.day == "unknown"
    assert clean.session == "session:" + hashlib.sha256(b"raw-CANARY").hexdigest()
    assert clean.server == "invalid"
    assert clean.method == "unparsed/metadata"
    assert clean.tool is None
    assert clean.args == {"k": "str<32", "n": {"array": 1, "items": "bool:true"}}
    assert clean.outcome == "unknown"
    assert clean.kind == "unparsed"
    assert clean.error == {"code": "str<32", "template": "{message}"}
    assert "CANARY" not in clean.encode()
    assert clean.sanitized() == clean


@pytest.mark.parametrize("outcome", ["ok", "error", "unparsed", "unknown"])
def test_allowed_outcomes_are_kept(outcome: str) -> None:
    assert CallRecord(
        ts="x", session="s", seq=1, server="s", method="m", outcome=outcome
    ).sanitized().outcome == (outcome)


@pytest.mark.parametrize("kind", ["real", "synthetic", "unparsed"])
def test_allowed_kinds_are_kept(kind: str) -> None:
    record = CallRecord(ts="x", session="s", seq=1, server="s", method="m", outcome="ok", kind=kind)
    assert record.sanitized().kind == kind


def test_args_are_written_with_sorted_keys_at_every_depth() -> None:
    record = CallRecord(
        ts="2026-01-01T00:00:00.000Z",
        session=SESSION,
        seq=1,
        server="s",
        method="m",
        outcome="ok",
        args={"b": {"z": 1, "a": 2}, "a": 1},
    )
    assert '"args":{"a":"num:1","b":{"a":"num:2","z":"num:1"}}' in record.sanitized().encode()


def test_absent_optionals_are_omitted_and_present_ones_keep_struct_order() -> None:
    record = CallRecord(
        ts="2026-01-01T00:00:00.000Z",
        session=SESSION,
        seq=9,
        server="s",
        method="m",
        outcome="ok",
        args={},
        latency_ms=0,
        error={},
        tool="t",
    )
    keys = list(loads(record.sanitized().encode()))
    assert keys == [
        "ts",
        "session",
        "seq",
        "server",
        "method",
        "tool",
        "args",
        "latency_ms",
        "outcome",
        "error",
        "shim_self_us",
        "kind",
    ]


def test_identity_nested_form_is_read() -> None:
    d = loads(SPEC_OK)
    d = {"identity": {"capture_id": CAP, "event_id": EVT.upper()}, **d}
    record = CallRecord.from_dict(d)
    assert record.identity == Identity(CAP, EVT)


def test_identity_flattened_form_is_read_too_because_spec_marks_the_form_unverified() -> None:
    d = {"capture_id": CAP.upper(), "event_id": EVT, **loads(SPEC_OK)}
    assert CallRecord.from_dict(d).identity == Identity(CAP, EVT)


def test_identity_is_written_nested_as_the_first_key_our_chosen_reading() -> None:
    record = CallRecord.from_dict({"identity": {"capture_id": CAP, "event_id": EVT}, **loads(SPEC_OK)})
    assert record.sanitized().encode() == (
        '{"identity":{"capture_id":"' + CAP + '","event_id":"' + EVT + '"},' + SPEC_OK[1:]
    )


def test_legacy_records_have_no_identity() -> None:
    record = CallRecord.from_dict(loads(SPEC_OK))
    assert record.identity is None
    assert "identity" not in record.encode()
    assert CallRecord.from_dict({"identity": None, **loads(SPEC_OK)}).identity is None


@pytest.mark.parametrize(
    "identity",
    [
        {"capture_id": "CANARY", "event_id": EVT},
        {"capture_id": CAP},
        "CANARY",
        [CAP, EVT],
        {"capture_id": CAP, "event_id": 5},
    ],
)
def test_malformed_identity_is_refused(identity: Any) -> None:
    with pytest.raises(ValueError) as info:
        CallRecord.from_dict({"identity": identity, **loads(SPEC_OK)})
    assert "CANARY" not in str(info.value)


@pytest.mark.parametrize(
    "change",
    [
        {"seq": -1},
        {"seq": "1"},
        {"seq": True},
        {"seq": 1.5},
        {"seq": 2**64},
        {"ts": 5},
        {"session": None},
        {"latency_ms": -3},
        {"outcome": 1},
        {"error": "CANARY"},
        {"error": {"layer": 1}},
        {"tool": 7},
        {"shim_self_us": "0"},
        {"kind": None},
    ],
)
def test_wrong_json_types_are_refused_like_serde(change: dict[str, Any]) -> None:
    d = {**loads(SPEC_ERROR), **change}
    with pytest.raises(ValueError) as info:
        CallRecord.from_dict(d)
    assert "CANARY" not in str(info.value)


@pytest.mark.parametrize(
    "missing", ["ts", "session", "seq", "server", "method", "outcome", "shim_self_us", "kind"]
)
def test_required_fields_must_be_present(missing: str) -> None:
    d = loads(SPEC_UNPARSED)
    del d[missing]
    with pytest.raises(ValueError, match=missing):
        CallRecord.from_dict(d)


def test_null_optional_fields_read_as_absent() -> None:
    d = {**loads(SPEC_UNPARSED), "tool": None, "args": None, "latency_ms": None, "error": None}
    assert CallRecord.from_dict(d).encode() == SPEC_UNPARSED


def test_non_object_lines_are_refused() -> None:
    for value in ([], "x", 1, None):
        with pytest.raises(ValueError):
            CallRecord.from_dict(value)
        with pytest.raises(ValueError):
            AnnotationRecord.from_dict(value)
        with pytest.raises(ValueError):
            TrendPoint.from_dict(value)


# --- timestamps ---------------------------------------------------------------------------------------------


def test_now_ts_has_exactly_three_fractional_digits_and_z() -> None:
    assert now_ts(dt.datetime(2026, 8, 4, 12, 0, 0, 250999, tzinfo=dt.UTC)) == "2026-08-04T12:00:00.250Z"
    east = dt.timezone(dt.timedelta(hours=2))
    assert now_ts(dt.datetime(2026, 8, 4, 1, 0, 0, tzinfo=east)) == "2026-08-03T23:00:00.000Z"
    assert valid_rfc3339(now_ts())


@pytest.mark.parametrize(
    "ts",
    [
        "2026-08-04T12:00:00.250Z",
        "2026-08-04T12:00:00Z",
        "2026-08-04t12:00:00z",
        "2026-08-04T12:00:00+02:00",
        "2026-08-04T12:00:00.123456789-05:30",
        "2024-02-29T00:00:00Z",
        "2026-12-31T23:59:60Z",
    ],
)
def test_rfc3339_timestamps_are_accepted(ts: str) -> None:
    assert valid_rfc3339(ts)


@pytest.mark.parametrize(
    "ts",
    [
        "",
        "unknown",
        "2026-08-04",
        "2026-08-04T12:00:00",
        "2026-13-01T00:00:00Z",
        "2025-02-29T00:00:00Z",
        "2026-08-04T24:00:00Z",
        "2026-08-04T12:60:00Z",
        "2026-08-04T12:00:00.Z",
        "2026-08-04T12:00:00+2:00",
        "2026-08-04T12:00:00+24:00",
        "../../etc/passwdZ",
        " 2026-08-04T12:00:00Z",
        "٢٠٢٦-08-04T12:00:00Z",
        "2026-08-04T12:00:00.١Z",
    ],
)
def test_non_rfc3339_timestamps_are_refused(ts: str) -> None:
    assert not valid_rfc3339(ts)


def test_day_of_uses_the_first_ten_bytes_or_unknown() -> None:
    assert day_of("2026-08-04T12:00:00.250Z") == "2026-08-04"
    assert day_of("unknown") == "unknown"
    assert day_of("../../../x") == "unknown"
    assert day_of("٢٠٢٦-08-04T12:00:00Z") == "unknown"


# --- annotations --------------------------------------------------------------------------------------------


def test_annotation_sanitisation_strips_controls_caps_note_and_coerces_kind() -> None:
    note = "a\nb\x00c\x7fd\x85" + "é" * 300
    record = AnnotationRecord(ts="2026-08-04T12:00:00.000Z", session="s1", seq=1, kind="CANARY", note=note)
    clean = record.sanitized()
    assert clean.kind == "invalid"
    assert clean.note == "abcd" + "é" * 236
    assert len(clean.note) == 240
    assert clean.sanitized() == clean


def test_annotation_key_order_and_optional_event_id() -> None:
    record = AnnotationRecord(
        ts="2026-08-04T12:00:00.000Z", session="s1", seq=1, kind="workaround", note="n", event_id=EVT.upper()
    )
    assert list(loads(record.sanitized().encode())) == ["ts", "session", "seq", "event_id", "kind", "note"]
    assert record.sanitized().event_id == EVT
    no_seq = AnnotationRecord(ts="2026-08-04T12:00:00.000Z", session="s1", kind="workaround", event_id=EVT)
    assert list(no_seq.sanitized().to_dict()) == ["ts", "session", "event_id", "kind", "note"]
    assert (
        AnnotationRecord(ts="t", session="s", kind="workaround", event_id="CANARY").sanitized().event_id
        is None
    )


def test_annotations_are_read_with_seq_or_event_id_because_the_newer_form_is_unverified() -> None:
    legacy = AnnotationRecord.from_dict(loads(SPEC_ANNOTATION))
    assert (legacy.seq, legacy.event_id) == (7, None)
    newer = AnnotationRecord.from_dict(
        {"ts": "2026-08-04T12:00:00.000Z", "session": "s1", "event_id": EVT, "kind": "workaround", "note": ""}
    )
    assert (newer.seq, newer.event_id) == (None, EVT)
    both = AnnotationRecord.from_dict({**loads(SPEC_ANNOTATION), "event_id": EVT})
    assert (both.seq, both.event_id) == (7, EVT)


def test_annotation_day_comes_from_its_timestamp() -> None:
    assert AnnotationRecord(ts="2026-08-04T12:00:00.000Z", session="s", kind="workaround").day == "2026-08-04"


# --- trend points and measurement profiles ----------------------------------------------------------------

PROFILE = {
    "schema": "mcpeval.measurement-profile/v1",
    "evaluator_version": "0.4.0",
    "platform": "linux",
    "architecture": "x86_64",
    "client_capabilities": "none",
    "attested_read_only": False,
    "skip_tools": [],
    "call_timeout_ms": 15000,
    "repeats": 3,
}
SHA = "0524c76b" + "0" * 56
SPEC_TREND = (
    '{"ts":"2026-09-30T18:03:04.761Z","server":"demo","passed":true,"cases_total":1,"cases_passed":1,"score":91,'
    '"manifest_sha256":"' + SHA + '","standard":"mcpeval-standard/2","measurement_profile":{"schema":'
    '"mcpeval.measurement-profile/v1","evaluator_version":"0.4.0","platform":"linux","architecture":"x86_64",'
    '"client_capabilities":"none","attested_read_only":false,"skip_tools":[],"call_timeout_ms":15000,"repeats":3}}'
)


def test_spec_trend_point_byte_for_byte() -> None:
    point = TrendPoint(
        ts="2026-09-30T18:03:04.761Z",
        server="demo",
        passed=True,
        cases_total=1,
        cases_passed=1,
        score=91,
        manifest_sha256=SHA,
        standard="mcpeval-standard/2",
        measurement_profile=MeasurementProfile(
            evaluator_version="0.4.0", platform="linux", architecture="x86_64"
        ),
    )
    assert point.sanitized().encode() == SPEC_TREND
    assert TrendPoint.from_dict(loads(SPEC_TREND)).sanitized().encode() == SPEC_TREND


def test_older_trend_lines_without_optional_fields_load() -> None:
    line = (
        '{"ts":"2025-01-01T00:00:00.000Z","server":"demo","passed":false,"cases_total":4,"cases_passed":2,'
        '"score":50}'
    )
    point = TrendPoint.from_dict(loads(line))
    assert point.standard is None and point.measurement_profile is None
    assert point.sanitized().encode() == line


def test_trend_point_sanitisation_drops_bad_hashes_and_labels() -> None:
    point = TrendPoint(
        ts="CANARY",
        server="bad server",
        passed=True,
        cases_total=1,
        cases_passed=1,
        score=1,
        manifest_sha256="CANARY",
        standard="CANARY standard",
    ).sanitized()
    assert (point.ts, point.server, point.manifest_sha256, point.standard) == (
        "unknown",
        "invalid",
        None,
        None,
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"schema": "mcpeval.measurement-profile/v2"}, "unsupported measurement profile"),
        ({"extra": 1}, "unsupported measurement profile"),
        ({"evaluator_version": "0.4"}, "invalid measurement evaluator version"),
        ({"evaluator_version": "1.2.3-" + "a" * 60}, "invalid measurement evaluator version"),
        ({"platform": "1linux"}, "invalid measurement conditions"),
        ({"architecture": ""}, "invalid measurement conditions"),
        ({"client_capabilities": "sampling"}, "invalid measurement conditions"),
        ({"call_timeout_ms": 0}, "invalid measurement conditions"),
        ({"repeats": 0}, "invalid measurement conditions"),
        ({"attested_read_only": "yes"}, "invalid measurement conditions"),
        ({"skip_tools": ["b", "a"]}, "invalid measurement skip tools"),
        ({"skip_tools": ["a", "a"]}, "invalid measurement skip tools"),
        ({"skip_tools": ["bad/tool"]}, "invalid measurement skip tools"),
    ],
)
def test_measurement_profile_rules_in_order(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ProfileError) as info:
        MeasurementProfile.from_dict({**PROFILE, **change})
    assert str(info.value) == message


def test_measurement_profile_accepts_semver_with_pre_release_and_build() -> None:
    profile = MeasurementProfile.from_dict(
        {**PROFILE, "evaluator_version": "1.2.3-rc.1+build.5", "skip_tools": ["a", "b"]}
    )
    assert profile.skip_tools == ("a", "b")


def test_sanitize_shape_of_record_args_matches_the_store_rule() -> None:
    record = CallRecord(
        ts="2026-01-01T00:00:00.000Z",
        session=SESSION,
        seq=1,
        server="s",
        method="m",
        outcome="ok",
        args=["CANARY"],
    )
    assert record.sanitized().args == sanitize_shape(["CANARY"]) == {"array": 1, "items": "str<8"}
