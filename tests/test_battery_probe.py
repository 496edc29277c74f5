"""The battery inside a probe run: readiness in the report, trend points only for full runs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import mcpeval_nb
import mcpeval_nb.testing.servers as fixture_servers
from mcpeval_nb.root.layout import history_path

CLEAN = [sys.executable, str(Path(fixture_servers.__file__).parent / "probe_clean.py")]
MANIFEST = {"version": 1, "probes": [
    {"id": "pages", "probe": "pagination", "access": "read_only", "max_pages": 3},
    {"id": "status", "probe": "schema-guessability", "access": "read_only", "tool": "describe_status",
     "arguments": {}}]}


def options(**kw: object) -> mcpeval_nb.ProbeOptions:
    base: dict[str, object] = {"server": "demo", "journal": False}
    base.update(kw)
    return mcpeval_nb.ProbeOptions(**base)  # type: ignore[arg-type]


def test_a_full_run_fills_the_report_readiness_and_records_its_trend_point(root: Path) -> None:
    report = mcpeval_nb.run_probes(CLEAN, manifest=MANIFEST, options=options(root=root))
    assert report.gate == {"passed": 2, "total": 2} and report.readiness_error is None
    readiness = mcpeval_nb.parse_readiness(report.to_json()["readiness"])
    assert readiness == report.readiness
    assert readiness.standard == "mcpeval-standard/2" and readiness.surface.tools == 7
    text = report.render("text")
    assert f"demo gate 2/2 passed\ndemo readiness {readiness.score}/100 standard=mcpeval-standard/2\n" in text
    assert "demo surface tools=7 read_only=5 writers=2 exercised=5\n" in text
    points = mcpeval_nb.load_trends(root=root)
    assert points is not None and len(points) == 1
    point = points[0]
    assert (point.server, point.passed, point.cases_total, point.cases_passed, point.score) == (
        "demo", True, 2, 2, readiness.score)
    assert point.manifest_sha256 == report.manifest_sha256 and point.standard == "mcpeval-standard/2"
    assert point.measurement_profile == readiness.measurement_profile


@pytest.mark.parametrize("kw", [{"battery": None}, {"case_id": "pages"}, {"probe": "pagination"}],
                         ids=["gate-only", "case", "probe"])
def test_gate_only_and_selected_runs_have_no_readiness_and_record_no_trend_point(
        root: Path, kw: dict[str, object]) -> None:
    report = mcpeval_nb.run_probes(CLEAN, manifest=MANIFEST, options=options(root=root, **kw))
    assert report.readiness is None and report.readiness_error is None
    assert mcpeval_nb.record_report_trend(report, root=root) is None
    assert not history_path(root).exists() and not root.exists()


def test_a_full_run_without_history_has_readiness_and_records_nothing(root: Path) -> None:
    report = mcpeval_nb.run_probes(CLEAN, manifest=MANIFEST, options=options(root=root, history=False))
    assert report.readiness is not None and not root.exists()


def test_score_server_records_its_trend_point_unless_told_not_to(root: Path) -> None:
    target = mcpeval_nb.StdioTarget(tuple(CLEAN))
    quiet = mcpeval_nb.score_server(target, server="demo",
                                    options=mcpeval_nb.BatteryOptions(history=False, root=root))
    assert quiet.readiness is not None and not history_path(root).exists()
    report = mcpeval_nb.score_server(target, server="demo", options=mcpeval_nb.BatteryOptions(root=root))
    points = mcpeval_nb.load_trends(root=root)
    assert report.readiness is not None and points is not None and len(points) == 1
    point = points[0]
    assert (point.score, point.cases_total, point.manifest_sha256) == (report.readiness.score, 0, None)
