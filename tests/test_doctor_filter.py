"""The chunk-level fast filter never hides a line the exact per-line rule flags, and chunked reads keep
line numbers and the 4 MiB bound exact across chunk boundaries."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpeval_nb import RecordTooLarge
from mcpeval_nb.journal.snapshot import iter_chunks
from mcpeval_nb.review.detectors import candidate_lines, is_shape_token, line_detectors, text_detectors
from mcpeval_nb.review.doctor import scan_chunk

_PIECES = st.sampled_from(["a", "@", "b", "é", "/home/", "/Users/", "TOKEN=", "PassWord", '"', "\\", " ",
                           "x" * 60, "€" * 30, "enum:", "num:", "url:", "str<8", "\u2028", "_", "1e5"])
_TEXT = st.lists(_PIECES, max_size=12).map("".join)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)


def _line(value: object, raw: bool) -> bytes:
    if raw:
        return json.dumps(value, ensure_ascii=False).encode()[:-1]  # often unparseable: text-only rule
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(_JSON, st.booleans()), min_size=1, max_size=8))
def test_the_fast_filter_flags_exactly_the_lines_the_exact_rule_flags(
        items: list[tuple[object, bool]]) -> None:
    lines = [_line(value, raw) for value, raw in items]
    data = b"\n".join(lines) + b"\n"
    expected = [(n, line_detectors(line, annotation=False).detectors)
                for n, line in enumerate(lines, 1) if line_detectors(line, annotation=False).detectors]
    got = [(n, verdict.detectors) for n, verdict in scan_chunk(data, 1, annotation=False)]
    assert got == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.dictionaries(_TEXT, _JSON, max_size=4), _TEXT | _JSON, st.booleans()),
                min_size=1, max_size=6))
def test_the_annotation_fast_path_matches_the_exact_rule_and_counts_notes(
        items: list[tuple[dict[str, object], object, bool]]) -> None:
    lines = []
    for fields, note, raw in items:
        lines.append(_line({**fields, "note": note}, raw))
    data = b"\n".join(lines)
    expected = [(n, line_detectors(line, annotation=True)) for n, line in enumerate(lines, 1)]
    expected = [(n, v) for n, v in expected if v.detectors or v.has_note]
    assert scan_chunk(data, 1, annotation=True) == expected


@pytest.mark.parametrize("length", range(120, 140))
@pytest.mark.parametrize("unit", ["x", "é", "\\n", '\\"', "a\\u00e9"])
def test_the_fast_filter_is_exact_at_the_128_byte_boundary(length: int, unit: str) -> None:
    # unit is raw JSON text: escapes make the raw text longer than the decoded string
    value = (unit * length)[: length * len(unit)]
    lines = [f'{{"k":"{value}"}}'.encode(), f'["{value}", 1]'.encode(), b'{"short":"s"}']
    data = b"\n".join(lines)
    expected = [(n, line_detectors(line, annotation=False).detectors)
                for n, line in enumerate(lines, 1) if line_detectors(line, annotation=False).detectors]
    assert [(n, v.detectors) for n, v in scan_chunk(data, 1, annotation=False)] == expected


def test_candidate_lines_returns_line_ranges_without_newlines() -> None:
    data = b'{"a":"ok"}\n{"b":"x@y"}\n{"c":"ok"}'
    assert candidate_lines(data) == [(11, 22)]


@pytest.mark.parametrize(("value", "token"), [
    ("num:1.", True), ("num:.5", True), ("num:+1e5", True), ("num:Infinity", True), ("num:e5", False),
    ("num:1e", False), ("num:", False), ("url:ip", True), ("url:a-b.c", True), ("url:a_b", False),
    ("url:", False), ("enum:anything at all", True), ("str<16", False), ("bool:yes", False),
])
def test_shape_token_grammar_follows_spec_10(value: str, token: bool) -> None:
    assert is_shape_token(value) is token


def test_text_patterns_lowercase_ascii_only() -> None:
    assert text_detectors("PASSWORD") == ["password"]
    assert text_detectors("/HOME/x") == ["home-path"]
    assert text_detectors("TO\u212aEN=") == []  # KELVIN SIGN is not ASCII: no token= match
    assert text_detectors("é@ü") == ["email-like"]  # \w is Unicode
    assert text_detectors("a @b") == []


def _write(tmp_path: Path, data: bytes) -> tuple[int, Path]:
    path = tmp_path / "j.jsonl"
    path.write_bytes(data)
    return os.open(path, os.O_RDONLY), path


def test_chunks_split_only_at_newlines_and_number_lines_across_boundaries(tmp_path: Path) -> None:
    lines = [f'{{"n":{i},"pad":"{"p" * (i % 37)}"}}'.encode() for i in range(500)]
    data = b"\n".join(lines) + b"\n" + b'{"tail":1}'
    fd, path = _write(tmp_path, data)
    try:
        chunks = list(iter_chunks(fd, path, len(data), chunk_bytes=97, limit=200, tail=True))
    finally:
        os.close(fd)
    assert b"".join(c.data for c in chunks) == data
    for chunk in chunks:
        assert chunk.first_line == data.count(b"\n", 0, data.index(chunk.data)) + 1 or chunk.tail
        assert chunk.tail or chunk.data.endswith(b"\n")
    assert chunks[-1].tail and chunks[-1].data == b'{"tail":1}' and chunks[-1].first_line == 501


@pytest.mark.parametrize("long_at", [0, 3, 57])
def test_the_line_bound_includes_the_newline_at_any_chunk_offset(tmp_path: Path, long_at: int) -> None:
    lines = [b"a" * 19] * 60
    lines[long_at] = b"b" * 20  # 21 bytes with its newline
    data = b"\n".join(lines) + b"\n"
    fd, path = _write(tmp_path, data)
    try:
        with pytest.raises(RecordTooLarge) as info:
            list(iter_chunks(fd, path, len(data), chunk_bytes=64, limit=20, tail=True))
        assert info.value.line == long_at + 1
    finally:
        os.close(fd)
    fd2, path2 = _write(tmp_path, b"\n".join([b"a" * 19] * 60) + b"\n")
    try:
        chunks = iter_chunks(fd2, path2, 1200, chunk_bytes=64, limit=20, tail=True)
        assert sum(bytes(c.data).count(b"\n") for c in chunks) == 60
    finally:
        os.close(fd2)
