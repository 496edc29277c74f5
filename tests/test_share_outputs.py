"""Where a share envelope may go, and what a failing disk does: refused outputs are usage errors naming
the rule (exit 2), a disk that fills mid-export is one line and exit 3, and nothing is published or lost
(issue 19 items 4 and 9)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fs_support import small_tmpfs
from tests.review_support import clean_store, run_cli, tree_bytes


@pytest.fixture
def store_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    clean_store(root, calls=5, note="CANARY-note")
    return root


def test_an_envelope_inside_the_capture_root_is_refused_as_the_docs_say(store_root: Path) -> None:
    before = tree_bytes(store_root)
    done = run_cli("share", "--dir", str(store_root / "envelope"), root=store_root)
    assert done.returncode == 2
    assert done.stderr.startswith("mcpeval-nb: share output must be outside the capture root")
    after = tree_bytes(store_root)
    audit = [json.loads(line) for line in after.pop(next(k for k in after if k.endswith("audit.jsonl")))
             .splitlines()]
    assert after == before  # nothing but the audit record of the refusal
    assert [(e["action"], e["outcome"], e["reason"]) for e in audit] == [("share", "refused",
                                                                         "unusable-output")]


def test_an_envelope_below_a_file_is_a_usage_error_not_a_traceback(store_root: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("keep")
    done = run_cli("share", "--dir", str(blocker / "sub"), root=store_root)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "is not a directory" in done.stderr and "Traceback" not in done.stderr
    assert blocker.read_text() == "keep"


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    with small_tmpfs(tmp_path / "disk", "16k") as mount:
        yield mount


def test_a_disk_that_fills_during_the_export_is_one_line_and_keeps_the_previous_envelope(
        tmp_path: Path, tiny_disk: Path) -> None:
    root = tmp_path / "big-root"
    clean_store(root, calls=400)
    envelope = tiny_disk / "envelope"
    envelope.mkdir()
    (envelope / "previous.txt").write_text("the previous envelope")
    done = run_cli("share", "--dir", str(envelope), "--force", root=root)
    assert done.returncode == 3 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("mcpeval-nb: cannot write the share envelope beside ")
    assert "No space left on device; nothing was published" in done.stderr
    assert (envelope / "previous.txt").read_text() == "the previous envelope"
    assert [p.name for p in tiny_disk.iterdir()] == ["envelope"]  # the staging directory is gone
