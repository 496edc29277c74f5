"""The compiled scanner (``tables/_canon.c``): built here, exact against the reference reader on byte-level
mutations of canonical lines, correct on timestamps and integer bounds, and robust on garbage."""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpeval_nb import CallRecord
from mcpeval_nb.clock import ts_millis
from mcpeval_nb.journal.append import encode_line
from mcpeval_nb.privacy.records import Identity
from mcpeval_nb.tables import canon, open_store
from tests.test_tables_equivalence import check_file, plain

SESSION = "session:" + "0123456789abcdef" * 4
IDENTITY = Identity(capture_id="6f1c1e8e-62b4-4b4a-9a51-0d5cf7d2a001",
                    event_id="6f1c1e8e-62b4-4b4a-9a51-0d5cf7d2a002")


def test_the_compiled_scanner_is_built_in_this_environment() -> None:
    # `make setup` compiles it (setup.py); a missing compiler would silently cost the loader ~4x.
    assert canon.available(), "mcpeval_nb.tables._canon was not built: is a C compiler installed?"


def line(*, identity: bool = True, tool: bool = True, args: object = None, latency: bool = True,
         error: bool = True, ts: str = "2026-08-04T12:00:00.250Z", seq: int = 7,
         ext: dict[str, object] | None = None) -> bytes:
    """A canonical call line as the real writer encodes it."""
    return encode_line(CallRecord(
        ext=ext, identity=IDENTITY if identity else None, ts=ts, session=SESSION, seq=seq, server="demo",
        method="tools/call", tool="t" if tool else None,
        args=args, latency_ms=12 if latency else None, outcome="error" if error else "ok",
        error={"code": -32000, "template": "{message}", "template_id": "00112233aabbccdd",
               "retryable": False} if error else None, shim_self_us=3, kind="real"))


#: ``ext`` objects of 2026-07-28 records (absent, a plain modern call, a multi round-trip, a task).
EXTS: list[dict[str, object] | None] = [
    None, {"protocol": "2026-07-28", "transport": "pipe"},
    {"rounds": 3, "wait_ms": 1200, "flags": ["state-changed"], "protocol": "2026-07-28",
     "trace_id": "0af7651916cd43dd8448eb211c80319c", "parent_span_id": "b7ad6b7169203331",
     "transport": "tcp", "address": "127.0.0.1", "port": 8931},
    {"task": "completed", "polls": 4, "result_type": "task", "transport": "pipe"}]

shapes = st.builds(
    line, identity=st.booleans(), tool=st.booleans(), latency=st.booleans(), error=st.booleans(),
    args=st.sampled_from([None, {"a": "num:1", "b": {"array": 2, "items": "str<8"}}, ["x", {"y": []}],
                          "str<8", {}, {"k": "ÿé"}]),
    ext=st.sampled_from(EXTS))
#: Bytes that matter to the grammar (no newline: cutting lines is the chunk scanner's job).
INTERESTING = ([bytes([b]) for b in b'"\\{}[],:09-1 \t.eEnul\r\x00\x1f\x7f']
               + [b"\x80", b"\xc3", b"\xff", b"\xed\xa0\x80", b"\xc3\xa9"])
mutations = st.lists(st.tuples(st.sampled_from(["replace", "insert", "delete"]), st.integers(0, 1 << 16),
                               st.sampled_from(INTERESTING)), min_size=0, max_size=3)


def mutate(data: bytes, changes: list[tuple[str, int, bytes]]) -> bytes:
    body = bytearray(data[:-1])
    for op, at, byte in changes:
        pos = at % (len(body) + 1)
        if op == "insert":
            body[pos:pos] = byte
        elif pos < len(body):
            body[pos:pos + 1] = byte if op == "replace" else b""
    return bytes(body) + b"\n"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(shapes, mutations), min_size=1, max_size=6))
def test_byte_mutations_of_canonical_lines_load_exactly_like_the_reference(
        lines: list[tuple[bytes, list[tuple[str, int, bytes]]]]) -> None:
    data = b"".join(mutate(base, changes) for base, changes in lines)
    with tempfile.TemporaryDirectory() as tmp:
        check_file(Path(tmp), data, ("canon",))


