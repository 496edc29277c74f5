"""ReviewPanel headless: the sweep, the checklist gate on Export, flagged locations, the envelope."""

from __future__ import annotations

from pathlib import Path

from mcpeval_nb.testing.synthetic import synthetic_store
from mcpeval_nb.widgets import ReviewPanel
from tests.waiting import settled

SECRET_NOTE = "reviewer-canary-7f3a"


def _tick_all(panel: ReviewPanel) -> None:
    for box in panel.checklist:
        box.value = True
    panel.confirm.value = True


def test_export_stays_disabled_until_clean_sweep_checklist_and_confirmation(root: Path,
                                                                            tmp_path: Path) -> None:
    synthetic_store(root, calls=120)
    panel = ReviewPanel(root, dest=tmp_path / "envelope")
    _tick_all(panel)
    assert panel.export_button.disabled and panel.confirm.value is False  # no sweep yet
    panel.check_button.click()
    assert settled(panel)
    assert panel.state.clean and "clean" in panel.status.value
    assert panel.export_button.disabled
    panel.checklist[-1].value = False
    panel.confirm.value = True
    assert panel.confirm.value is False and panel.export_button.disabled  # checklist incomplete
    panel.checklist[-1].value = True
    panel.confirm.value = True
    assert not panel.export_button.disabled
    panel.notes.value = True  # changing what is shared asks for the confirmation again
    assert panel.confirm.value is False and panel.export_button.disabled
    assert panel.export() is False


def test_export_publishes_and_shows_share_md_and_the_envelope_path(root: Path, tmp_path: Path) -> None:
    synthetic_store(root, calls=120)
    dest = tmp_path / "envelope"
    panel = ReviewPanel(root, dest=dest)
    panel.check_button.click()
    assert settled(panel)
    _tick_all(panel)
    panel.export_button.click()
    assert settled(panel)
    assert (dest / "SHARE.md").is_file() and not (dest / ".salt").exists()
    assert str(dest) in panel.result.value and "mcpeval share envelope" in panel.result.value
    assert "envelope published" in panel.status.value
    assert panel.export_button.disabled and panel.confirm.value is False


def test_a_flagged_store_lists_locations_and_never_enables_export(root: Path, tmp_path: Path) -> None:
    synthetic_store(root, calls=50, annotations=False, trends=False)
    journal = sorted((root / "store").glob("calls-*.jsonl"))[0]
    with open(journal, "a", encoding="utf-8") as fh:
        fh.write('{"session":"s","note":"mail someone@example.com password ' + SECRET_NOTE + '"}\n')
    lines = journal.read_text().count("\n")
    panel = ReviewPanel(root, dest=tmp_path / "envelope")
    panel.check_button.click()
    assert settled(panel)
    assert not panel.state.clean
    assert f"store/{journal.name}:{lines}" in panel.flagged.value
    assert SECRET_NOTE not in panel.flagged.value and "example.com" not in panel.flagged.value
    _tick_all(panel)
    assert panel.export_button.disabled and panel.confirm.value is False
    assert not (tmp_path / "envelope").exists()


def test_annotation_notes_are_counted_for_review(root: Path, tmp_path: Path) -> None:
    store = synthetic_store(root, calls=300)
    panel = ReviewPanel(root, dest=tmp_path / "envelope")
    panel.check_button.click()
    assert settled(panel)
    assert store.annotations > 0 and panel.state.notes == store.annotations
    assert f"{store.annotations} annotation note(s)" in panel.flagged.value


def test_a_new_sweep_clears_the_confirmation(root: Path, tmp_path: Path) -> None:
    synthetic_store(root, calls=60)
    panel = ReviewPanel(root, dest=tmp_path / "envelope")
    panel.check_button.click()
    assert settled(panel)
    _tick_all(panel)
    assert not panel.export_button.disabled
    panel.check_button.click()
    assert settled(panel)
    assert panel.confirm.value is False and panel.export_button.disabled


def test_an_empty_root_has_nothing_to_share(root: Path, tmp_path: Path) -> None:
    panel = ReviewPanel(root, dest=tmp_path / "envelope")
    panel.check_button.click()
    assert settled(panel)
    assert "nothing to share" in panel.status.value
    _tick_all(panel)
    assert panel.export_button.disabled and not (root / "store").exists()


def test_the_panel_shows_the_last_exports_from_the_audit_log(root: Path, tmp_path: Path) -> None:
    synthetic_store(root, calls=60)
    panel = ReviewPanel(root, dest=tmp_path / "envelope")
    assert "No exports recorded" in panel.exports.value
    panel.check_button.click()
    assert settled(panel)
    _tick_all(panel)
    panel.export_button.click()
    assert settled(panel)
    assert [e["outcome"] for e in panel.state.exports] == ["done"]
    assert "Last exports" in panel.exports.value and "envelope" in panel.exports.value
    again = ReviewPanel(root, dest=tmp_path / "envelope")  # not empty and no force: refused
    again.check_button.click()
    assert settled(again)
    _tick_all(again)
    again.export_button.click()
    assert settled(again)
    assert [e["outcome"] for e in again.state.exports] == ["done", "refused"]
    assert "refused (unusable-output)" in again.exports.value
