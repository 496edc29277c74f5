"""Share re-applies the store's read rules to hand-edited records (issue 19 item 6).

Journals the writers produced are fixed points: their envelope bytes are the plain normalisation and
SHARE.md is SPEC's text.  Hand-edited prose in ``server``, ``tool``, ``method``, ``args`` values, extra
keys, wrongly typed fields, annotations and trend points never reaches the envelope; the rewrites are
counted in SHARE.md and on stderr; and the envelope loads into the same tables as the store it came from.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpeval_nb import (
    AnnotationRecord,
    CallRecord,
    ShareOptions,
    TrendPoint,
    append_record,
    append_records,
    export_share,
    open_store,
)
from mcpeval_nb.privacy.records import Identity
from mcpeval_nb.review import share_md
from mcpeval_nb.review.normalize import normalize_record
from mcpeval_nb.review.resanitise import fixed_calls, journal_kind, resanitise_record, resanitise_values
from tests import triage_support
from tests.review_support import DAY, TS, append_raw, call, clean_store, run_cli_process, tree_bytes

CANARY = "zq7resan"


def _plain(path: Path) -> bytes:
    """The SPEC 11 normalisation of a journal, without the read rules."""
    return b"".join(normalize_record(line, drop_note=False)[0]
                    for line in path.read_bytes().split(b"\n") if line.strip())


def test_journals_the_writers_produced_are_exported_unchanged(root: Path, tmp_path: Path) -> None:
    triage_support.build(root)  # identities, error infos, notifications, synthetic calls
    clean_store(root, calls=40)
    append_record(root, AnnotationRecord(ts=TS, session="sess-a", event_id=str(uuid.uuid4()),
                                         kind="false-success", note="kept"))
    result = export_share(root, dest=tmp_path / "env",
                          options=ShareOptions(include_probe_history=True, include_annotation_notes=True))
    assert result.rewritten == 0
    envelope = tree_bytes(tmp_path / "env")
    for name in result.files:
        assert envelope[f"store/{name}"] == _plain(root / "store" / name), name
    assert envelope["SHARE.md"] == share_md(len(result.files), result.notes_included).encode()


def _hand_edited(store: Path) -> int:
    """Append records a writer never produces, each hiding the canary; returns how many."""
    calls = store / f"calls-{DAY}.jsonl"
    base = json.loads(CallRecord.encode(call(99).sanitized()))
    edits: list[dict[str, Any]] = [
        {**base, "server": f"{CANARY} prose server"},
        {**base, "tool": f"{CANARY} prose tool"},
        {**base, "method": f"tools/{CANARY} prose"},
        {**base, "args": {"city": f"{CANARY} prose"}},
        {**base, "args": [f"{CANARY}"]},
        {**base, "comment": f"{CANARY} prose in an extra key"},
        {**base, f"{CANARY} key with spaces": 1},
        {**base, "seq": f"{CANARY}"},
        {**base, "latency_ms": f"{CANARY}"},
        {**base, "error": f"{CANARY}"},
        {**base, "error": {"template": f"{CANARY} message", "kind": f"{CANARY}"}},
        {**base, "identity": {"capture_id": f"{CANARY}", "event_id": str(uuid.uuid4())}},
        {**base, "outcome": f"{CANARY}", "kind": f"{CANARY}"},
        {**base, "session": {"raw": f"{CANARY}"}},
        {**base, "ts": f"{CANARY}"},
    ]
    append_raw(calls, "".join(json.dumps(e) + "\n" for e in edits))
    annotations = store / f"annotations-{DAY}.jsonl"
    notes = [
        {"ts": TS, "session": "s", "seq": 1, "kind": f"{CANARY}", "note": ""},
        {"ts": TS, "session": "s", "seq": 2, "kind": "workaround", "note": "", "where": f"{CANARY}"},
        {"ts": TS, "session": "s", "event_id": f"{CANARY}", "kind": "workaround", "note": ""},
    ]
    append_raw(annotations, "".join(json.dumps(n) + "\n" for n in notes))
    trend = json.loads(TrendPoint(ts=TS, server="weather", passed=True, cases_total=1, cases_passed=1,
                                  score=90).encode())
    points = [{**trend, "standard": f"{CANARY} prose"}, {**trend, "server": f"{CANARY} prose"},
              {**trend, "passed": f"{CANARY}"}]
    append_raw(store / "probes" / "history.jsonl", "".join(json.dumps(p) + "\n" for p in points))
    return len(edits) + len(notes) + len(points)


def test_hand_edited_prose_never_reaches_the_envelope_and_is_counted(root: Path, tmp_path: Path) -> None:
    store = clean_store(root, calls=5)
    edited = _hand_edited(store)
    before = tree_bytes(store)
    result = export_share(root, dest=tmp_path / "env", options=ShareOptions(include_probe_history=True))
    assert result.rewritten == edited
    envelope = tree_bytes(tmp_path / "env")
    assert not [name for name, data in envelope.items() if CANARY.encode() in data]
    md = envelope["SHARE.md"].decode()
    assert f"Re-sanitised: {edited} hand-edited record(s) rewritten" in md
    assert tree_bytes(store) == before  # the store itself is never modified
    records = [json.loads(line) for line in envelope[f"store/calls-{DAY}.jsonl"].splitlines()]
    assert len(records) == 5 + 15  # nothing dropped: every record is rewritten, not removed
    assert {r["server"] for r in records} == {"weather", "invalid"}
    assert "tool" not in records[-14] and records[-13]["method"] == "unparsed/metadata"
    assert records[-12]["args"] == {"city": "str<32"}
    assert records[-10]["comment"] == "str<32" and len(records[-9]) == len(records[0])
    # A wrongly typed field stays wrongly typed, without its content, so loaders refuse it as before.
    assert records[-8]["seq"] == "str<8" and records[-7]["latency_ms"] == "str<8"
    assert records[-6]["error"] == "str<8"
    assert records[-4]["identity"]["capture_id"] == "str<8"


def test_the_cli_counts_rewrites_without_echoing_any(root: Path, tmp_path: Path) -> None:
    store = clean_store(root, calls=3)
    edited = _hand_edited(store)
    proc = run_cli_process("share", "--dir", str(tmp_path / "env"), "--include-probe-history", root=root)
    assert proc.returncode == 0, proc.stderr
    assert f"re-sanitised {edited} hand-edited record(s)" in proc.stderr
    assert CANARY not in proc.stdout + proc.stderr


def test_the_envelope_loads_into_the_tables_the_store_loads_into(root: Path, tmp_path: Path) -> None:
    store = clean_store(root, calls=5)
    _hand_edited(store)
    export_share(root, dest=tmp_path / "env", options=ShareOptions(include_probe_history=True))
    here, there = open_store(root, errors="report"), open_store(tmp_path / "env", errors="report")
    for table in ("calls", "annotations", "trends"):
        assert getattr(here, table).equals(getattr(there, table)), table
    # Records the loader refuses in the store it refuses in the envelope, at the same lines.
    assert here.report.drop_columns(["file"]).equals(there.report.drop_columns(["file"]))
    assert here.report.num_rows >= 5


def test_a_flagged_hand_edit_is_still_refused_rather_than_fixed(root: Path, tmp_path: Path) -> None:
    store = clean_store(root, calls=2)
    base = json.loads(CallRecord.encode(call(9).sanitized()))
    append_raw(store / f"calls-{DAY}.jsonl", json.dumps({**base, "server": "x@example.org"}) + "\n")
    from mcpeval_nb import ShareRefused
    with pytest.raises(ShareRefused):
        export_share(root, dest=tmp_path / "env")
    assert not (tmp_path / "env").exists()


def test_the_chunk_proof_and_the_record_path_agree(root: Path) -> None:
    clean = [json.loads(call(i).sanitized().encode()) for i in range(50)]
    assert fixed_calls(clean)
    assert resanitise_values([dict(v) for v in clean], "calls") == []
    dirty = [dict(v) for v in clean]
    dirty[17]["tool"] = "two words"
    assert not fixed_calls(dirty)
    assert resanitise_values(dirty, "calls") == [17] and "tool" not in dirty[17]
    assert [journal_kind(p) for p in (f"calls-{DAY}.jsonl", f"annotations-{DAY}.jsonl",
                                      "probes/history.jsonl", "probes/calls-x.jsonl", "other.jsonl")] == [
        "calls", "annotations", "trends", "", ""]


_labels = st.from_regex(r"[A-Za-z0-9_.:\-]{1,20}", fullmatch=True)
_text = st.text(max_size=40)
_shapes = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | _text
                       | st.floats(allow_nan=False, allow_infinity=False),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
                       max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(server=_text, tool=st.none() | _text, method=_text, args=_shapes, session=_text,
       outcome=_text, kind=_text, latency=st.none() | st.integers(0, 2**40), ts=_text | st.just(TS),
       identity=st.booleans())
def test_sanitised_records_are_fixed_points(server: str, tool: str | None, method: str, args: Any,
                                            session: str, outcome: str, kind: str, latency: int | None,
                                            ts: str, identity: bool) -> None:
    """Whatever a writer is given, what it stores is left alone by the share (sanitising is idempotent),
    by the chunk proof and by the record path alike."""
    record = CallRecord(ts=ts, session=session, seq=3, server=server, method=method, tool=tool, args=args,
                        latency_ms=latency, outcome=outcome, kind=kind,
                        identity=Identity(str(uuid.uuid4()), str(uuid.uuid4())) if identity else None)
    stored = json.loads(record.sanitized().encode())
    assert resanitise_record(stored, "calls") is None
    assert resanitise_values([stored], "calls") == []


def test_records_written_through_append_records_prove_fixed_in_bulk(root: Path) -> None:
    append_records(root, [call(i, session=f"s{i % 5}", tool=f"t{i % 3}") for i in range(2000)])
    lines = (root / "store" / f"calls-{DAY}.jsonl").read_bytes().splitlines()
    assert len(lines) == 2000 and fixed_calls([json.loads(line) for line in lines])


def test_result_size_points_are_re_sanitised_by_their_readers_rules(root: Path, tmp_path: Path) -> None:
    from mcpeval_nb import TrendHistoryCorrupt
    from mcpeval_nb.journal.append import append_line
    from mcpeval_nb.sizes.history import SizePoint, load_size_history, sizes_path

    clean_store(root, calls=2)
    row = {"index": 0, "tool": "search", "outcome": "ok", "reason": None, "template_id": None,
           "text_chars": 120, "result_bytes": 300, "tokens": 40, "structured_bytes": None, "latency_ms": 7}
    good = SizePoint(ts=TS, server="weather", manifest_sha256="ab" * 32, calls=(row,)).sanitized()
    path = sizes_path(root)
    append_line(path, good.encode())  # what record_sizes writes
    base = json.loads(good.encode())
    edits = [
        {**base, "server": f"{CANARY} prose"},
        {**base, "comment": f"{CANARY} in an extra key"},
        {**base, "calls": [{**row, "tool": f"{CANARY} prose", "extra": CANARY, "tokens": f"{CANARY}"}]},
        {**base, "ts": CANARY, "manifest_sha256": CANARY},
    ]
    refused = {**base, "calls": f"{CANARY}"}  # not a sizes point: its reader refuses it, here and there
    append_raw(path, "".join(json.dumps(e) + "\n" for e in edits))
    result = export_share(root, dest=tmp_path / "env", options=ShareOptions(include_probe_history=True))
    assert result.rewritten == len(edits)
    envelope = tree_bytes(tmp_path / "env")
    assert not [name for name, data in envelope.items() if CANARY.encode() in data]
    lines = envelope["store/probes/sizes.jsonl"].splitlines()
    assert lines[0] == _plain(path).splitlines()[0]  # the writer's line: unchanged
    assert load_size_history(root=tmp_path / "env") == load_size_history(root=root)
    servers = [p.server for p in load_size_history(root=tmp_path / "env")]
    assert servers == ["weather", "invalid", "weather", "weather", "weather"]
    append_raw(path, json.dumps(refused) + "\n")
    export_share(root, dest=tmp_path / "env2", options=ShareOptions(include_probe_history=True))
    assert CANARY.encode() not in (tmp_path / "env2" / "store" / "probes" / "sizes.jsonl").read_bytes()
    for where in (root, tmp_path / "env2"):
        with pytest.raises(TrendHistoryCorrupt, match="line 6"):
            load_size_history(root=where)
