"""The Arrow loader: same rows as the journal reader, exact 4 MiB bound, tolerant tail, errors modes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pytest

from mcpeval_nb import CallRecord, InvalidRecord, RecordTooLarge, UsageError, append_records
from mcpeval_nb.journal import read_records
from mcpeval_nb.limits import MAX_RECORD_BYTES
from mcpeval_nb.privacy import code_json, code_value
from mcpeval_nb.tables import CALLS_SCHEMA, open_store
from mcpeval_nb.tables.rows import call_batch

SESSION = "session:" + "ab" * 32


def plain(table: pa.Table) -> pa.Table:
    """Dictionary columns decoded, so tables built differently compare by value."""
    return pa.table({n: (c.cast(pa.string()) if pa.types.is_dictionary(c.type) else c)
                     for n, c in zip(table.column_names, table.columns, strict=True)})


def reference(root: Path) -> pa.Table:
    records = [e.record for p in sorted((root / "store").glob("calls-*.jsonl")) for e in read_records(p)]
    return plain(pa.Table.from_batches([call_batch(records)]))


def record(seq: int, **kw: object) -> CallRecord:
    base: dict[str, object] = dict(ts="2026-08-04T12:00:00.250Z", session=SESSION, seq=seq, server="demo",
                                   method="tools/call", tool="navigate", args={"n": "num:3"}, latency_ms=5,
                                   outcome="ok", shim_self_us=3, kind="real")
    base.update(kw)
    return CallRecord(**base)  # type: ignore[arg-type]


def journal(root: Path) -> Path:
    path = root / "store" / "calls-2026-08-04.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def test_loaded_calls_equal_the_journal_readers_sanitised_records(root: Path) -> None:
    append_records(root, [record(i, outcome="error" if i % 3 else "ok",
                                 error={"code": -32000, "template": "{message}", "template_id": "0" * 16})
                          for i in range(1, 50)])
    store = open_store(root)
    assert store.calls.schema.equals(CALLS_SCHEMA, check_metadata=True)
    assert plain(store.calls).equals(reference(root))


def test_schema_metadata_names_table_and_version(root: Path) -> None:
    append_records(root, [record(1)])
    meta = open_store(root).calls.schema.metadata
    assert meta[b"mcpeval_nb.schema"] == b"mcpeval-nb.calls/2"  # 2: the ext columns


def test_hand_edited_fields_come_out_sanitised_as_the_reference_gives_them(root: Path) -> None:
    canary = "CANARY-hand-edit-7f3a"
    path = journal(root)
    lines = [
        {"ts": "not a time " + canary, "session": canary, "seq": 1, "server": "bad label " + canary,
         "method": "tools/call " + canary, "tool": "bad tool " + canary, "args": {"q": canary},
         "outcome": canary, "shim_self_us": 1, "kind": canary, "extra": canary},
        {"ts": "2026-08-04T12:00:00+02:00", "session": SESSION.upper().replace("SESSION", "session"),
         "seq": 2, "server": "demo", "method": "tools/call", "args": {"enum": "enum:network idle"},
         "outcome": "ok", "shim_self_us": 1, "kind": "real",
         "error": {"code": canary + " !", "message": canary, "layer": canary, "template": canary}},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    table = open_store(root).calls
    assert plain(table).equals(reference(root))
    row = table.to_pylist()[0]
    assert (row["server"], row["outcome"], row["kind"], row["method"]) == (
        "invalid", "unknown", "unparsed", "unparsed/metadata")
    assert row["ts"] is None and row["tool"] is None and row["args"] == '{"q":"str<32"}'
    assert canary not in repr(table.to_pylist())


def test_line_of_exactly_4_mib_with_newline_loads_and_one_byte_more_is_refused(root: Path) -> None:
    path = journal(root)
    head = record(1).sanitized().encode()
    pad = MAX_RECORD_BYTES - len(head) - 1  # the newline makes it exactly 4 MiB
    line = head[:-1] + ',"pad":"' + "x" * (pad - 9) + '"}'
    assert len(line.encode()) + 1 == MAX_RECORD_BYTES
    path.write_text(line + "\n", encoding="utf-8")
    assert open_store(root).calls.num_rows == 1
    path.write_text(record(1).sanitized().encode() + "\n" + line[:-1] + 'x"}\n', encoding="utf-8")
    with pytest.raises(RecordTooLarge) as info:
        _ = open_store(root, errors="raise").calls
    assert "line 2" in str(info.value) and str(path) in str(info.value) and "xxxx" not in str(info.value)
    store = open_store(root, errors="report")
    assert store.calls.num_rows == 1
    assert store.report.to_pylist() == [
        {"file": str(path), "line": 2, "reason": "journal record exceeds 4 MiB"}]


def test_unterminated_final_line_is_ignored_until_its_newline_arrives(root: Path) -> None:
    path = journal(root)
    full = record(1).sanitized().encode() + "\n"
    tail = record(2).sanitized().encode()
    path.write_text(full + tail, encoding="utf-8")
    store = open_store(root)
    assert store.calls.column("seq").to_pylist() == [1]
    with path.open("a", encoding="utf-8") as fh:
        fh.write("\n")
    assert store.refresh() == 1
    assert store.calls.column("seq").to_pylist() == [1, 2]


def test_invalid_line_raises_naming_file_and_line_but_not_content(root: Path) -> None:
    path = journal(root)
    canary = "CANARY-invalid-line-91c"
    path.write_text(record(1).sanitized().encode() + "\n\n" + '{"seq":"' + canary + '"}\n', encoding="utf-8")
    with pytest.raises(InvalidRecord) as info:
        _ = open_store(root, errors="raise").calls
    assert info.value.line == 3 and info.value.path == path and canary not in str(info.value)


def test_report_mode_skips_bad_lines_and_keeps_the_rest_in_order(root: Path) -> None:
    path = journal(root)
    good = [record(i).sanitized().encode() for i in (1, 2, 3)]
    path.write_bytes((good[0] + "\n" + '{"ts": 5}\n' + good[1] + "\n").encode() + b"\xff\xfe\n"
                     + (good[2] + "\n").encode())
    store = open_store(root, errors="report")
    assert store.calls.column("seq").to_pylist() == [1, 2, 3]
    assert [(r["line"], r["reason"]) for r in store.report.to_pylist()] == [
        (2, "invalid journal record"), (4, "invalid journal record")]


def test_unknown_errors_mode_is_a_usage_error(root: Path) -> None:
    with pytest.raises(UsageError):
        open_store(root, errors="ignore")


def test_missing_store_gives_empty_tables_with_schemas(root: Path) -> None:
    store = open_store(root)
    assert store.calls.num_rows == 0 and store.calls.schema.equals(CALLS_SCHEMA)
    assert store.annotations.num_rows == 0 and store.trends.num_rows == 0


def test_rows_keep_file_then_line_order_when_fast_and_slow_lines_interleave(root: Path) -> None:
    path = journal(root)
    lines = []
    for i in range(1, 21):
        text = record(i).sanitized().encode()
        lines.append(text.replace('"seq":', '"seq" :') if i % 4 == 0 else text)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert open_store(root).calls.column("seq").to_pylist() == list(range(1, 21))
    assert plain(open_store(root).calls).equals(reference(root))


def test_progress_callback_sees_every_byte(root: Path) -> None:
    append_records(root, [record(i) for i in range(1, 30)])
    seen: list[tuple[int, int]] = []
    store = open_store(root, progress=lambda done, total: seen.append((done, total)))
    _ = store.calls
    size = os.path.getsize(journal(root))
    assert seen and seen[-1] == (size, size)


def test_error_code_null_is_kept_as_json_null_and_a_missing_code_as_no_value(root: Path) -> None:
    path = journal(root)
    with_null = record(1, outcome="error", error={"code": None}).sanitized().encode()
    without = record(2, outcome="error", error={"template_id": "0" * 16}).sanitized().encode()
    path.write_text(with_null + "\n" + without.replace('"seq":2', '"seq" : 2') + "\n", encoding="utf-8")
    rows = open_store(root).calls.to_pylist()
    assert [r["error_code"] for r in rows] == ["null", None]
    assert [r["has_error"] for r in rows] == [True, True]


@pytest.mark.parametrize("canonical", [True, False], ids=["fast-path", "reader"])
def test_error_code_reads_as_written_and_gives_back_the_stored_code(root: Path, canonical: bool) -> None:
    """Issue 28: ``df.error_code == "tool-error"`` holds without JSON quotes; a string code that would read
    as JSON keeps its quotes, so ``code_value`` gives back exactly the code the journal holds."""
    codes = ["tool-error", -32602, None, "null", "true", {"object": 2}, "broken"]
    lines = []
    for seq, code in enumerate(codes, start=1):
        text = record(seq, outcome="error", error={"code": code}).sanitized().encode()
        lines.append(text if canonical else text.replace(f'"seq":{seq}', f'"seq" : {seq}'))
    journal(root).write_text("\n".join(lines) + "\n", encoding="utf-8")
    shown = open_store(root).calls.column("error_code").to_pylist()
    assert shown == ["tool-error", "-32602", "null", '"null"', '"true"', '{"object":2}', "broken"]
    stored = [e.record.error["code"] for e in read_records(journal(root))]
    assert [code_value(t) for t in shown] == stored == codes
    assert [code_json(t) for t in shown] == [json.dumps(c, separators=(",", ":")) for c in codes]
    frame = open_store(root).calls.to_pandas()
    assert frame.index[frame.error_code == "tool-error"].tolist() == [0]
    assert frame.index[frame.error_code == "-32602"].tolist() == [1]


def test_args_holding_key_lookalikes_load_exactly_like_the_reference(root: Path) -> None:
    err = {"code": -32000, "template": "{message}", "template_id": "ab" * 8}
    tricky = [{"a": "num:1", "outcome": "str<8"}, {"latency_ms": "num:2", "outcome": "ok"},
              {"error": {"code": "x"}, "shim_self_us": "num:1"}, {"args": "str<8"}, {}]
    records = [record(i + 1, args=a, outcome="error", error=err if i % 2 else None)
               for i, a in enumerate(tricky * 2)]
    append_records(root, records)
    table = open_store(root).calls
    assert plain(table).equals(reference(root))
    assert [json.loads(a) for a in table.column("args").to_pylist()] == [
        CallRecord.from_dict({"args": a, **{k: v for k, v in record(1).to_dict().items() if k != "args"}}
                             ).sanitized().args for a in tricky * 2]
