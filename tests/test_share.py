"""The share envelope (SPEC 11): normalised checked snapshots, SHARE.md bytes, refusal on a flagged sweep,
--force, and the previous envelope preserved on every failure."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from mcpeval_nb import (
    AnnotationRecord,
    ReviewError,
    ShareOptions,
    ShareOutputError,
    ShareRefused,
    append_record,
    export_share,
    load_salt,
)
from mcpeval_nb.jsonfmt import dumps, loads
from mcpeval_nb.review import share_md
from tests.review_support import DAY, TS, append_raw, clean_store, run_cli, run_cli_process, tree_bytes

CANARY = "zq7canary"


def _normalized(path: Path) -> bytes:
    return b"".join((dumps(loads(line), sort_keys=True) + "\n").encode()
                    for line in path.read_bytes().splitlines() if line.strip())


def test_pinned_normalisation_examples(root: Path, tmp_path: Path) -> None:
    store = root / "store"
    append_raw(store / "a.jsonl", '{ "value" : 42, "shape" : "str<32" }\r\n')
    append_raw(store / "b.jsonl", '{"value":43}')
    result = export_share(root, dest=tmp_path / "env")
    assert (tmp_path / "env/store/a.jsonl").read_bytes() == b'{"shape":"str<32","value":42}\n'
    assert (tmp_path / "env/store/b.jsonl").read_bytes() == b'{"value":43}\n'
    assert result.files == ("a.jsonl", "b.jsonl") and result.records == 2


def test_envelope_holds_sorted_records_and_exact_share_md(root: Path, tmp_path: Path) -> None:
    store = clean_store(root, calls=7, note="some prose")
    load_salt(root)
    (root / "index.db").write_bytes(b"sqlite")
    (store / "README.txt").write_text("not a journal")
    dest = tmp_path / "out" / "env"
    export_share(root, dest=dest)
    tree = tree_bytes(dest)
    assert sorted(tree) == ["SHARE.md", "store/", f"store/annotations-{DAY}.jsonl",
                            f"store/calls-{DAY}.jsonl"]
    calls = store / f"calls-{DAY}.jsonl"
    assert tree[f"store/calls-{DAY}.jsonl"] == _normalized(calls)
    note_free = json.loads(tree[f"store/annotations-{DAY}.jsonl"])
    assert note_free["note"] == "" and note_free["kind"] == "workaround"
    assert tree["SHARE.md"].decode() == share_md(2, None)
    assert tree["SHARE.md"].decode().endswith(
        "Annotation prose: excluded. Typed annotation metadata is retained.\n\n"
        "Keep this envelope separate from any file that contains the salt.\n")
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o700
    assert not any(name.startswith(".mcpeval-share-") for name in os.listdir(dest.parent))


def test_share_md_bytes_are_exact() -> None:
    assert share_md(3, 2) == (
        "# mcpeval share envelope\n\n"
        "Checked JSONL snapshots from store/. Excludes the fingerprint salt, index.db, and manifests.\n\n"
        "Redaction sweep: clean (3 JSONL files scanned). This heuristic scan does not prove arbitrary "
        "metadata is non-sensitive.\n\n"
        "ATTENTION: 2 annotation note(s) explicitly included; review before sharing.\n\n"
        "Keep this envelope separate from any file that contains the salt.\n")


def test_probe_history_only_with_its_flag(root: Path, tmp_path: Path) -> None:
    clean_store(root, calls=1)
    export_share(root, dest=tmp_path / "a")
    export_share(root, dest=tmp_path / "b", options=ShareOptions(include_probe_history=True))
    assert "store/probes/history.jsonl" not in tree_bytes(tmp_path / "a")
    assert "store/probes/history.jsonl" in tree_bytes(tmp_path / "b")
    assert "(3 JSONL files scanned)" in (tmp_path / "b/SHARE.md").read_text()


def test_annotation_notes_are_kept_and_counted_only_when_asked(root: Path, tmp_path: Path) -> None:
    clean_store(root, calls=1, note="kept prose")
    append_record(root, AnnotationRecord(ts=TS, session="s2", seq=4, kind="false-success", note="  "))
    result = export_share(root, dest=tmp_path / "env", options=ShareOptions(include_annotation_notes=True))
    notes = [json.loads(line)["note"] for line in
             (tmp_path / f"env/store/annotations-{DAY}.jsonl").read_text().splitlines()]
    assert notes == ["kept prose", "  "]
    assert result.notes_included == 1
    assert "ATTENTION: 1 annotation note(s) explicitly included" in (tmp_path / "env/SHARE.md").read_text()


def test_a_flagged_sweep_publishes_nothing_and_names_locations_only(root: Path, tmp_path: Path) -> None:
    store = clean_store(root, calls=3)
    calls = store / f"calls-{DAY}.jsonl"
    append_raw(calls, json.dumps({"v": f"{CANARY}@example.org"}) + "\n")
    append_raw(store / "other.jsonl", json.dumps({"p": f"/home/{CANARY}"}) + "\n")
    with pytest.raises(ShareRefused) as info:
        export_share(root, dest=tmp_path / "env")
    assert info.value.exit_code == 1 and info.value.files_flagged == 2
    assert CANARY not in str(info.value) + repr(info.value.flagged)
    canon = Path(os.path.realpath(store))
    assert [(f.path, f.line) for f in info.value.flagged] == [(canon / f"calls-{DAY}.jsonl", 4),
                                                              (canon / "other.jsonl", 1)]
    assert os.listdir(tmp_path) == ["capture-root"]
    result = run_cli_process("share", "--dir", str(tmp_path / "env"), root=root)
    assert result.returncode == 1
    assert f"{canon}/calls-{DAY}.jsonl:4" in result.stderr
    assert "redaction sweep flagged 2 file(s)" in result.stderr
    assert CANARY not in result.stdout + result.stderr
    assert not (tmp_path / "env").exists()


def test_an_escaped_secret_is_flagged_in_the_normalised_bytes(root: Path, tmp_path: Path) -> None:
    store = clean_store(root, calls=1)
    append_raw(store / f"calls-{DAY}.jsonl", '{"v":"a\\u0040b"}\n')
    with pytest.raises(ShareRefused):
        export_share(root, dest=tmp_path / "env")


def test_a_non_empty_output_needs_force_and_force_replaces_the_whole_envelope(root: Path,
                                                                              tmp_path: Path) -> None:
    clean_store(root, calls=2)
    dest = tmp_path / "env"
    dest.mkdir()
    (dest / "stale.txt").write_text("old")
    with pytest.raises(ShareOutputError, match="not empty; pass --force"):
        export_share(root, dest=dest)
    assert tree_bytes(dest) == {"stale.txt": b"old"}
    export_share(root, dest=dest, options=ShareOptions(force=True))
    assert "stale.txt" not in tree_bytes(dest) and "SHARE.md" in tree_bytes(dest)
    assert run_cli("share", "--dir", str(dest), root=root).returncode == 2


def test_an_empty_existing_output_is_used_without_force(root: Path, tmp_path: Path) -> None:
    clean_store(root, calls=1)
    (tmp_path / "env").mkdir()
    export_share(root, dest=tmp_path / "env")
    assert (tmp_path / "env/SHARE.md").exists()


@pytest.mark.parametrize(("text", "message"), [
    ('{"ok":1}\n{"broken":\n', "invalid JSON record in calls-x.jsonl line 2"),
    ('{"ok":1}\n[1,2]\n', "store records must be JSON objects (calls-x.jsonl line 2)"),
    ('{"ok":1}\n{"half":"writ', "incomplete trailing record in calls-x.jsonl line 2"),
    ('{"ok":1}\n{"n":1e400}\n', "invalid JSON record in calls-x.jsonl line 2"),
    ('{"ok":1}\n' + "[" * 130 + "]" * 130 + "\n", "invalid JSON record in calls-x.jsonl line 2"),
])
def test_a_failure_preserves_the_previous_envelope_and_removes_staging(root: Path, tmp_path: Path,
                                                                       text: str, message: str) -> None:
    clean_store(root, calls=2)
    dest = tmp_path / "env"
    export_share(root, dest=dest)
    before = tree_bytes(dest)
    append_raw(root / "store" / "calls-x.jsonl", text)
    with pytest.raises(ReviewError) as info:
        export_share(root, dest=dest, options=ShareOptions(force=True))
    assert message in str(info.value)
    assert tree_bytes(dest) == before
    assert sorted(os.listdir(tmp_path)) == ["capture-root", "env"]


def test_an_invalid_utf8_record_stops_the_export(root: Path, tmp_path: Path) -> None:
    store = clean_store(root, calls=1)
    append_raw(store / "calls-y.jsonl", b'{"v":"\xc3"}\n')
    with pytest.raises(ReviewError, match="store snapshot is not UTF-8"):
        export_share(root, dest=tmp_path / "env")
    assert os.listdir(tmp_path) == ["capture-root"]


def test_a_missing_or_empty_store_is_refused(root: Path, tmp_path: Path) -> None:
    with pytest.raises(ReviewError, match="nothing to share: store does not exist"):
        export_share(root, dest=tmp_path / "env")
    (root / "store").mkdir(parents=True)
    with pytest.raises(ReviewError, match="the store contains no records to share"):
        export_share(root, dest=tmp_path / "env")
    assert not (tmp_path / "env").exists()


@pytest.mark.parametrize("number", ["1e20", "1E2", "-0", "-0.0", "0.00001", "1.5e-7", "18446744073709551616",
                                    "-9223372036854775809", "12345678901234567890", "1e16", "2.5e-5", "0.1"])
def test_numbers_are_normalised_as_serde_json_prints_them(root: Path, tmp_path: Path, number: str) -> None:
    append_raw(root / "store" / "n.jsonl", f'{{"n": {number}, "a": [{number}]}}\n')
    export_share(root, dest=tmp_path / "env")
    expected = (dumps(loads(f'{{"n": {number}, "a": [{number}]}}'), sort_keys=True) + "\n").encode()
    assert (tmp_path / "env/store/n.jsonl").read_bytes() == expected


def test_cli_share_prints_the_envelope_and_never_a_payload(root: Path, tmp_path: Path) -> None:
    clean_store(root, calls=2, note=f"{CANARY} prose")
    result = run_cli("share", "--dir", str(tmp_path / "env"), "--include-annotation-notes", root=root)
    assert result.returncode == 0, result.stderr
    assert "share envelope" in result.stdout
    assert "review" in result.stderr
    assert CANARY not in result.stdout + result.stderr


def test_share_progress_ends_at_the_bytes_read(root: Path, tmp_path: Path) -> None:
    clean_store(root, calls=50)
    seen: list[tuple[int, int]] = []
    result = export_share(root, dest=tmp_path / "env", progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1][0] == result.bytes_read == seen[-1][1]
