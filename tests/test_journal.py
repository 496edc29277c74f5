"""Journal append and read semantics (SPEC 1, 6): bounds, tolerant tail, locks, salt, failures."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mcpeval_nb import (
    AnnotationRecord,
    CallRecord,
    InvalidRecord,
    JournalError,
    LockTimeout,
    RecordTooLarge,
    SaltError,
    TrendPoint,
    append_record,
    append_records,
    load_salt,
    read_records,
    resolve_root,
)
from mcpeval_nb.journal import encode_line, iter_lines, snapshot_size
from mcpeval_nb.journal.read import _read_raw_records
from mcpeval_nb.limits import MAX_RECORD_BYTES
from mcpeval_nb.root.layout import annotations_path, calls_path, history_path, salt_path, store_dir

TS = "2026-08-04T12:00:00.250Z"


def _record(seq: int = 1, *, ts: str = TS, **extra: object) -> CallRecord:
    return CallRecord(
        ts=ts, session="s", seq=seq, server="demo", method="tools/call", outcome="ok", tool="t", **extra
    )  # type: ignore[arg-type]


def _record_of_line_size(size: int) -> CallRecord:
    """A record whose encoded line (newline included) is exactly ``size`` bytes."""
    base = len(encode_line(_record(args={"": "null"})))
    return _record(args={"k" * (size - base): "null"})


def _line(seq: int) -> bytes:
    return encode_line(_record(seq))


# --- layout -------------------------------------------------------------------------------------------------


def test_root_resolution_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MCPEVAL_HOME", str(tmp_path / "env"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert resolve_root(tmp_path / "explicit") == tmp_path / "explicit"
    assert resolve_root() == tmp_path / "env"
    monkeypatch.delenv("MCPEVAL_HOME")
    assert resolve_root() == tmp_path / "home" / ".mcp-eval"
    monkeypatch.delenv("HOME")
    assert resolve_root() == Path(".mcp-eval")


def test_records_go_to_day_files_by_their_sanitised_timestamp(root: Path) -> None:
    assert append_record(root, _record(1)) == calls_path(root, "2026-08-04")
    assert append_record(root, _record(2, ts="CANARY")) == calls_path(root, "unknown")
    note = AnnotationRecord(ts="2026-08-05T00:00:00.000Z", session="s1", seq=1, kind="workaround", note="n")
    assert append_record(root, note) == annotations_path(root, "2026-08-05")
    point = TrendPoint(ts=TS, server="demo", passed=True, cases_total=1, cases_passed=1, score=90)
    assert append_record(root, point) == history_path(root) == root / "store" / "probes" / "history.jsonl"
    assert sorted(p.name for p in store_dir(root).iterdir()) == [
        "annotations-2026-08-05.jsonl",
        "calls-2026-08-04.jsonl",
        "calls-unknown.jsonl",
        "probes",
    ]
    assert "CANARY" not in calls_path(root, "unknown").read_text()


def test_append_writes_one_sanitised_line_per_record_and_reads_back(root: Path) -> None:
    path = append_record(root, _record(1, args={"q": "CANARY"}))
    append_records(root, [_record(2), _record(3)])
    data = path.read_bytes()
    assert data.count(b"\n") == 3 and data.endswith(b"\n")
    assert b"CANARY" not in data
    entries = list(read_records(path))
    assert [e.record.seq for e in entries] == [1, 2, 3]
    assert [e.line for e in entries] == [1, 2, 3]
    first = len(encode_line(_record(1, args={"q": "CANARY"})))
    assert [e.offset for e in entries] == [0, first, first + len(_line(2))]
    assert entries[0].record.args == {"q": "str<8"}


# --- the 4 MiB bound ----------------------------------------------------------------------------------------


def test_a_record_of_exactly_4_mib_including_newline_is_accepted(root: Path) -> None:
    record = _record_of_line_size(MAX_RECORD_BYTES)
    path = append_record(root, record)
    assert path.stat().st_size == MAX_RECORD_BYTES
    (entry,) = read_records(path)
    assert entry.record.encode() == record.sanitized().encode()


def test_one_byte_over_4_mib_is_refused_and_no_file_is_created(root: Path) -> None:
    with pytest.raises(RecordTooLarge, match="journal record exceeds 4 MiB"):
        append_record(root, _record_of_line_size(MAX_RECORD_BYTES + 1))
    assert not calls_path(root, "2026-08-04").exists()


def test_oversized_record_leaves_journal_bytes_unchanged(root: Path) -> None:
    path = append_record(root, _record(1))
    before = path.read_bytes()
    with pytest.raises(RecordTooLarge):
        append_record(root, _record_of_line_size(MAX_RECORD_BYTES + 1))
    with pytest.raises(RecordTooLarge):
        append_records(root, [_record(2), _record_of_line_size(MAX_RECORD_BYTES + 1)])
    assert path.read_bytes() == before


def test_bound_counts_escaped_bytes_not_characters(root: Path) -> None:
    # Each control character costs six bytes once escaped: the escaped size is what is bounded.
    record = _record(args={"\x01" * (MAX_RECORD_BYTES // 6): "null"})
    assert len(record.sanitized().encode()) > MAX_RECORD_BYTES
    with pytest.raises(RecordTooLarge):
        append_record(root, record)


# --- reading ------------------------------------------------------------------------------------------------


def _journal(root: Path, data: bytes) -> Path:
    path = calls_path(root, "2026-08-04")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_unterminated_tail_is_not_consumed(root: Path) -> None:
    path = _journal(root, _line(1) + _line(2)[:-1])
    assert [e.record.seq for e in read_records(path)] == [1]
    path.write_bytes(_line(1) + b'{"torn":')
    assert [e.record.seq for e in read_records(path)] == [1]


def test_whitespace_lines_are_skipped_and_carriage_returns_stripped(root: Path) -> None:
    crlf = _line(2)[:-1] + b"\r\n"
    path = _journal(root, b"\n  \t\n" + _line(1) + b"\r\n" + crlf + b" \r\n")
    entries = list(read_records(path))
    assert [(e.line, e.record.seq) for e in entries] == [(3, 1), (5, 2)]
    assert entries[0].offset == len(b"\n  \t\n")
    assert entries[1].offset == len(b"\n  \t\n" + _line(1) + b"\r\n")


def test_reading_resumes_from_an_offset_with_its_line_number(root: Path) -> None:
    path = _journal(root, _line(1) + _line(2) + _line(3))
    first = len(_line(1))
    entries = list(read_records(path, start=first, first_line=2))
    assert [(e.line, e.offset, e.record.seq) for e in entries] == [(2, first, 2), (3, 2 * first, 3)]


def test_invalid_line_error_names_file_and_line_never_content(root: Path) -> None:
    path = _journal(root, _line(1) + b'{"CANARY": "secret"}\n' + _line(3))
    with pytest.raises(InvalidRecord) as info:
        list(read_records(path))
    assert info.value.line == 2 and info.value.path == path
    assert "line 2" in str(info.value) and str(path) in str(info.value)
    assert "CANARY" not in str(info.value)


@pytest.mark.parametrize(
    "bad", [b"not json CANARY", b"[1,2]", b'{"ts":1}', b"\xff\xfe CANARY", b"NaN", b"[" * 128 + b"]" * 128]
)
def test_every_kind_of_invalid_complete_line_is_refused(root: Path, bad: bytes) -> None:
    path = _journal(root, bad + b"\n")
    with pytest.raises(InvalidRecord, match="invalid journal record on line 1") as info:
        list(read_records(path))
    assert "CANARY" not in str(info.value)


def test_an_exactly_4_mib_line_reads_and_one_byte_more_is_refused_naming_file_and_line(root: Path) -> None:
    ok = encode_line(_record_of_line_size(MAX_RECORD_BYTES))
    path = _journal(root, _line(1) + ok)
    assert [e.line for e in read_records(path)] == [1, 2]
    big = ok[:-1] + b" \n"  # 4 MiB + 1 bytes including the newline
    path.write_bytes(_line(1) + big + _line(3))
    with pytest.raises(RecordTooLarge) as info:
        list(read_records(path))
    assert info.value.line == 2 and info.value.path == path
    assert str(path) in str(info.value) and "line 2" in str(info.value)
    assert "kkkk" not in str(info.value)


def test_an_oversized_line_without_newline_in_the_middle_is_refused(root: Path) -> None:
    path = _journal(root, b"x" * (MAX_RECORD_BYTES + 10) + b"\n" + _line(2))
    with pytest.raises(RecordTooLarge):
        list(read_records(path))


def test_an_exactly_4_mib_unterminated_tail_is_left_for_its_writer(root: Path) -> None:
    tail = encode_line(_record_of_line_size(MAX_RECORD_BYTES))[:-1] + b" "
    assert len(tail) == MAX_RECORD_BYTES
    path = _journal(root, _line(1) + tail)
    assert [e.line for e in read_records(path)] == [1]
    assert [r.line for r in iter_lines(path, include_tail=True)] == [1, 2]


def test_snapshot_size_and_iter_lines_bound_the_read(root: Path) -> None:
    path = _journal(root, _line(1) + _line(2))
    size = snapshot_size(path)
    with open(path, "ab") as fh:
        fh.write(_line(3))
    assert [r.line for r in iter_lines(path, end=size)] == [1, 2]
    assert [r.data for r in iter_lines(path)] == [_line(i)[:-1] for i in (1, 2, 3)]


def test_read_records_always_sanitises_and_the_raw_reader_is_private(root: Path) -> None:
    path = _journal(root, _line(1).replace(b'"outcome":"ok"', b'"outcome":"notification"'))
    assert next(iter(_read_raw_records(path))).record.outcome == "notification"
    assert next(iter(read_records(path))).record.outcome == "unknown"
    with pytest.raises(TypeError):
        read_records(path, sanitize=False)  # type: ignore[call-arg]


def test_a_missing_journal_is_a_journal_error(root: Path) -> None:
    with pytest.raises(JournalError, match="cannot open journal"):
        list(read_records(calls_path(root, "2026-01-01")))


# --- failures with nothing lost -----------------------------------------------------------------------------


def test_unwritable_store_is_a_clear_error(tmp_path: Path) -> None:
    # Tests run as root, so permissions cannot be relied on: the capture root's parent is a regular file.
    blocker = tmp_path / "file"
    blocker.write_bytes(b"keep")
    with pytest.raises(JournalError, match="cannot open journal") as info:
        append_record(blocker / "root", _record(1))
    assert str(blocker / "root") in str(info.value)
    with pytest.raises(SaltError, match="cannot"):
        load_salt(blocker / "root")
    assert blocker.read_bytes() == b"keep"


def test_a_journal_path_that_is_a_directory_is_a_clear_error(root: Path) -> None:
    calls_path(root, "2026-08-04").mkdir(parents=True)
    with pytest.raises(JournalError, match="cannot open journal"):
        append_record(root, _record(1))


@contextmanager
def _lock_held_by_another_process(path: Path, *, exclusive: bool) -> Iterator[subprocess.Popen[str]]:
    code = (
        "import fcntl, os, sys\n"
        f"fd = os.open({str(path)!r}, os.O_RDWR | os.O_CREAT, 0o644)\n"
        f"fcntl.flock(fd, fcntl.{'LOCK_EX' if exclusive else 'LOCK_SH'})\n"
        "print('locked', flush=True)\n"
        "sys.stdin.read()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "locked\n"
        yield proc
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def test_lock_held_past_the_deadline_is_a_timeout_naming_the_path_and_nothing_is_lost(root: Path) -> None:
    path = append_record(root, _record(1))
    before = path.read_bytes()
    with _lock_held_by_another_process(path, exclusive=True):
        with pytest.raises(LockTimeout) as info:
            append_record(root, _record(2), timeout=0.2)
        assert info.value.path == path and str(path) in str(info.value)
        assert "exclusive" in str(info.value)
        with pytest.raises(LockTimeout, match="shared"):
            list(read_records(path, timeout=0.2))
        assert path.read_bytes() == before
    append_record(root, _record(2), timeout=5)
    assert [e.record.seq for e in read_records(path)] == [1, 2]


def test_a_shared_lock_elsewhere_allows_reading_but_blocks_writing(root: Path) -> None:
    path = append_record(root, _record(1))
    with _lock_held_by_another_process(path, exclusive=False):
        assert [e.record.seq for e in read_records(path, timeout=5)] == [1]
        with pytest.raises(LockTimeout):
            append_record(root, _record(2), timeout=0.2)
    assert path.read_bytes() == _line(1)


# --- the salt -----------------------------------------------------------------------------------------------


def test_salt_is_created_once_with_32_bytes_and_mode_0600(root: Path) -> None:
    salt = load_salt(root)
    path = salt_path(root)
    assert len(salt) == 32 and path.read_bytes() == salt
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.parent == root and not (store_dir(root) / ".salt").exists()
    assert load_salt(root) == salt
    assert load_salt(str(root)) == salt  # a path given as text, as the other functions take it
    assert sorted(os.listdir(root)) == [".salt"]


def test_salt_bytes_carry_two_uuid4s(root: Path) -> None:
    salt = load_salt(root)
    for half in (salt[:16], salt[16:]):
        assert half[6] >> 4 == 4 and half[8] >> 6 == 0b10


@pytest.mark.parametrize("size", [0, 31, 33, 64])
def test_wrong_size_salt_is_a_clear_error_and_never_overwritten(root: Path, size: int) -> None:
    root.mkdir()
    content = bytes(range(size))
    salt_path(root).write_bytes(content)
    with pytest.raises(SaltError) as info:
        load_salt(root)
    assert str(info.value) == f"salt file at {salt_path(root)} has {size} bytes, expected 32"
    assert salt_path(root).read_bytes() == content


def test_missing_salt_without_create_is_an_error(root: Path) -> None:
    with pytest.raises(SaltError, match="no salt file"):
        load_salt(root, create=False)
    assert not root.exists()


def test_annotation_and_history_journals_are_read_as_their_own_record_types(root: Path) -> None:
    note = AnnotationRecord(ts=TS, session="s1", seq=3, kind="workaround", note="n")
    point = TrendPoint(ts=TS, server="demo", passed=False, cases_total=2, cases_passed=1, score=40)
    (a,) = read_records(append_record(root, note))
    (h,) = read_records(append_record(root, point))
    assert isinstance(a.record, AnnotationRecord) and a.record.seq == 3
    assert isinstance(h.record, TrendPoint) and h.record.score == 40


def test_a_trend_line_with_an_invalid_profile_names_the_rule_and_line(root: Path) -> None:
    path = history_path(root)
    path.parent.mkdir(parents=True)
    profile = (
        '{"schema":"mcpeval.measurement-profile/v1","evaluator_version":"0.4.0","platform":"linux",'
        '"architecture":"x86_64","client_capabilities":"CANARY","attested_read_only":false,"skip_tools":[],'
        '"call_timeout_ms":15000,"repeats":3}'
    )
    good = '{"ts":"' + TS + '","server":"demo","passed":true,"cases_total":1,"cases_passed":1,"score":91}\n'
    path.write_text(good + good[:-2] + ',"measurement_profile":' + profile + "}\n")
    with pytest.raises(InvalidRecord) as info:
        list(read_records(path))
    assert str(info.value) == f"invalid measurement conditions on line 2 of {path}"


def test_batches_are_written_in_chunks_of_whole_lines_in_order(root: Path) -> None:
    assert append_records(root, [_record(i) for i in range(5)], chunk_bytes=1) == 5
    path = calls_path(root, "2026-08-04")
    assert path.read_bytes() == b"".join(_line(i) for i in range(5))


def test_a_journal_that_is_a_symlink_is_neither_followed_nor_written(root: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.jsonl"
    target.write_bytes(_line(1))
    link = calls_path(root, "2026-08-04")
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    with pytest.raises(JournalError, match="cannot open journal"):
        append_record(root, _record(2))
    with pytest.raises(JournalError, match="cannot open journal"):
        list(read_records(link))
    assert target.read_bytes() == _line(1)
