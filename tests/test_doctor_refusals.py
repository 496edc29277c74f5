"""Stores the redaction check refuses to pass: symlinks, special files, invalid UTF-8, over-long lines.
Each is reported by path (and line), never by content."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcpeval_nb import RecordTooLarge, ReviewError, check_redaction
from mcpeval_nb.limits import MAX_RECORD_BYTES
from tests.review_support import DAY, append_raw, clean_store, run_cli

SECRET = "zq7canary-secret"


def test_a_symlinked_journal_stops_the_check_naming_its_path(root: Path, tmp_path: Path) -> None:
    store = clean_store(root, calls=1)
    outside = tmp_path / "outside.jsonl"
    outside.write_text(f'{{"v":"{SECRET}@x"}}\n')
    (store / "calls-2026-12-01.jsonl").symlink_to(outside)
    with pytest.raises(ReviewError) as info:
        check_redaction(root)
    assert "symlink" in str(info.value) and "calls-2026-12-01.jsonl" in str(info.value)
    assert SECRET not in str(info.value)


def test_a_symlinked_store_stops_the_check(root: Path, tmp_path: Path) -> None:
    real = tmp_path / "real-store"
    real.mkdir()
    append_raw(real / f"calls-{DAY}.jsonl", "{}\n")
    root.mkdir()
    (root / "store").symlink_to(real)
    with pytest.raises(ReviewError, match="symlinked store"):
        check_redaction(root)


def test_a_symlinked_directory_inside_the_store_stops_the_check(root: Path, tmp_path: Path) -> None:
    store = clean_store(root, calls=1)
    (tmp_path / "elsewhere").mkdir()
    (store / "linked").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ReviewError, match="symlinks"):
        check_redaction(root)


def test_a_fifo_named_like_a_journal_stops_the_check_without_blocking(root: Path) -> None:
    store = clean_store(root, calls=1)
    os.mkfifo(store / "calls-fifo.jsonl")
    with pytest.raises(ReviewError, match="special files"):
        check_redaction(root)


def test_invalid_utf8_stops_the_check_naming_file_and_line(root: Path) -> None:
    store = clean_store(root, calls=2)
    calls = store / f"calls-{DAY}.jsonl"
    line = append_raw(calls, b'{"v":"' + SECRET.encode() + b'\xff\xfe"}\n')
    with pytest.raises(ReviewError) as info:
        check_redaction(root)
    assert str(info.value) == f"store snapshot is not UTF-8: {calls} line {line}"


def test_a_line_over_4_mib_stops_the_check_naming_file_and_line(root: Path) -> None:
    store = clean_store(root, calls=2)
    calls = store / f"calls-{DAY}.jsonl"
    payload = "x" * (MAX_RECORD_BYTES - 10)
    line = append_raw(calls, '{"v":"' + SECRET + payload + '"}\n')
    append_raw(calls, "{}\n")
    with pytest.raises(RecordTooLarge) as info:
        check_redaction(root)
    assert info.value.line == line and info.value.path == calls
    assert SECRET not in str(info.value)


def test_an_unterminated_final_line_over_the_bound_stops_the_check(root: Path) -> None:
    store = clean_store(root, calls=1)
    calls = store / f"calls-{DAY}.jsonl"
    append_raw(calls, "y" * MAX_RECORD_BYTES)
    with pytest.raises(RecordTooLarge):
        check_redaction(root)


def test_a_line_of_exactly_4_mib_with_its_newline_is_scanned(root: Path) -> None:
    store = clean_store(root, calls=1)
    calls = store / f"calls-{DAY}.jsonl"
    head = '{"v":"'
    tail = '"}\n'
    line = append_raw(calls, head + "z" * (MAX_RECORD_BYTES - len(head) - len(tail)) + tail)
    report = check_redaction(root)
    assert [(f.line, f.detectors) for f in report.flagged] == [(line, ("oversized-string",))]


def test_cli_reports_a_refused_store_on_stderr_with_exit_3(root: Path, tmp_path: Path) -> None:
    store = clean_store(root, calls=1)
    outside = tmp_path / "outside.jsonl"
    outside.write_text(f'{{"v":"{SECRET}"}}\n')
    (store / "calls-link.jsonl").symlink_to(outside)
    result = run_cli("doctor", root=root)
    assert result.returncode == 3
    assert "symlink" in result.stderr and SECRET not in result.stderr + result.stdout
    assert "scanned" not in result.stdout