@pytest.mark.parametrize("text", [
    "18446744073709551615", "18446744073709551616", "99999999999999999999", "0", "00", "01", "-0", "1.0",
    "1e3", "-1", "4294967296",
])
def test_integer_bounds_and_spellings_load_like_the_reference(text: str, tmp_path: Path) -> None:
    base = line().decode()
    data = "".join(base.replace('"seq":7', '"seq":' + text).replace('"latency_ms":12', '"latency_ms":' + t)
                   for t in (text, "5")).encode()
    check_file(tmp_path, data, ("canon",))


@settings(max_examples=300, deadline=None)
@given(st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31, 23, 59, 59)))
def test_strict_timestamps_convert_to_the_reference_milliseconds(when: dt.datetime) -> None:
    ts = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
    ts = f"{when.year:04d}" + ts[ts.index("-"):]  # strftime does not pad years below 1000 everywhere
    data = line(ts=ts)
    ends = np.array([len(data) - 1], dtype=np.int64)
    columns, _, _, ok, _ = canon.scan_columns(data, ends, np.zeros(1, dtype=np.uint8))
    assert ok.tolist() == [True]
    assert columns["ts"].cast(pa.int64()).to_pylist() == [ts_millis(ts)]


@pytest.mark.parametrize("ts", [
    "2024-02-29T00:00:00.000Z", "2023-02-29T00:00:00.000Z", "1900-02-29T00:00:00.000Z",
    "2000-02-29T23:59:59.999Z", "2026-04-31T00:00:00.000Z", "0000-01-01T00:00:00.000Z",
    "2026-08-04T24:00:00.000Z", "2026-08-04T23:60:00.000Z", "2026-08-04T23:59:60.000Z",
    "2026-08-04T12:00:00Z", "2026-08-04T12:00:00.000+00:00", "2026-8-04T12:00:00.000Z",
])
def test_calendar_edge_timestamps_load_like_the_reference(ts: str, tmp_path: Path) -> None:
    base = line().decode()
    check_file(tmp_path, base.replace("2026-08-04T12:00:00.250Z", ts).encode() + base.encode(), ("canon",))


def test_chunks_over_the_piece_limit_are_scanned_in_pieces_with_the_same_result(
        monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [line(seq=i, error=i % 2 == 0, tool=i % 3 != 0) for i in range(40)]
    data = b"".join(lines)
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    skip = np.zeros(len(ends), dtype=np.uint8)
    skip[5] = 1
    whole = canon.scan_columns(data, ends, skip)
    monkeypatch.setattr(canon, "_PIECE", 1000)
    pieces = canon.scan_columns(data, ends, skip)
    assert len(canon._pieces(data, ends)) > 5
    assert pieces[3].tolist() == whole[3].tolist() and not whole[3][5] and whole[3].sum() == 39
    for name, column in whole[0].items():
        assert pieces[0][name].to_pylist() == column.to_pylist(), name
    assert pieces[1].to_pylist() == whole[1].to_pylist() and pieces[2].to_pylist() == whole[2].to_pylist()


def test_without_the_compiled_module_the_loader_gives_the_same_tables(monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path) -> None:
    from mcpeval_nb.testing import synthetic_store
    synthetic_store(tmp_path, calls=3000, servers=2, tools=4, days=2, error_rate=0.2, seed=3)
    with_c = open_store(tmp_path, chunk_bytes=1 << 22).calls
    monkeypatch.setattr(canon, "_MODULE", None)
    assert not canon.available()
    without = open_store(tmp_path, chunk_bytes=1 << 22).calls
    assert with_c.num_rows == 3000 and plain(without).equals(plain(with_c))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=300), min_size=1, max_size=8))
def test_garbage_never_crashes_the_scanner_and_is_never_accepted(parts: list[bytes]) -> None:
    data = b"".join(p.replace(b"\n", b"") + b"\n" for p in parts)
    ends = canon.newline_positions(data)
    assert ends.tolist() == [i for i, b in enumerate(data) if b == 10]
    columns, args, error, ok, _ = canon.scan_columns(data, ends, np.zeros(len(ends), dtype=np.uint8))
    assert not ok.any() and len(args) == len(error) == 0 and all(len(c) == 0 for c in columns.values())


