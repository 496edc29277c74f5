"""ProbePanel's ``result sizes`` mode headless: a call manifest file, the mutation tick, a real run."""

from __future__ import annotations

import sys
from pathlib import Path

import mcpeval_nb as me
import mcpeval_nb.testing.servers.result_sizes as result_sizes
from mcpeval_nb.widgets import ProbePanel
from tests.waiting import settled

REPO = Path(__file__).resolve().parent.parent
SAFE = REPO / "data" / "xray" / "safe.yaml"
COMMAND = f"{sys.executable} {result_sizes.__file__}"


def test_a_call_manifest_selects_the_mode_and_runs_on_the_panels_target(root: Path) -> None:
    panel = ProbePanel(root, command=COMMAND, server="fx", call_manifest=SAFE)
    assert panel.mode.value == "result sizes"
    assert panel.probe_box.layout.display == "none" and panel.sizes_box.layout.display is None
    assert "call manifest valid: 2 call(s)" in panel.call_status.value
    assert panel.sizes_mutation.disabled
    assert panel.run_sizes() and settled(panel)
    assert [(r.tool, r.outcome) for r in panel.sizes.rows] == [
        ("list_labels", "ok"),
        ("get_table_details", "ok"),
    ]
    assert "2 call(s), 0 error(s)" in panel.sizes_status.value
    assert "get_table_details" in panel.sizes_results.value and "CANARY" not in panel.sizes_results.value
    assert len(me.load_size_history(root=root)) == 1


def test_an_invalid_call_manifest_is_shown_and_cannot_run(root: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("calls:\n  - tool: fixed_text\n    args: {}\n    CANARY: 1\n")
    panel = ProbePanel(root, command=COMMAND, server="fx", call_manifest=path)
    assert (
        "calls entry #1: unknown field" in panel.call_status.value and "CANARY" not in panel.call_status.value
    )
    assert panel.sizes_run.disabled and not panel.run_sizes()


def test_the_mutation_tick_needs_a_sandboxed_mutating_call(root: Path, tmp_path: Path) -> None:
    path = tmp_path / "writer.yaml"
    path.write_text("calls:\n  - tool: wipe\n    args: {}\n    access: mutating\n    sandbox: fixture\n")
    panel = ProbePanel(root, command=COMMAND, server="fx", call_manifest=path)
    assert not panel.sizes_mutation.disabled
    assert panel.run_sizes() and settled(panel)  # refused by the gate: no tick yet
    assert panel.sizes.status == "mutating calls require --allow-mutation" and panel.sizes.rows == []
    panel.sizes_mutation.value = True
    assert panel.sizes.allow_mutation
    assert panel.run_sizes() and settled(panel)
    assert [(r.tool, r.outcome) for r in panel.sizes.rows] == [("wipe", "ok")]
    panel.call_path.value = str(SAFE)
    panel.call_load.click()
    assert panel.sizes_mutation.value is False and panel.sizes_mutation.disabled
