"""The redaction check (SPEC 10): planted secrets are flagged by location, notes are counted, clean
stores pass, and nothing the check prints or returns carries a matched value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpeval_nb import AnnotationRecord, append_record, check_redaction
from tests.review_support import DAY, TS, append_raw, clean_store, run_cli, run_cli_process

CANARY_EMAIL = "zq7canary@example.org"
CANARY_HOME = "/home/zq7canaryuser/.ssh"
CANARY_TOKEN = "https://x.test/cb?token=zq7canarytoken"
CANARY_PASSWORD = "PassWord=zq7canarypw"
CANARY_LONG = "zq7canary-" + "x" * 140

# (detector id, JSON string value carrying the planted secret)
PLANTS = [
    ("email-like", CANARY_EMAIL),
    ("home-path", CANARY_HOME),
    ("home-path", "C:/Users/zq7canary/secret.txt"),
    ("token-param", CANARY_TOKEN),
    ("password", CANARY_PASSWORD),
    ("oversized-string", CANARY_LONG),
]
CANARIES = ("zq7canary",)


def _hand_call(value: str, seq: int = 99) -> str:
    record = {"ts": TS, "session": "session:" + "a" * 64, "seq": seq, "server": "weather",
              "method": "tools/call", "tool": "get_weather", "args": {"city": value}, "outcome": "ok",
              "shim_self_us": 1, "kind": "real"}
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n"


def test_clean_store_written_by_the_real_writer_passes(root: Path) -> None:
    clean_store(root, calls=20)
    report = check_redaction(root)
    assert report.clean
    assert report.files_scanned == 3  # calls, annotations, probes/history (nested)
    assert report.notes_requiring_review == 0
    assert report.lines()[-1] == f"do not share: {root / '.salt'} (fingerprint salt)"


@pytest.mark.parametrize(("detector", "value"), PLANTS)
def test_planted_secret_in_calls_is_flagged_by_path_line_and_detector(root: Path, detector: str,
                                                                      value: str) -> None:
    store = clean_store(root, calls=3)
    calls = store / f"calls-{DAY}.jsonl"
    line = append_raw(calls, _hand_call(value))
    report = check_redaction(root)
    assert [(f.path, f.line) for f in report.flagged] == [(calls, line)]
    assert detector in report.flagged[0].detectors


@pytest.mark.parametrize(("detector", "value"), PLANTS)
def test_planted_secret_in_probe_history_is_flagged(root: Path, detector: str, value: str) -> None:
    store = clean_store(root, calls=1)
    history = store / "probes" / "history.jsonl"
    point = {"ts": TS, "server": "weather", "passed": True, "cases_total": 1, "cases_passed": 1,
             "score": 1, "standard": value}
    line = append_raw(history, json.dumps(point) + "\n")
    report = check_redaction(root)
    assert [(f.path, f.line, detector in f.detectors) for f in report.flagged] == [(history, line, True)]


@pytest.mark.parametrize(("detector", "value"), PLANTS)
def test_planted_secret_in_an_annotation_outside_the_note_is_flagged(root: Path, detector: str,
                                                                     value: str) -> None:
    store = clean_store(root, calls=1)
    annotations = store / f"annotations-{DAY}.jsonl"
    record = {"ts": TS, "session": "session:" + "b" * 64, "seq": 2, "kind": value, "note": ""}
    line = append_raw(annotations, json.dumps(record) + "\n")
    report = check_redaction(root)
    assert [(f.path, f.line, detector in f.detectors) for f in report.flagged] == [(annotations, line, True)]


@pytest.mark.parametrize(("detector", "value"), [p for p in PLANTS if p[0] != "oversized-string"])
def test_the_same_secret_inside_a_note_is_not_flagged_but_counted(root: Path, detector: str,
                                                                  value: str) -> None:
    clean_store(root, calls=1, note="a real note")
    append_record(root, AnnotationRecord(ts=TS, session="sess-b", seq=3, kind="workaround", note=value))
    report = check_redaction(root)
    assert report.clean, detector
    assert report.notes_requiring_review == 2


def test_blank_and_whitespace_notes_are_not_counted(root: Path) -> None:
    clean_store(root, calls=1, note="   ")
    assert check_redaction(root).notes_requiring_review == 0


def test_a_non_object_annotation_line_falls_back_to_the_raw_line_rule(root: Path) -> None:
    store = clean_store(root, calls=1)
    annotations = store / f"annotations-{DAY}.jsonl"
    line = append_raw(annotations, f'["{CANARY_EMAIL}"]\n')
    assert [(f.path, f.line) for f in check_redaction(root).flagged] == [(annotations, line)]


@pytest.mark.parametrize("value", [
    "enum:" + "v" * 300,
    "num:" + "1" * 200,
    "num:-inf",
    "num:NaN",
    "url:" + ".".join(["label"] * 40),
    "str>4096",
    "x" * 128,
    "é" * 64,
])
def test_shape_tokens_and_strings_up_to_128_bytes_are_not_oversized(root: Path, value: str) -> None:
    store = clean_store(root, calls=1)
    append_raw(store / f"calls-{DAY}.jsonl", _hand_call(value))
    assert check_redaction(root).clean


@pytest.mark.parametrize("value", [
    "x" * 129,
    "é" * 65,  # 65 characters, 130 UTF-8 bytes
    "url:" + "a" * 130 + ".test",  # a label over 63 bytes is not a host token
    "num:12abc" + "0" * 130,
    'quote"' * 25,  # escaped quotes split the raw text into short runs
])
def test_strings_over_128_bytes_that_are_not_tokens_are_oversized(root: Path, value: str) -> None:
    store = clean_store(root, calls=1)
    calls = store / f"calls-{DAY}.jsonl"
    line = append_raw(calls, _hand_call(value))
    assert [(f.line, f.detectors) for f in check_redaction(root).flagged] == [(line, ("oversized-string",))]


def test_long_keys_are_not_length_checked(root: Path) -> None:
    store = clean_store(root, calls=1)
    append_raw(store / f"calls-{DAY}.jsonl", json.dumps({"k" * 300: "str<8"}) + "\n")
    assert check_redaction(root).clean


def test_an_unparseable_line_is_checked_by_text_patterns(root: Path) -> None:
    store = clean_store(root, calls=1)
    calls = store / f"calls-{DAY}.jsonl"
    line = append_raw(calls, f"not json {CANARY_EMAIL}\n")
    append_raw(calls, "not json but " + "y" * 300 + "\n")
    assert [f.line for f in check_redaction(root).flagged] == [line]


def test_an_unterminated_final_line_is_checked(root: Path) -> None:
    store = clean_store(root, calls=2)
    calls = store / f"calls-{DAY}.jsonl"
    line = append_raw(calls, _hand_call(CANARY_HOME).rstrip("\n")) + 1
    assert [(f.path, f.line) for f in check_redaction(root).flagged] == [(calls, line)]


def test_escaped_at_sign_in_raw_calls_is_not_an_email(root: Path) -> None:
    # SPEC 10 applies the text patterns to the raw line; share scans the normalised bytes instead.
    store = clean_store(root, calls=1)
    append_raw(store / f"calls-{DAY}.jsonl", '{"v":"a\\u0040b"}\n')
    assert check_redaction(root).clean


def test_a_missing_store_scans_zero_files_and_creates_nothing(root: Path) -> None:
    report = check_redaction(root)
    assert report.files_scanned == 0 and report.clean
    assert not root.exists()


def test_non_jsonl_files_are_ignored(root: Path) -> None:
    store = clean_store(root, calls=1)
    (store / "notes.txt").write_text(CANARY_EMAIL)
    assert check_redaction(root).clean


def test_cli_prints_locations_notes_and_salt_reminder_and_exits_1(root: Path) -> None:
    store = clean_store(root, calls=2, note="prose")
    calls = store / f"calls-{DAY}.jsonl"
    line = append_raw(calls, _hand_call(CANARY_EMAIL))
    result = run_cli_process("doctor", "--check-redaction", root=root)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "scanned 3 files",
        f"{calls}:{line}",
        "1 annotation notes contain agent prose; review before sharing",
        f"do not share: {root / '.salt'} (fingerprint salt)",
    ]


def test_cli_exits_0_on_a_clean_store(root: Path) -> None:
    clean_store(root, calls=2)
    result = run_cli("doctor", root=root)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "scanned 3 files"


def test_nothing_the_check_prints_or_returns_contains_a_matched_value(root: Path) -> None:
    store = clean_store(root, calls=2, note=CANARY_EMAIL)
    calls = store / f"calls-{DAY}.jsonl"
    for _detector, value in PLANTS:
        append_raw(calls, _hand_call(value))
    report = check_redaction(root)
    assert len(report.flagged) == len(PLANTS)
    result = run_cli("doctor", root=root)
    for text in (repr(report), "\n".join(report.lines()), result.stdout, result.stderr):
        for canary in CANARIES:
            assert canary not in text


def test_progress_reports_growing_byte_counts_up_to_the_store_size(root: Path) -> None:
    store = clean_store(root, calls=50)
    seen: list[tuple[int, int]] = []
    report = check_redaction(root, progress=lambda done, total: seen.append((done, total)))
    size = sum(p.stat().st_size for p in store.rglob("*.jsonl"))
    assert seen and seen[-1] == (size, size) == (report.bytes_scanned, size)
    assert [d for d, _t in seen] == sorted(d for d, _t in seen)
