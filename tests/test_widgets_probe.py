"""ProbePanel headless: live manifest validation, the mutation double gate, runs, cancel, save."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import mcpeval_nb as me
import mcpeval_nb.testing.servers.probe_clean as probe_clean
import mcpeval_nb.testing.servers.transport_fault as transport_fault
from mcpeval_nb.widgets import ProbePanel
from tests.waiting import settled, until

REPO = Path(__file__).resolve().parent.parent
MANIFEST = REPO / "data" / "manifests" / "probe-fixture.manifest.json"
MUTATING = {
    "version": 1,
    "sandboxes": {"fixture": {"description": "in-memory state of the fixture"}},
    "probes": [
        {"id": "bounded-discovery", "probe": "discovery-cost", "access": "read_only", "max_tools": 10,
         "max_schema_bytes": 4000},
        {"id": "recover", "probe": "state-recovery", "access": "mutating", "sandbox": "fixture",
         "failure_tool": "break_session", "failure_arguments": {}, "recovery_tool": "recover_session",
         "recovery_arguments": {}, "validation_tool": "session_status", "validation_arguments": {}},
    ],
}


def _clean(mode: str = "clean") -> str:
    return f"{sys.executable} {probe_clean.__file__} {mode}"


def _panel(root: Path, **kwargs: object) -> ProbePanel:
    panel = ProbePanel(root, server="fixture", **kwargs)  # type: ignore[arg-type]
    panel.gate_only.value = True
    return panel


def test_manifest_errors_are_shown_inline_with_their_json_path(root: Path) -> None:
    panel = _panel(root, command=_clean())
    doc = json.loads(MANIFEST.read_text())
    doc["probes"][0]["max_tools"] = 0
    panel.editor.value = json.dumps(doc)
    assert panel.state.manifest is None
    assert panel.state.manifest_error_path == "/probes/0/max_tools"
    assert "/probes/0/max_tools" in panel.manifest_status.value
    assert panel.run_button.disabled
    panel.editor.value = MANIFEST.read_text()
    assert panel.state.manifest is not None and not panel.run_button.disabled
    assert "valid manifest: 5 case(s)" in panel.manifest_status.value


def test_mutation_box_cannot_be_ticked_without_a_sandboxed_mutating_case(root: Path) -> None:
    panel = _panel(root, command=_clean(), manifest=MANIFEST)
    assert panel.allow_mutation.disabled
    panel.allow_mutation.value = True
    assert panel.allow_mutation.value is False and panel.state.effective_allow_mutation is False


def test_the_shipped_mutating_manifest_enables_the_box_but_not_the_tick(root: Path) -> None:
    panel = _panel(root, command=_clean(), manifest=MANIFEST.parent / "probe-fixture-mutating.manifest.json")
    assert panel.state.manifest is not None and not panel.allow_mutation.disabled
    assert panel.allow_mutation.value is False and "recover-session" in panel.mutation_note.value
    assert panel.run() is False and "mutating probes require --allow-mutation" in panel.status.value


def test_mutating_case_is_refused_until_the_box_is_ticked_and_editing_clears_the_tick(root: Path) -> None:
    panel = _panel(root, command=_clean())
    panel.editor.value = json.dumps(MUTATING)
    assert not panel.allow_mutation.disabled and panel.allow_mutation.value is False
    assert panel.run() is False
    assert "mutating probes require --allow-mutation" in panel.status.value
    panel.allow_mutation.value = True
    assert panel.state.effective_allow_mutation
    changed = dict(MUTATING, timeout_ms=5000)
    panel.editor.value = json.dumps(changed)
    assert panel.allow_mutation.value is False and not panel.state.effective_allow_mutation
    panel.allow_mutation.value = True
    assert panel.run() is True
    assert settled(panel)
    verdicts = {r.id: r.verdict for r in panel.state.rows}
    assert verdicts["recover"] in ("pass", "fail") and verdicts["bounded-discovery"] == "pass"


def test_a_run_shows_verdicts_reason_labels_and_hints(root: Path) -> None:
    panel = _panel(root, command=_clean("broken"), manifest=MANIFEST)
    panel.run_button.click()
    assert settled(panel)
    verdicts = {r.id: (r.verdict, r.reason) for r in panel.state.rows}
    assert verdicts["literal-status"] == ("fail", "value-mismatch")
    assert verdicts["repeat-read"] == ("fail", "unexpected-outcome")
    assert verdicts["bounded-discovery"] == ("pass", None)
    html = panel.results.value
    assert "value-mismatch" in html and "make the tool" in html and "tool_count=7" in html
    assert "gate 3/5 passed" in panel.status.value
    assert panel.progress.value == 5 and panel.run_button.disabled is False


def test_a_failed_connection_is_reported_per_case_without_server_output(root: Path) -> None:
    panel = _panel(root, command=_clean("early-exit"), manifest=MANIFEST)
    panel.run_button.click()
    assert settled(panel)
    assert {r.verdict for r in panel.state.rows} == {"error"}
    assert all(r.reason is not None and r.reason.startswith("transport-") for r in panel.state.rows)


def test_cancel_stops_the_run_and_marks_the_remaining_cases_not_run(root: Path) -> None:
    manifest = {"version": 1, "probes": [
        {"id": f"slow-{i}", "probe": "degradation-over-n", "access": "read_only", "tool": "slow",
         "arguments": {"ms": 200}, "max_attempts": 10} for i in range(3)]}
    panel = _panel(root, command=f"{sys.executable} {transport_fault.__file__}")
    panel.editor.value = json.dumps(manifest)
    assert panel.run()
    assert until(lambda: panel.state.rows[0].verdict == "running")
    assert panel.cancel_button.disabled is False
    panel.cancel_button.click()
    assert settled(panel)
    report = panel.state.report
    assert report is not None and report.cancelled
    assert [r.verdict for r in panel.state.rows][1:] == ["not-run", "not-run"]
    assert "cancelled" in panel.status.value


def test_the_last_report_saves_as_probe_report_v2(root: Path, tmp_path: Path) -> None:
    panel = _panel(root, command=_clean(), manifest=MANIFEST)
    assert panel.save_button.disabled
    panel.run_button.click()
    assert settled(panel)
    panel.save_path.value = str(tmp_path / "report.json")
    panel.save_button.click()
    doc = json.loads((tmp_path / "report.json").read_text())
    assert doc["schema"] == "mcpeval.probe-report/v2" and doc["gate"] == {"passed": 5, "total": 5}
    assert "saved" in panel.save_status.value


def test_http_target_without_a_url_is_refused_with_a_named_field(root: Path) -> None:
    panel = _panel(root, manifest=MANIFEST)
    panel.target_kind.value = "http"
    assert panel.run() is False
    assert "URL" in panel.status.value


def test_a_loopback_http_target_runs_from_the_panel(root: Path) -> None:
    server = [sys.executable, str(Path(probe_clean.__file__).parent / "workflow.py"), "clean", "http"]
    proc = subprocess.Popen(server, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        panel = _panel(root, url=url)
        assert panel.state.target_kind == "http" and panel.command.layout.display == "none"
        panel.editor.value = json.dumps({"version": 1, "probes": [
            {"id": "pages", "probe": "pagination", "access": "read_only", "max_pages": 2},
            {"id": "status", "probe": "instruction-fidelity", "access": "read_only", "tool": "read_status",
             "arguments": {}, "expect": {"outcome": "ok", "equals": {"status": "ready"}}}]})
        panel.run_button.click()
        assert settled(panel)
        assert [(r.id, r.verdict) for r in panel.state.rows] == [("pages", "pass"), ("status", "pass")]
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_full_run_shows_readiness_areas_and_lost_checks_and_records_a_trend_point(root: Path) -> None:
    panel = ProbePanel(root, command=_clean(), manifest=MANIFEST, server="fixture")
    assert panel.gate_only.value is False
    panel.run_button.click()
    assert settled(panel)
    report = panel.state.report
    assert report is not None and report.readiness is not None
    score = report.readiness.score
    html = panel.readiness.value
    assert f"Readiness {score}/100" in html and "mcpeval-standard/2" in html
    for area in ("protocol", "catalog", "context", "error-honesty", "reliability", "coverage"):
        assert f">{area}<" in html
    lost = [c for a in report.readiness.areas for c in a.checks]
    assert lost and all(c.reason in html for c in lost)
    assert f"readiness {score}/100" in panel.status.value
    history = me.open_store(root).trends
    assert history.num_rows == 1 and history.column("score").to_pylist() == [score]


def test_a_run_of_one_probe_kind_skips_the_battery_and_records_no_trend(root: Path) -> None:
    panel = ProbePanel(root, command=_clean(), manifest=MANIFEST, server="fixture")
    panel.kind.value = "discovery-cost"
    panel.run_button.click()
    assert settled(panel)
    assert [r.id for r in panel.state.rows] == ["bounded-discovery"]
    assert panel.state.report is not None and panel.state.report.readiness is None
    assert panel.readiness.value == "" and panel.state.battery == "skipped"
    assert me.open_store(root).trends.num_rows == 0


def test_the_probe_kind_choice_follows_the_manifest(root: Path) -> None:
    panel = _panel(root, command=_clean())
    assert len(panel.kind.options) > 10  # no manifest yet: every kind
    panel.editor.value = MANIFEST.read_text()
    assert list(panel.kind.options) == ["(every case)", "discovery-cost", "token-cost", "error-honesty",
                                        "degradation-over-n", "instruction-fidelity"]
    panel.kind.value = "token-cost"
    assert panel.state.probe_kind == "token-cost"
    panel.editor.value = json.dumps({"version": 1, "probes": [
        {"id": "pages", "probe": "pagination", "access": "read_only", "max_pages": 2}]})
    assert list(panel.kind.options) == ["(every case)", "pagination"]
    assert panel.kind.value == "(every case)" and panel.state.probe_kind is None


def test_a_read_only_case_naming_a_writer_is_refused_in_the_panel_before_any_call(root: Path) -> None:
    panel = _panel(root, command=_clean())
    panel.editor.value = json.dumps({"version": 1, "probes": [
        {"id": "sneaky", "probe": "degradation-over-n", "access": "read_only", "tool": "break_session",
         "arguments": {}, "max_attempts": 2}]})
    assert panel.state.manifest is not None and panel.run() is True
    assert settled(panel)
    assert panel.state.report is None
    assert "probe case sneaky: a read-only case refuses a tool annotated as a writer" in panel.status.value
    assert not (root / "store").exists() or not list((root / "store").glob("calls-*.jsonl"))


def test_the_protocol_dropdown_runs_the_era_it_names(root: Path) -> None:
    from mcpeval_nb.testing.servers import modern_faults

    modern = f"{sys.executable} {modern_faults.__file__}"
    panel = ProbePanel(root, command=modern, server="modern")
    panel.editor.value = json.dumps({"version": 1, "probes": [
        {"id": "pages", "probe": "pagination", "access": "read_only", "max_pages": 2}]})
    panel.protocol.value = "legacy"
    panel.run_button.click()
    assert settled(panel)
    assert "requires protocol 2026-07-28; run with --protocol auto" in panel.status.value
    panel.protocol.value = "2026-07-28"
    panel.run_button.click()
    assert settled(panel)
    report = panel.state.report
    assert report is not None and report.modern and report.readiness is not None
    assert report.readiness.standard == "mcpeval-modern/1"
    assert "protocol 2026-07-28 (stateless)" in panel.readiness.value
