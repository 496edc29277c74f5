"""Integers are integers at every write boundary, and one bad record never takes the store offline
(issue 29, "A local client can break every reader"; issue 28's annotate items).

Before: serve's ``record_annotation`` wrote ``seq`` as ``1.0``, ``-0.0`` or ``1e19`` and from then on
``summary``, ``index``, ``promote`` and ``open_store`` exited 3; ``annotate`` wrote dangling annotations,
hashed a mistyped token again and created a missing root.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import mcpeval_nb as me
from tests.ci_support import cli
from tests.serve_support import annotations, call, seed_call, serving

TS = "2026-08-04T12:00:00.000Z"
TOKEN = me.opaque_session("s1")
FLOATS = [1.0, -0.0, 1e19, 2.5]
NOT_U64 = [*FLOATS, True, -1, 2**64]


def _calls(root: Path) -> None:
    """Two sessions failing the same way (so promote has a finding) and an ok call."""
    salt = me.load_salt(root)
    error = me.error_info({"code": -32000, "message": "boom"}, salt)
    records = [me.CallRecord(ts=TS, session=s, seq=q, server="srv", method="tools/call", tool="click",
                             outcome="error" if q == 2 else "ok", error=error if q == 2 else None,
                             latency_ms=2)
               for s in ("s1", "s2") for q in (1, 2)]
    me.append_records(root, records)


def _float_annotation_line(seq: str) -> str:
    """The line the unvalidated writer used to produce (serde and every reader refuse a float seq)."""
    return (f'{{"ts":"{TS}","session":"{TOKEN}","seq":{seq},"kind":"workaround","note":"n"}}\n')


@pytest.mark.parametrize("seq", NOT_U64)
def test_serve_refuses_a_seq_that_is_not_an_unsigned_integer_and_writes_nothing(root: Path,
                                                                                seq: Any) -> None:
    seed_call(root, "s1", 1)
    with serving(root) as running:
        reply = call(running.address, "record_annotation",
                     {"session": "s1", "seq": seq, "kind": "workaround", "note": "n"})
    assert "error" in reply or reply["result"].get("isError"), reply
    text = json.dumps(reply)
    assert "seq" in text and ("unsigned 64-bit integer" in text or "argument seq is invalid" in text)
    assert annotations(root) == []


@pytest.mark.parametrize("seq", NOT_U64)
def test_the_api_and_the_journal_writer_refuse_a_non_integer_seq(root: Path, seq: Any) -> None:
    seed_call(root, "s1", 1)
    with pytest.raises(me.UsageError, match="seq must be an unsigned 64-bit integer"):
        me.annotate("s1", seq, "workaround", "n", root=root)
    with pytest.raises(me.UsageError, match="field `seq` must be an unsigned 64-bit integer"):
        me.append_record(root, me.AnnotationRecord(ts=TS, session="s1", seq=seq, kind="workaround", note="n"))
    with pytest.raises(me.UsageError, match="CallRecord field `seq`"):
        me.append_record(root, me.CallRecord(ts=TS, session="s9", seq=seq, server="srv", method="tools/call",
                                             outcome="ok"))
    assert annotations(root) == []
    assert len(me.open_store(root, errors="raise").calls) == 1


@pytest.mark.parametrize("field", ["latency_ms", "shim_self_us"])
def test_other_unsigned_fields_are_checked_too(root: Path, field: str) -> None:
    record = me.CallRecord(ts=TS, session="s", seq=1, server="srv", method="tools/call", outcome="ok",
                           **{field: 3.0})  # type: ignore[arg-type]
    with pytest.raises(me.UsageError, match=f"field `{field}`"):
        me.append_records(root, [record])
    point = me.TrendPoint(ts=TS, server="srv", passed=True, cases_total=2, cases_passed=2,
                          score=99.5)  # type: ignore[arg-type]
    with pytest.raises(me.UsageError, match="field `score`"):
        me.record_trend(point, root=root)
    assert not (root / "store").exists()


def test_a_float_seq_on_disk_is_skipped_named_and_the_store_stays_usable(
        root: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _calls(root)
    path = root / "store" / "annotations-2026-08-04.jsonl"
    path.write_text("".join(_float_annotation_line(s) for s in ("1.0", "-0.0", "1e19")), encoding="utf-8")
    where = [f"{path}:{n}: invalid journal record" for n in (1, 2, 3)]

    store = me.open_store(root)
    assert store.calls.num_rows == 4 and store.annotations.num_rows == 0
    assert [(r["file"], r["line"]) for r in store.report.to_pylist()] == [(str(path), n) for n in (1, 2, 3)]

    code, out, _ = cli(capsys, "summary", "--root", str(root))
    assert code == 0 and "skipped 3 bad line(s):" in out and all(w in out for w in where)
    code, out, err = cli(capsys, "index", "--root", str(root))
    assert code == 0 and out == "indexed 4 calls, 2 failures, 0 annotations\n"
    assert "skipped 3 journal line(s) that are not usable records:" in err and all(w in err for w in where)
    code, out, _ = cli(capsys, "promote", "--root", str(root), "--threshold", "0")
    assert code == 0 and out.startswith("promoted 1 of 1 issues")
    code, out, _ = cli(capsys, "findings", "--root", str(root))
    assert code == 0 and out.startswith("finding finding-")
    assert "repro=" not in out  # no recorded arguments: no repro line, as the reference prints it
    calls = root / "store" / "calls-2026-08-04.jsonl"
    with calls.open("a", encoding="utf-8") as fh:  # a call line with a float seq: 5th line
        fh.write(f'{{"ts":"{TS}","session":"{TOKEN}","seq":5.0,"server":"srv","method":"tools/call",'
                 '"outcome":"ok","shim_self_us":0,"kind":"real"}\n')
    code, out, err = cli(capsys, "export-parquet", "--root", str(root), "--dest", str(tmp_path / "pq"))
    assert code == 0 and "(4 calls)" in out and f"{calls}:5: invalid journal record" in err
    code, _, err = cli(capsys, "index", "--root", str(root), "--full", "--errors", "raise")
    assert code == 3 and f"invalid journal record on line 5 of {calls}" in err


def test_a_refresh_after_the_bad_line_still_indexes_what_follows(root: Path) -> None:
    _calls(root)
    me.build_index(root)
    path = root / "store" / "annotations-2026-08-04.jsonl"
    with path.open("a", encoding="utf-8") as fh:
        fh.write(_float_annotation_line("1.0"))
    me.annotate("s1", 2, "false-success", "said ok", root=root)
    result = me.build_index(root)
    assert not result.full and result.annotations == 1
    assert [(s.file, s.line) for s in result.skipped_lines] == [(str(path), 1)]


# -- annotate's own refusals (issue 28: clear messages, exit 2, nothing written) ---------------------

def _annotate(capsys: pytest.CaptureFixture[str], root: Path, session: str, seq: str) -> tuple[int, str, str]:
    return cli(capsys, "annotate", "--root", str(root), "--session", session, "--seq", seq,
               "--kind", "workaround", "--note", "n")


@pytest.mark.parametrize(("session", "seq", "target"), [
    ("s1", "9", f"session {TOKEN} and seq 9"),
    ("never-recorded", "1", f"session {me.opaque_session('never-recorded')} and seq 1"),
])
def test_annotating_a_call_the_store_does_not_hold_exits_2_and_writes_nothing(
        root: Path, capsys: pytest.CaptureFixture[str], session: str, seq: str, target: str) -> None:
    _calls(root)
    code, out, err = _annotate(capsys, root, session, seq)
    assert (code, out) == (2, "")
    assert err == f"mcpeval-nb: no recorded call in {root / 'store'} has {target}; nothing written\n"
    assert annotations(root) == []


@pytest.mark.parametrize("session", ["session:abc", "SESSION:" + "0" * 63, TOKEN + "0", TOKEN[:-1] + "g"])
def test_a_mistyped_token_is_refused_instead_of_hashed_again(root: Path, capsys: pytest.CaptureFixture[str],
                                                             session: str) -> None:
    _calls(root)
    code, _, err = _annotate(capsys, root, session, "1")
    assert code == 2 and "is not a stored token (session: and 64 hexadecimal digits)" in err
    assert annotations(root) == []
    code, out, _ = _annotate(capsys, root, TOKEN.upper().replace("SESSION:", "session:"), "1")
    assert code == 0 and out == f"recorded workaround annotation for {TOKEN} seq 1\n"


def test_annotate_on_a_missing_root_exits_2_and_creates_nothing(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no-such-root"
    code, out, err = _annotate(capsys, missing, "s1", "1")
    assert (code, out) == (2, "")
    assert err == (f"mcpeval-nb: capture root {missing} does not exist; nothing written (an annotation "
                   "targets a recorded call)\n")
    assert not missing.exists()


def test_annotate_by_event_id_needs_that_event(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _calls(root)
    event = "0b6a2c8e-4d1f-4a5b-9c3d-2e1f0a9b8c7d"
    code, _, err = cli(capsys, "annotate", "--root", str(root), "--session", "s1", "--event-id", event,
                       "--kind", "workaround", "--note", "n")
    assert code == 2 and f"has event id {event}; nothing written" in err
