"""The share export with helper processes: the same envelope, the same errors, the same guarantees.

Every test forces the helper path (``ShareOptions(workers=2)``) on a store of several megabytes, so
each calls journal spans several chunks, and compares it with the in-process path (``workers=0``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mcpeval_nb import (
    AnnotationRecord,
    ReviewError,
    ShareOptions,
    ShareRefused,
    TrendPoint,
    append_record,
    append_records,
    export_share,
)
from mcpeval_nb.errors import RecordTooLarge
from mcpeval_nb.review.sharework import SpanJob, run_job
from tests import waiting
from tests.review_support import TS, append_raw, call, tree_bytes

CANARY = "zq7helper"
HELPERS = 2


def _awkward(i: int) -> str:
    """Hand-written lines: unsorted keys, spaces, CRLF, and now and then a number only the exact path
    writes as serde_json does (``-0``, a positive exponent)."""
    value = {"z": i, "a": {"y": [1, 2, {"d": "x", "c": None}], "b": True}, "m": "server-0", "seq": i}
    text = json.dumps(value, separators=(" , ", " : "))
    if i % 700 == 0:
        text = text[:-1] + ', "neg": -0, "big": 1.5e+21}'
    return text + ("\r\n" if i % 3 == 0 else "\n")


def _store(root: Path) -> Path:
    """Two multi-chunk calls journals (one ending in an unterminated record), annotations with and
    without notes, and probe history."""
    append_records(root, [call(seq, session=f"sess-{seq % 7}") for seq in range(9000)])
    other = root / "store" / "calls-2026-11-29.jsonl"
    append_raw(other, "".join(_awkward(i) for i in range(32000)) + '{"value":43}')
    # Not a journal the read rules know: normalised only (SPEC 11), so serde's number forms show.
    append_raw(root / "store" / "imported.jsonl", "".join(_awkward(i) for i in range(1400)) + '{"value":43}')
    for seq in range(40):
        append_record(root, AnnotationRecord(ts=TS, session="sess-a", seq=seq, kind="workaround",
                                             note=f"{CANARY} prose {seq}" if seq % 2 else ""))
    append_record(root, TrendPoint(ts=TS, server="weather", passed=True, cases_total=4, cases_passed=4,
                                   score=97))
    store = root / "store"
    assert (store / "calls-2026-11-29.jsonl").stat().st_size > 3 * 1024 * 1024 + 100_000
    return store


def _both(root: Path, tmp_path: Path, options: ShareOptions) -> tuple[dict[str, bytes], dict[str, bytes]]:
    results = []
    for workers in (0, HELPERS):
        dest = tmp_path / f"env-{workers}"
        opts = ShareOptions(include_probe_history=options.include_probe_history,
                            include_annotation_notes=options.include_annotation_notes, workers=workers)
        export_share(root, dest=dest, options=opts)
        results.append(tree_bytes(dest))
    return results[0], results[1]


@pytest.mark.parametrize("notes", [False, True])
def test_helpers_publish_the_same_bytes_as_the_in_process_export(root: Path, tmp_path: Path,
                                                                  notes: bool) -> None:
    _store(root)
    inline, helped = _both(root, tmp_path, ShareOptions(include_probe_history=True,
                                                        include_annotation_notes=notes))
    assert helped == inline
    assert any(name.startswith("store/probes/") for name in helped)
    assert helped["store/imported.jsonl"].endswith(b'{"value":43}\n')
    assert b'"neg":-0.0' in helped["store/imported.jsonl"]
    # The hand-written call journal's records are re-sanitised, in helpers as in process: extra keys
    # keep their names and store their values' shapes.
    assert helped["store/calls-2026-11-29.jsonl"].endswith(b'{"value":"num:43"}\n')
    assert b'"neg":"num:-0.0"' in helped["store/calls-2026-11-29.jsonl"]
    assert (CANARY.encode() in helped["store/annotations-2026-11-30.jsonl"]) is notes
    assert not [name for name in helped if "part" in name]


def test_helpers_refuse_the_same_flagged_records_and_publish_nothing(root: Path, tmp_path: Path) -> None:
    store = _store(root)
    calls = store / "calls-2026-11-29.jsonl"
    data = calls.read_bytes()
    cut = data.rfind(b"\n", 0, 3 * 1024 * 1024) + 1  # a secret in the third chunk, one near the start
    calls.write_bytes(data[:200].replace(b'"m" : "server-0"', f'"m" : "{CANARY}@example.org"'.encode(), 1)
                      + data[200:cut] + json.dumps({"p": f"/home/{CANARY}/x"}).encode() + b"\n"
                      + data[cut:])
    refusals = []
    for workers in (0, HELPERS):
        with pytest.raises(ShareRefused) as info:
            export_share(root, dest=tmp_path / f"env-{workers}", options=ShareOptions(workers=workers))
        assert not (tmp_path / f"env-{workers}").exists()
        assert CANARY not in str(info.value) + repr(info.value.flagged)
        refusals.append((info.value.flagged, info.value.files_flagged))
    assert refusals[0] == refusals[1]
    assert [flag.line for flag in refusals[0][0]][:2] == [1, data[:cut].count(b"\n") + 1]
    assert [name for name in os.listdir(tmp_path) if name.startswith(".mcpeval-share-")] == []


def test_helpers_name_the_same_line_for_invalid_json_and_the_first_error_wins(root: Path,
                                                                              tmp_path: Path) -> None:
    store = _store(root)
    calls = store / "calls-2026-11-29.jsonl"
    data = calls.read_bytes()
    cut = data.rfind(b"\n", 0, 2 * 1024 * 1024 + 5000) + 1  # invalid JSON in the third chunk...
    late = data.rfind(b"\n", 0, len(data) - 100_000) + 1  # ...and an over-long line further on
    calls.write_bytes(data[:cut] + f'{{"v": "{CANARY}"\n'.encode() + data[cut:late]
                      + b'{"v": "' + b"x" * (4 * 1024 * 1024) + b'"}\n' + data[late:])
    messages = []
    for workers in (0, HELPERS):
        with pytest.raises(ReviewError) as info:
            export_share(root, dest=tmp_path / f"env-{workers}", options=ShareOptions(workers=workers))
        assert not isinstance(info.value, RecordTooLarge)
        messages.append(str(info.value))
        assert not (tmp_path / f"env-{workers}").exists()
    line = data[:cut].count(b"\n") + 1
    assert messages[0] == messages[1]
    assert f"line {line}" in messages[1] and CANARY not in messages[1]
    assert [name for name in os.listdir(tmp_path) if name.startswith(".mcpeval-share-")] == []


def test_helpers_report_an_over_long_line_by_file_and_line(root: Path, tmp_path: Path) -> None:
    store = _store(root)
    calls = store / "calls-2026-11-29.jsonl"
    data = calls.read_bytes()
    cut = data.rfind(b"\n", 0, 3 * 1024 * 1024) + 1
    calls.write_bytes(data[:cut] + b'{"v": "' + CANARY.encode() * 500_000 + b'"}\n' + data[cut:])
    messages = []
    for workers in (0, HELPERS):
        with pytest.raises(RecordTooLarge) as info:
            export_share(root, dest=tmp_path / f"env-{workers}", options=ShareOptions(workers=workers))
        messages.append(str(info.value))
    line = data[:cut].count(b"\n") + 1
    assert messages[0] == messages[1] and f"line {line})" in messages[1]
    assert CANARY not in messages[1]


def test_helpers_call_progress_up_to_the_bytes_read(root: Path, tmp_path: Path) -> None:
    _store(root)
    seen: list[tuple[int, int]] = []
    result = export_share(root, dest=tmp_path / "env", options=ShareOptions(workers=HELPERS),
                          progress=lambda done, total: seen.append((done, total)))
    assert len(seen) > 5
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert seen[-1] == (result.bytes_read, result.bytes_read)


def _job(journal: Path, **changes: object) -> SpanJob:
    st = journal.stat()
    fields: dict[str, object] = dict(index=0, path=str(journal), relpath=journal.name, dev=st.st_dev,
                                     ino=st.st_ino, offset=0, length=st.st_size, tail=False,
                                     annotation=False, drop_note=False, part=str(journal) + ".part")
    fields.update(changes)
    return SpanJob(**fields)  # type: ignore[arg-type]


def test_a_helper_refuses_a_journal_that_is_not_the_one_the_parent_locked(tmp_path: Path) -> None:
    journal = tmp_path / "calls-x.jsonl"
    journal.write_text('{"b":1,"a":2}\n')
    done = run_job(_job(journal, ino=journal.stat().st_ino + 1))
    assert done.error is not None and str(journal) in done.error
    assert not Path(str(journal) + ".part").exists()
    swapped = tmp_path / "calls-y.jsonl"
    swapped.symlink_to(journal)
    done = run_job(_job(journal, path=str(swapped)))
    assert done.error is not None and "changed" in done.error
    done = run_job(_job(journal, length=journal.stat().st_size + 10))  # never past what is there
    assert done.error is not None
    done = run_job(_job(journal))
    assert done.error is None and (done.records, done.lines) == (1, 1)
    assert Path(str(journal) + ".part").read_bytes() == b'{"a":2,"b":1}\n'


def test_helpers_never_re_run_an_unguarded_script(root: Path, tmp_path: Path) -> None:
    """multiprocessing re-imports ``__main__`` in fork-server children; the share hides it from them."""
    import sys

    _store(root)
    body_runs = tmp_path / "body-runs"
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import mcpeval_nb\n"
        f"open({str(body_runs)!r}, 'a').write('ran\\n')\n"
        f"result = mcpeval_nb.export_share({str(root)!r}, dest={str(tmp_path / 'env')!r},\n"
        "                                  options=mcpeval_nb.ShareOptions(workers=2))\n"
        "print('records', result.records)\n", encoding="utf-8")
    done = waiting.run([sys.executable, str(script)], capture_output=True, text=True, stall_s=120,
                       check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "records" in done.stdout
    assert body_runs.read_text() == "ran\n"