def test_scanner_refuses_inconsistent_arguments_with_a_clear_error() -> None:
    from mcpeval_nb.tables import _canon  # type: ignore[attr-defined]
    data = line() + line()
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10).astype(np.int64)
    skip = np.zeros(2, dtype=np.uint8)

    def alloc(sizes: list[int]) -> list[pa.Buffer]:
        return [pa.allocate_buffer(s) for s in sizes]

    with pytest.raises(ValueError, match="increasing newline positions"):
        _canon.scan_calls(data, ends[::-1].copy(), skip, alloc)
    with pytest.raises(ValueError, match="increasing newline positions"):
        _canon.scan_calls(data, ends - 1, skip, alloc)
    with pytest.raises(ValueError, match="one byte per line"):
        _canon.scan_calls(data, ends, np.zeros(3, dtype=np.uint8), alloc)
    with pytest.raises(ValueError, match="smaller than asked"):
        _canon.scan_calls(data, ends, skip, lambda sizes: [pa.allocate_buffer(0) for _ in sizes])
    with pytest.raises(TypeError, match="one buffer per size"):
        _canon.scan_calls(data, ends, skip, lambda sizes: [])
    with pytest.raises(BufferError, match="not writable"):
        _canon.scan_calls(data, ends, skip, lambda sizes: [b"x" * s for s in sizes])
    ok, buffers = _canon.scan_calls(data, ends, skip, alloc)
    assert ok == b"\x01\x01" and len(buffers) == 32  # 3 integers, ts, 6 validity masks, 11 strings x 2


def test_default_strategies_put_the_compiled_scanner_first(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpeval_nb.tables import fastpath

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the pyarrow strategy ran although the compiled scanner is built")

    monkeypatch.setattr(fastpath, "rebuild_columns", refuse)
    check_file(tmp_path, line() + line(identity=False) + b"{not canonical}\n", fastpath.STRATEGIES)


@settings(max_examples=100, deadline=None)
@given(st.lists(shapes, min_size=1, max_size=10))
def test_every_shape_the_writer_produces_is_accepted_by_the_scanner(lines: list[bytes]) -> None:
    # Without this the mutation test could pass with a scanner that accepts nothing (all slow path).
    data = b"".join(lines)
    ends = canon.newline_positions(data)
    columns, args, _, ok, _ = canon.scan_columns(data, ends, np.zeros(len(ends), dtype=np.uint8))
    assert ok.all()
    assert columns["seq"].to_pylist() == [7] * len(lines)
    assert args.is_valid().to_pylist() == [b'"args":' in x for x in lines]


@pytest.mark.parametrize("ext", EXTS[1:])
def test_lines_with_an_ext_object_are_taken_by_the_scanner_and_load_like_the_reference(
        ext: dict[str, object], tmp_path: Path) -> None:
    data = line(ext=ext) + line(ext=ext, seq=8, error=False)
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    scanned = canon.scan_columns(data, ends, np.zeros(len(ends), dtype=np.uint8))
    assert scanned.ok.all() and scanned.ext.null_count == 0
    check_file(tmp_path, data, ("canon",))


@pytest.mark.parametrize("text", [
    '{"rounds":"3"}', '{"rounds":3,"rounds":4}', "[1]", "5", "null", '{"flags":["x","state-dropped"]}',
    '{"protocol":"CANARY"}', '{"wait_ms":-1}', '{"trace_id":"' + "0" * 32 + '"}', "{}", '{"a":{"b":[1,2]}}',
    '{"task":"completed","polls":1.5}', '{"rounds":3'])
def test_hand_edited_ext_objects_load_exactly_like_the_reference(text: str, tmp_path: Path) -> None:
    base = line(ext={"protocol": "2026-07-28", "transport": "pipe"}).decode()
    edited = base.replace('"ext":{"protocol":"2026-07-28","transport":"pipe"}', '"ext":' + text)
    check_file(tmp_path, (edited + base).encode(), ("canon",))
