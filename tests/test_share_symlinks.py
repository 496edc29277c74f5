"""Symlink attacks and overlaps: each is refused with nothing written anywhere."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcpeval_nb import ReviewError, ShareOptions, ShareOutputError, export_share
from tests.review_support import DAY, clean_store, run_cli, tree_bytes


def _snapshot(*tops: Path) -> list[dict[str, bytes]]:
    # The audit log records the refusal itself (docs/governance.md): everything else stays as it was.
    return [{k: v for k, v in tree_bytes(top).items() if not k.endswith("audit.jsonl")} for top in tops]


def test_a_symlinked_store_is_refused(root: Path, tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    clean_store(real, calls=1)
    root.mkdir()
    (root / "store").symlink_to(real / "store")
    with pytest.raises(ReviewError, match="share refuses a symlinked store"):
        export_share(root, dest=tmp_path / "out" / "env")
    assert not (tmp_path / "out").exists()


def test_a_symlinked_journal_is_refused_before_anything_is_written(root: Path, tmp_path: Path) -> None:
    store = clean_store(root, calls=1)
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"clean":"looking"}\n')
    (store / "calls-2026-12-02.jsonl").symlink_to(secret)
    with pytest.raises(ReviewError, match="share refuses symlinks in the store"):
        export_share(root, dest=tmp_path / "out" / "env")
    assert not (tmp_path / "out").exists()


def test_a_symlinked_probe_history_is_refused_even_when_probes_are_excluded(root: Path,
                                                                             tmp_path: Path) -> None:
    store = clean_store(root, calls=1)
    (store / "probes" / "history.jsonl").unlink()
    other = tmp_path / "h.jsonl"
    other.write_text("{}\n")
    (store / "probes" / "history.jsonl").symlink_to(other)
    with pytest.raises(ReviewError, match="symlinks"):
        export_share(root, dest=tmp_path / "env", options=ShareOptions(include_probe_history=True))
    assert not (tmp_path / "env").exists()


def test_a_symlinked_output_is_refused(root: Path, tmp_path: Path) -> None:
    clean_store(root, calls=1)
    target = tmp_path / "target"
    target.mkdir()
    (tmp_path / "env").symlink_to(target)
    before = _snapshot(tmp_path / "target", root)
    with pytest.raises(ShareOutputError, match="share refuses a symlinked output"):
        export_share(root, dest=tmp_path / "env", options=ShareOptions(force=True))
    assert _snapshot(tmp_path / "target", root) == before
    assert os.path.islink(tmp_path / "env")


def test_an_output_under_a_symlinked_parent_that_points_into_the_store_is_refused(root: Path,
                                                                                   tmp_path: Path) -> None:
    store = clean_store(root, calls=1)
    (tmp_path / "innocent").symlink_to(store)
    before = _snapshot(root)
    with pytest.raises(ShareOutputError, match="overlaps the capture store"):
        export_share(root, dest=tmp_path / "innocent" / "env")
    assert _snapshot(root) == before


def test_an_output_inside_the_store_is_refused(root: Path) -> None:
    store = clean_store(root, calls=1)
    before = _snapshot(root)
    with pytest.raises(ShareOutputError, match="overlaps the capture store"):
        export_share(root, dest=store / "env")
    assert _snapshot(root) == before


def test_the_store_inside_the_output_is_refused(root: Path, tmp_path: Path) -> None:
    clean_store(root, calls=1)
    before = _snapshot(tmp_path)
    for dest in (root, tmp_path):
        with pytest.raises(ShareOutputError, match="overlaps the capture store"):
            export_share(root, dest=dest, options=ShareOptions(force=True))
    assert _snapshot(tmp_path) == before


def test_an_output_that_is_a_file_is_refused(root: Path, tmp_path: Path) -> None:
    clean_store(root, calls=1)
    (tmp_path / "env").write_text("a file")
    with pytest.raises(ShareOutputError, match="must be a directory"):
        export_share(root, dest=tmp_path / "env", options=ShareOptions(force=True))
    assert (tmp_path / "env").read_text() == "a file"


def test_cli_refuses_a_symlinked_output_with_exit_2(root: Path, tmp_path: Path) -> None:
    clean_store(root, calls=1)
    (tmp_path / "t").mkdir()
    (tmp_path / "env").symlink_to(tmp_path / "t")
    result = run_cli("share", "--dir", str(tmp_path / "env"), root=root)
    assert result.returncode == 2 and "symlinked output" in result.stderr
    assert os.listdir(tmp_path / "t") == []


def test_the_salt_and_derived_databases_never_enter_the_envelope(root: Path, tmp_path: Path) -> None:
    store = clean_store(root, calls=1)
    (root / ".salt").write_bytes(b"s" * 32)
    (root / "trends.db").write_bytes(b"db")
    (store / "manifest.json").write_text("{}")
    export_share(root, dest=tmp_path / "env")
    names = set(tree_bytes(tmp_path / "env"))
    assert names == {"SHARE.md", "store/", f"store/calls-{DAY}.jsonl", f"store/annotations-{DAY}.jsonl"}


def test_an_output_beside_the_store_inside_the_root_is_refused(root: Path) -> None:
    # docs/review.md: an envelope beside .salt invites sharing the whole root (issue 19 item 4)
    clean_store(root, calls=1)
    with pytest.raises(ShareOutputError, match="must be outside the capture root"):
        export_share(root, dest=root / "envelopes" / "one")
    assert not (root / "envelopes").exists()
