"""Property tests: the vectorised loader equals the reference reader line by line."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpeval_nb import CallRecord, InvalidRecord, RecordTooLarge
from mcpeval_nb.journal import iter_lines
from mcpeval_nb.journal.read import parse_line
from mcpeval_nb.tables import fastpath, open_store
from mcpeval_nb.tables.load import digest_cursor, read_chunks
from mcpeval_nb.tables.rows import call_batch

SESSION = "session:" + "0123456789abcdef" * 4
text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
labels = st.sampled_from(["demo", "a.b:c-d_e", "", "x" * 129, "bad label", "tools/call", "ÿ"]) | text
tokens = st.sampled_from(["str<8", "num:3", "num:-1.5e3", "enum:networkIdle", "enum:network idle", "uuid",
                          "url:example.com", "url:", "null", "bool:true", "empty", "str<9", "num:01"]) | text
json_values = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | tokens
                           | st.floats(allow_nan=False, allow_infinity=False),
                           lambda c: st.lists(c, max_size=3) | st.dictionaries(text | tokens, c, max_size=3),
                           max_leaves=8)


def canonical(seq: int) -> dict[str, object]:
    return CallRecord(ts="2026-08-04T12:00:00.250Z", session=SESSION, seq=seq, server="demo",
                      method="tools/call", tool="t", args={"a": "num:1", "b": {"array": 2, "items": "str<8"}},
                      latency_ms=4, outcome="error", error={"code": -32000, "template": "{message}",
                                                           "template_id": "00112233aabbccdd"},
                      shim_self_us=1, kind="real").sanitized().to_dict()


edits = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(["ts", "session", "server", "method", "tool", "outcome", "kind",
                                               "args", "error", "latency_ms", "seq", "identity", "capture_id",
                                               "extra", "ext"]), json_values),
    st.tuples(st.just("set"), st.just("ext"), st.fixed_dictionaries(
        {}, optional={"protocol": st.sampled_from(["2026-07-28", "CANARY", 7]),
                      "rounds": st.integers(-1, 2**64), "wait_ms": json_values,
                      "flags": st.lists(st.sampled_from(["state-changed", "header-mismatch", "x"]),
                                        max_size=3),
                      "trace_id": st.sampled_from(["0af7651916cd43dd8448eb211c80319c", "0" * 32, "zz"]),
                      "task": st.sampled_from(["completed", "nope"]),
                      "transport": st.sampled_from(["tcp", 1]),
                      "port": st.integers(-1, 70000), "other": json_values})),
    st.tuples(st.just("set"), st.just("ts"), st.sampled_from(
        ["2026-02-30T00:00:00.000Z", "2026-08-04T23:59:60.5Z", "2026-08-04t01:02:03Z",
         "0000-01-01T00:00:00.000Z", "2026-08-04T01:02:03.123456789+05:30", "2026-08-04 01:02:03Z",
         "2026-13-01T00:00:00.000Z"])),
    st.tuples(st.just("set"), st.just("error"), st.fixed_dictionaries(
        {}, optional={"code": json_values, "layer": json_values, "retryable": json_values,
                      "kind": json_values, "template": json_values,
                      "template_id": st.sampled_from(["00112233aabbccdd", "ABC", ""]), "message": text})),
    st.tuples(st.just("set"), st.just("identity"), st.fixed_dictionaries(
        {"capture_id": st.sampled_from(["6f1c1e8e-62b4-4b4a-9a51-0d5cf7d2a001",
                                        "6F1C1E8E-62B4-4B4A-9A51-0D5CF7D2A001", "nope"]),
         "event_id": st.just("6f1c1e8e-62b4-4b4a-9a51-0d5cf7d2a002")})),
    st.tuples(st.just("del"), st.sampled_from(["tool", "args", "latency_ms", "error", "seq", "kind"]),
              st.none()),
    st.tuples(st.just("raw"), st.sampled_from(["spaces", "escape", "dup", "reorder", "crlf", "blank"]),
              st.none()),
)


def render(seq: int, changes: list[tuple[str, str, object]]) -> bytes:
    d = canonical(seq)
    raw: set[str] = set()
    for op, key, value in changes:
        if op == "set":
            d[key] = value
        elif op == "del":
            d.pop(key, None)
        else:
            raw.add(key)
    items = list(d.items())
    if "reorder" in raw:
        items.reverse()
    body = ",".join(json.dumps(k) + ":" + json.dumps(v, ensure_ascii=False, separators=(",", ":"))
                    for k, v in items)
    if "dup" in raw:
        body += ',"outcome":"ok"'
    if "spaces" in raw:
        body = body.replace(":", ": ", 1)
    if "escape" in raw:
        body = body.replace('"server"', '"\\u0073erver"')
    line = "{" + body + "}"
    if "blank" in raw:
        line = "   "
    return (line + ("\r" if "crlf" in raw else "")).encode("utf-8", "surrogatepass")


def expected(path: Path) -> tuple[pa.Table, list[int]]:
    records, bad = [], []
    for raw in iter_lines(path):
        try:
            rec = parse_line(raw, path, CallRecord.from_dict, True)
        except InvalidRecord:
            bad.append(raw.line)
            continue
        if rec is not None:
            records.append(rec)
    return pa.Table.from_batches([call_batch(records)]), bad


def plain(table: pa.Table) -> pa.Table:
    return pa.table({n: (c.cast(pa.string()) if pa.types.is_dictionary(c.type) else c)
                     for n, c in zip(table.column_names, table.columns, strict=True)})


#: Each fast strategy alone (the RE2 line filter is always the last resort), and the default order.
STRATEGY_SETS = [("canon",), ("rebuild",), (), fastpath.STRATEGIES]


@contextmanager
def strategies(names: tuple[str, ...]) -> Iterator[None]:
    """Run the loader with only these fast strategies."""
    saved = fastpath.STRATEGIES
    fastpath.STRATEGIES = names
    try:
        yield
    finally:
        fastpath.STRATEGIES = saved


def check_file(root: Path, data: bytes, names: tuple[str, ...]) -> None:
    """The loader's table and report for ``data`` equal the reference reader's, with these strategies."""
    path = root / "store" / "calls-2026-08-04.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    want, bad = expected(path)
    with strategies(names):
        store = open_store(root, errors="report")
        got = store.calls
        report = [r["line"] for r in store.report.to_pylist()]
    assert plain(got).equals(plain(want))
    assert report == bad


@pytest.mark.parametrize("names", STRATEGY_SETS, ids=["canon", "rebuild", "regex", "default"])
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(edits, max_size=3), min_size=1, max_size=8))
def test_loader_equals_record_by_record_sanitisation_for_hand_edited_lines(
        names: tuple[str, ...], lines: list[list[tuple[str, str, object]]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = b"".join(render(i + 1, changes) + b"\n" for i, changes in enumerate(lines))
        check_file(Path(tmp), data, names)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=30), st.booleans(), st.integers(16, 64), st.integers(8, 40))
def test_chunked_scan_applies_the_line_bound_exactly_like_the_reader(lengths: list[int], tail: bool,
                                                                     chunk: int, limit: int) -> None:
    data = b"".join(b"x" * n + b"\n" for n in lengths) + (b"y" * 5 if tail else b"")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "calls-x.jsonl"
        path.write_bytes(data)
        try:
            want: list[tuple[int, bytes]] | str = [(r.line, r.data) for r in iter_lines(path, limit=limit)]
        except RecordTooLarge as exc:
            want = str(exc)
        got: list[tuple[int, bytes]] = []
        state = digest_cursor()
        fd = os.open(path, os.O_RDONLY)
        try:
            for c in read_chunks(fd, path, state, len(data), limit=limit, chunk_bytes=chunk):
                assert c.ends is not None
                starts = np.concatenate([[0], c.ends[:-1] + 1])
                pairs = zip(starts, c.ends, strict=True)
                got += [(c.first_line + i, bytes(c.data[s:e])) for i, (s, e) in enumerate(pairs)]
        except RecordTooLarge as exc:
            assert want == str(exc)
            return
        finally:
            os.close(fd)
        assert got == want
        assert state.offset == len(data) - (5 if tail else 0)
        assert state.digest is not None
        assert state.digest.digest() == hashlib.sha256(data[:state.offset]).digest()
