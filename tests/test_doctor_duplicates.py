"""The doctor's ``duplicate-key`` finding (issue 19 item 7): a repeated key, at any depth and in any
journal, is flagged by location, because every reader keeps only the last value and so every other
check misses what the earlier one holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpeval_nb import append_records, check_redaction
from mcpeval_nb.review.dupkeys import duplicate_key_lines, has_duplicate_key
from tests.review_support import DAY, TS, append_raw, call, clean_store, run_cli_process

CANARY = "zq7dupcanary"
HIDDEN_NOTE = ('{"ts":"' + TS + '","session":"s","seq":1,"kind":"workaround","note":"' + CANARY
               + '@example.org","note":""}\n')


def test_a_note_hidden_behind_a_repeated_key_is_a_finding(root: Path) -> None:
    store = clean_store(root, calls=3)
    annotations = store / f"annotations-{DAY}.jsonl"
    line = append_raw(annotations, HIDDEN_NOTE)
    report = check_redaction(root)
    assert [(f.path, f.line, f.detectors) for f in report.flagged] == [
        (annotations, line, ("duplicate-key",))]
    assert not report.clean


@pytest.mark.parametrize("text", [
    '{"ts":"' + TS + '","server":"' + CANARY + ' prose","server":"weather"}',
    '{"ts":"' + TS + '","args":{"city":"str<8","city":"' + CANARY + '"}}',
    '{"ts":"' + TS + '","args":{"a":[{"b":1,"b":"' + CANARY + '"}]}}',
])
def test_repeated_keys_in_call_journals_are_flagged_at_any_depth(root: Path, text: str) -> None:
    store = clean_store(root, calls=3)
    calls = store / f"calls-{DAY}.jsonl"
    line = append_raw(calls, text + "\n")
    append_records(root, [call(seq) for seq in range(10, 20)])
    report = check_redaction(root)
    assert [(f.path, f.line) for f in report.flagged] == [(calls, line)]
    assert report.flagged[0].detectors == ("duplicate-key",)


def test_a_repeated_key_inside_args_of_a_writer_shaped_line_is_found_through_the_scanner(root: Path) -> None:
    append_records(root, [call(seq) for seq in range(50)])
    calls = root / "store" / f"calls-{DAY}.jsonl"
    lines = calls.read_bytes().splitlines(keepends=True)
    assert b'"args":{"city":"str<8",' in lines[7]
    lines[7] = lines[7].replace(b'"args":{"city":"str<8",', b'"args":{"city":"str<8","city":"str<8",')
    calls.write_bytes(b"".join(lines))
    assert [f.line for f in check_redaction(root).flagged] == [8]


def test_the_chunk_rule_and_the_line_rule_agree() -> None:
    rows = [json.dumps({"ts": TS, "n": i}).encode() for i in range(30)]
    rows[4] = b'{"a":1,"a":1}'
    rows[11] = b'{"x":{"y":1,"z":{"y":2}},"w":[{"k":1},{"k":2}]}'  # same key in different objects: fine
    rows[20] = b'not json {"a":1,"a":2'
    data = b"\n".join(rows) + b"\n"
    assert duplicate_key_lines(data, calls=False) == [4]
    assert duplicate_key_lines(data, calls=True) == [4]
    assert duplicate_key_lines(data[:-1], calls=True) == [4]  # an unterminated last line
    assert not has_duplicate_key(rows[11]) and not has_duplicate_key(rows[20])


def test_a_writer_store_has_no_finding_and_the_cli_names_only_the_location(root: Path) -> None:
    store = clean_store(root, calls=40)
    assert check_redaction(root).clean
    line = append_raw(store / f"annotations-{DAY}.jsonl", HIDDEN_NOTE)
    result = run_cli_process("doctor", "--check-redaction", root=root)
    assert result.returncode == 1
    assert f"{store / f'annotations-{DAY}.jsonl'}:{line}" in result.stdout
    assert CANARY not in result.stdout + result.stderr


def test_an_args_text_with_a_repeated_key_is_found_in_every_chunk_it_appears_in() -> None:
    from mcpeval_nb.tables.canon import available

    line = call(1).sanitized().encode().replace('"args":{"city":"str<8",',
                                                '"args":{"city":"str<8","city":"str<8",')
    data = (line + "\n").encode()
    for _ in range(3):  # the clean-text cache must never hide a text that repeats a key
        assert duplicate_key_lines(data, calls=True) == [0]
    assert available()
