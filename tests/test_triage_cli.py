"""The findings commands end to end: index, promote, findings, generate, export-issues, and the panel."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import mcpeval_nb as me
from mcpeval_nb.demo.fixture_findings import FIXTURE_LABEL, capture_broken_sessions
from mcpeval_nb.widgets import FindingsPanel
from tests import waiting
from tests.waiting import settled

from .triage_support import build


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return waiting.run(
        [sys.executable, "-m", "mcpeval_nb", *args, "--root", str(root)],
        capture_output=True,
        text=True,
        stall_s=120,
    )


def test_index_promote_findings_lines(root: Path) -> None:
    build(root)
    assert (
        _cli(root, "findings").stderr
        == "mcpeval-nb: index database "
        + str(root / "index.db")
        + " does not exist; run `mcpeval-nb index` and `mcpeval-nb promote` first\n"
    )
    index = _cli(root, "index")
    assert (index.returncode, index.stdout) == (0, "indexed 23 calls, 12 failures, 4 annotations\n")
    empty = _cli(root, "findings", "--format", "json")
    assert empty.stdout == "[]\n"
    assert empty.stderr == me.FindingsView.EMPTY_NOTICE + "\n"
    assert "`mcpeval-nb promote`" in empty.stderr and "mcpeval promote" not in empty.stderr
    assert (
        _cli(root, "promote", "--threshold", "0").stdout
        == "promoted 4 of 5 issues (1 seen in one session only)\n"
    )
    agent = _cli(root, "findings").stdout.splitlines()
    assert len(agent) == 12 and agent[0].startswith("finding finding-")
    md = _cli(root, "findings", "--format", "md").stdout
    assert md.startswith("# Findings\n\n| finding |") and md.count("\n| `finding-") == 4
    assert _cli(root, "findings", "--state", "closed").stdout == ""
    assert _cli(root, "promote", "--threshold", "x").returncode == 2


def test_generate_writes_a_new_manifest_with_its_fill_lines(root: Path, tmp_path: Path) -> None:
    capture_broken_sessions(root, sessions=3)
    me.promote(root)
    finding = me.findings(root).to_pylist()[0]["finding_id"]
    out = tmp_path / "repro.json"
    refused = _cli(root, "generate", "--finding", finding, "--output", str(out))
    assert refused.returncode == 2 and "requires explicit --confirm-read-only" in refused.stderr
    run = _cli(root, "generate", "--finding", finding, "--output", str(out), "--confirm-read-only")
    assert run.returncode == 0
    assert run.stdout.splitlines() == [finding, "probe=degradation-over-n max_attempts=8"]  # rate 3/9
    case = json.loads(out.read_text())["probes"][0]
    assert (case["id"], case["tool"], case["access"], case["arguments"]) == (
        finding,
        "read_counter",
        "read_only",
        {},
    )
    again = _cli(root, "generate", "--finding", finding, "--output", str(out), "--confirm-read-only")
    assert again.returncode == 2 and "--force" in again.stderr
    assert (
        _cli(
            root, "generate", "--finding", finding, "--output", str(out), "--confirm-read-only", "--force"
        ).returncode
        == 0
    )
    me.load_manifest(out)  # a valid manifest
    bad = tmp_path / "big.json"
    bad.write_bytes(b" " * (64 * 1024 + 5))
    assert (
        "64 KiB"
        in _cli(
            root,
            "generate",
            "--finding",
            finding,
            "--output",
            str(tmp_path / "b.json"),
            "--confirm-read-only",
            "--expect",
            str(bad),
        ).stderr
    )


def test_export_issues_is_atomic_and_refuses_a_non_empty_directory(root: Path, tmp_path: Path) -> None:
    build(root)
    me.promote(root, threshold=0)
    dest = tmp_path / "issues"
    first = _cli(root, "export-issues", "--dir", str(dest))
    assert first.returncode == 0 and first.stdout.startswith("exported 4 finding(s) to ")
    names = sorted(p.name for p in dest.iterdir())
    assert len(names) == 4 and all(n.startswith("finding-") and n.endswith(".md") for n in names)
    text = (dest / names[0]).read_text()
    assert "## Shaped reproduction" in text and "## Probe history" in text
    (dest / "mine.txt").write_text("kept")
    refused = _cli(root, "export-issues", "--dir", str(dest))
    assert refused.returncode == 2 and "export-issues output is not empty" in refused.stderr
    assert (dest / "mine.txt").read_text() == "kept"
    assert _cli(root, "export-issues", "--dir", str(dest), "--force").returncode == 0
    assert sorted(p.name for p in dest.iterdir()) == names
    inside = _cli(root, "export-issues", "--dir", str(root / "store" / "x"))
    assert inside.returncode == 2 and "overlaps the capture store" in inside.stderr
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".mcpeval-share-")]


def test_a_cancelled_index_changes_nothing(root: Path) -> None:
    build(root)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(me.Cancelled):
        me.build_index(root, cancel=cancel)
    assert not (root / "index.db").exists()


def test_findings_panel_lists_explains_and_generates_only_after_the_attestation(
    root: Path, tmp_path: Path
) -> None:
    capture_broken_sessions(root, sessions=3)
    panel = FindingsPanel(root)
    assert settled(panel) and "does not exist" in panel.status.value
    panel.promote_button.click()
    assert settled(panel)
    assert f"{FIXTURE_LABEL}/read_counter" in panel.rows.value and panel.state.selected is not None
    assert "confidence=" in panel.explanation.value and panel.windows.value and panel.factors.value
    assert "No verify run yet." in panel.history.value and "degradation-over-n" in panel.preview.value
    out = tmp_path / "panel.json"
    panel.output.value = str(out)
    assert panel.generate_button.disabled and not panel.generate()
    panel.confirm.value = True
    assert not panel.generate_button.disabled
    panel.generate_button.click()
    assert settled(panel) and out.exists() and str(out) in panel.result.value
    assert not panel.confirm.value  # the attestation is asked for again next time
    panel.index_button.click()
    assert settled(panel) and panel.state.status.startswith("indexed 24 calls")
