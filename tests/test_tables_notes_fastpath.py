"""The annotations fast path gives the reference path's table and report, line for line, for the writer's
lines and for every way a hand edit or another tool can differ from them."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpeval_nb as me
from mcpeval_nb.journal import read_records
from mcpeval_nb.limits import MAX_NOTE_CHARS
from mcpeval_nb.tables import fast_notes, open_store
from mcpeval_nb.tables.canon import newline_positions
from mcpeval_nb.tables.rows import annotation_batch

SESSION = "session:" + "cd" * 32
EVENT = "7a2b3c4d-0000-4000-8000-00000000000a"


def _canonical(ts: str = "2026-08-04T12:00:00.250Z", session: str = SESSION, seq: int | None = 3,
               event_id: str | None = None, kind: str = "workaround", note: str = "went around") -> str:
    head = f'{{"ts":"{ts}","session":"{session}"'
    if seq is not None:
        head += f',"seq":{seq}'
    if event_id is not None:
        head += f',"event_id":"{event_id}"'
    return head + f',"kind":"{kind}","note":"{note}"}}'


def _loads(root: Path, *, fast: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[pa.Table, pa.Table]:
    monkeypatch.setattr(fast_notes, "ENABLED", fast)
    store = open_store(root, errors="report")
    return store.annotations, store.report


def _write(root: Path, lines: list[str], name: str = "annotations-2026-08-04.jsonl") -> Path:
    path = root / "store" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes("".join(line + "\n" for line in lines).encode())
    return path


def _same_both_ways(root: Path, monkeypatch: pytest.MonkeyPatch) -> pa.Table:
    fast_table, fast_report = _loads(root, fast=True, monkeypatch=monkeypatch)
    slow_table, slow_report = _loads(root, fast=False, monkeypatch=monkeypatch)
    assert fast_table.equals(slow_table), (fast_table.to_pylist(), slow_table.to_pylist())
    assert fast_report.equals(slow_report)
    return fast_table


def test_the_writers_lines_take_the_fast_path_and_equal_the_journal_reader(root: Path) -> None:
    for i in range(300):
        # The journal writer itself (annotate() would refuse these: no call is recorded for them).
        me.append_record(root, me.AnnotationRecord(
            ts=f"2026-08-04T12:00:{i % 60:02d}.000Z", session=f"session-{i % 7}",
            seq=None if i % 5 == 0 else i, kind=("workaround", "false-success")[i % 2],
            note=f"note {i} ✓" if i % 3 else "",
            event_id=f"7a2b3c4d-0000-4000-8000-{i:012d}" if i % 5 == 0 else None))
    (path,) = (root / "store").glob("annotations-*.jsonl")
    data = path.read_bytes()
    ends = newline_positions(data)
    fast = fast_notes.fast_annotations(data, ends)
    assert len(fast.slow) == 0 and len(fast.rows) == 300  # every writer line is proven canonical
    reference = annotation_batch([e.record for e in read_records(path)])
    assert open_store(root).annotations.equals(pa.Table.from_batches([reference]))


VARIANTS = [
    _canonical(),
    _canonical(seq=None, event_id=EVENT),
    _canonical(event_id=EVENT.upper()),  # upper-case id: lowered by the rule
    _canonical(event_id="not-a-uuid"),  # dropped by the rule
    _canonical(kind="made-up"),  # coerced to "invalid"
    _canonical(ts="2026-13-04T12:00:00.250Z"),  # impossible date: unknown
    _canonical(ts="2026-08-04T23:59:60.000Z"),  # leap second
    _canonical(ts="2026-08-04T12:00:00+01:00"),  # another spelling of a time
    _canonical(ts="yesterday"),
    _canonical(session="plain-session-name"),  # hashed by the rule
    _canonical(note="x" * (MAX_NOTE_CHARS + 40)),  # capped
    _canonical(note="c1 control \u0085 inside"),  # stripped
    _canonical(note='a \\"quoted\\" note'),  # escapes: the reference path
    _canonical(note="tab\\tthere"),
    _canonical(note="ünïcödé ✓ 🙂"),
    _canonical(note=""),
    _canonical(seq=2**64 - 1),
    _canonical(seq=0),
    '{"session":"' + SESSION + '","ts":"2026-08-04T12:00:00.250Z","seq":3,"kind":"workaround","note":"n"}',
    _canonical()[:-1] + ',"extra":{"deep":[1,2]}}',
    _canonical()[:-1] + ',"note":"second"}',  # a duplicate key
    '{"ts":"2026-08-04T12:00:00.250Z","session":"' + SESSION + '","seq":3,"kind":"workaround"}',  # no note
    '{"ts":"2026-08-04T12:00:00.250Z","session":"' + SESSION + '","seq":null,"kind":"workaround","note":""}',
    '{"ts": "2026-08-04T12:00:00.250Z", "session": "' + SESSION + '", "kind": "workaround", "note": ""}',
    "   ",
    _canonical() + "\r",  # CRLF
    '{"ts":"2026-08-04T12:00:00.250Z","session":"' + SESSION + '","seq":-1,"kind":"workaround","note":""}',
    '{"ts":"2026-08-04T12:00:00.250Z","session":"' + SESSION + '","seq":3.5,"kind":"workaround","note":""}',
    '{"ts":"2026-08-04T12:00:00.250Z","session":"' + SESSION + '","seq":"3","kind":"workaround","note":""}',
    '{"ts":12,"session":"' + SESSION + '","kind":"workaround","note":""}',
    "[1, 2, 3]",
    "not json at all",
]


@pytest.mark.parametrize("variant", range(len(VARIANTS)))
def test_each_variant_loads_as_the_reference_path_loads_it(root: Path, variant: int,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # The variant between canonical lines, so a chunk the native parser refuses falls back whole.
    _write(root, [_canonical(seq=1), VARIANTS[variant], _canonical(seq=2)])
    table = _same_both_ways(root, monkeypatch)
    assert table.num_rows >= 2


def test_all_variants_in_one_chunk_keep_their_line_order(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [line for v in VARIANTS for line in (v, _canonical(seq=len(v)))]
    _write(root, lines)
    table = _same_both_ways(root, monkeypatch)
    assert table.num_rows > len(VARIANTS)


def test_a_chunk_of_only_canonical_lines_with_one_the_parser_refuses(root: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [_canonical(seq=i) for i in range(50)]
    lines[25] = _canonical(seq=2**64)  # past u64: the native parser refuses the chunk
    _write(root, lines)
    _same_both_ways(root, monkeypatch)


_text = st.text(st.characters(codec="utf-8", exclude_characters="\n"), max_size=30)
_field = st.one_of(st.none(), _text, st.integers(-2, 2**64 + 1), st.booleans())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.fixed_dictionaries(
    {"ts": st.one_of(st.sampled_from(["2026-08-04T12:00:00.250Z", "2026-02-30T00:00:00.000Z", "x"]), _text),
     "session": st.one_of(st.just(SESSION), _text),
     "kind": st.one_of(st.sampled_from(["workaround", "false-success"]), _text),
     "note": _text},
    optional={"seq": _field, "event_id": st.one_of(st.just(EVENT), _text, _field), "other": _field},
), min_size=1, max_size=12), compact=st.booleans())
def test_arbitrary_records_load_the_same_both_ways(root: Path, monkeypatch: pytest.MonkeyPatch,
                                                   rows: list[dict[str, object]], compact: bool) -> None:
    separators = (",", ":") if compact else (", ", ": ")
    _write(root, [json.dumps(r, ensure_ascii=False, separators=separators) for r in rows])
    _same_both_ways(root, monkeypatch)
