"""The battery hooked into the probe runner: readiness in the report, trend points only for full runs."""

from __future__ import annotations

import sys
from pathlib import Path

import mcpeval_nb
import mcpeval_nb.testing.servers as fixture_servers
from mcpeval_nb.home import history_path

CLEAN = [sys.executable, str(Path(fixture_servers.__file__).parent / "probe_clean.py")]
MANIFEST = {"version": 1, "probes": [
    {"id": "pages", "probe": "pagination", "access": "read_only", "max_pages": 3},
    {"id": "status", "probe": "schema-guessability", "access": "read_only", "tool": "describe_status",
     "arguments": {}}]}


def options(**kw: object) -> mcpeval_nb.ProbeOptions:
    base: dict[str, object] = {"server": "demo", "journal": False,
                               "battery": mcpeval_nb.battery_hook("standard")}
    base.update(kw)
    return mcpeval_nb.ProbeOptions(**base)  # type: ignore[arg-type]


def test_the_standard_battery_is_registered_and_fills_the_report_readiness(root: Path) -> None:
    report = mcpeval_nb.run_probes(CLEAN, manifest=MANIFEST, options=options())
    assert report.gate == {"passed": 2, "total": 2} and report.readiness_error is None
    readiness = mcpeval_nb.parse_readiness(report.to_json()["readiness"])
    assert readiness.standard == "mcpeval-standard/2" and readiness.surface.tools == 7
    text = report.render("text")
    assert f"demo gate 2/2 passed\ndemo readiness {readiness.score}/100 standard=mcpeval-standard/2\n" in text
    assert "demo surface tools=7 read_only=5 writers=2 exercised=5\n" in text
    mcpeval_nb.record_report_trend(report, root=root)
    point = mcpeval_nb.load_trends(root=root)[0]  # type: ignore[index]
    assert (point.server, point.passed, point.cases_total, point.cases_passed, point.score) == (
        "demo", True, 2, 2, readiness.score)
    assert point.manifest_sha256 == report.manifest_sha256 and point.standard == "mcpeval-standard/2"
    assert point.measurement_profile == readiness.measurement_profile


def test_gate_only_and_selected_probe_runs_record_no_trend_point(root: Path) -> None:
    gate_only = mcpeval_nb.run_probes(CLEAN, manifest=MANIFEST, options=options(battery=None))
    selected = mcpeval_nb.run_probes(CLEAN, manifest=MANIFEST, options=options(case_id="pages"))
    for report in (gate_only, selected):
        assert report.readiness is None
        assert mcpeval_nb.record_report_trend(report, root=root) is None
    assert not history_path(root).exists() and not root.exists()
