"""Readiness history and the SPEC 7.3 delta rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpeval_nb import MeasurementProfile, TrendPoint, append_records, open_store, readiness_history
from mcpeval_nb.analysis import trend_delta

P1 = MeasurementProfile(evaluator_version="0.4.0", platform="linux", architecture="x86_64")
P2 = MeasurementProfile(evaluator_version="0.4.0", platform="linux", architecture="aarch64")
M1, M2 = "a" * 64, "b" * 64
STD = "mcpeval-standard/2"


def point(score: int, *, standard: str | None = STD, profile: MeasurementProfile | None = P1,
          manifest: str | None = M1, ts: str = "2026-09-30T18:03:04.761Z",
          server: str = "demo") -> TrendPoint:
    return TrendPoint(ts=ts, server=server, passed=True, cases_total=1, cases_passed=1, score=score,
                      manifest_sha256=manifest, standard=standard, measurement_profile=profile)


@pytest.mark.parametrize(("previous", "current", "expected"), [
    (None, point(90), ""),
    (point(90, standard=None), point(91), "standard changed"),
    (point(90, standard="mcpeval-standard/1"), point(91), "standard changed"),
    (point(90, profile=None), point(91), "measurement profile unavailable"),
    (point(90), point(91, profile=None), "measurement profile unavailable"),
    (point(90), point(91, profile=P2), "measurement profile changed"),
    (point(90, standard=None, profile=P1), point(91, standard=None, profile=P2),
     "measurement profile changed"),
    (point(90), point(95, manifest=M2), "+5"),
    (point(90), point(90), "+0"),
    (point(91), point(90), "-1"),
    (point(90, standard=None, profile=None), point(88, standard=None, profile=None), "-2"),
    (point(90, standard=None, profile=None), point(88, standard=None, profile=None, manifest=M2),
     "manifest changed"),
    (point(90, standard=None, profile=None, manifest=None), point(93, standard=None, profile=None,
                                                                  manifest=None), "+3"),
])
def test_trend_delta_follows_the_rules_in_order(previous: TrendPoint | None, current: TrendPoint,
                                                expected: str) -> None:
    assert trend_delta(previous, current) == expected


def test_trend_delta_accepts_table_rows_as_well_as_points(root: Path) -> None:
    append_records(root, [point(80, ts="2026-09-01T00:00:00.000Z"), point(85, ts="2026-09-02T00:00:00.000Z")])
    rows = open_store(root).trends.to_pylist()
    assert trend_delta(rows[0], rows[1]) == "+5"


def test_readiness_history_groups_servers_and_keeps_the_newest_points(root: Path) -> None:
    append_records(root, [
        point(70, server="zeta", ts="2026-09-01T00:00:00.000Z"),
        point(60, server="alpha", ts="2026-09-03T00:00:00.000Z"),
        point(50, server="alpha", ts="2026-09-01T00:00:00.000Z"),
        point(55, server="alpha", ts="2026-09-02T00:00:00.000Z", profile=P2),
        point(65, server="alpha", ts="2026-09-04T00:00:00.000Z", standard="mcpeval-standard/1"),
    ])
    history = readiness_history(open_store(root).trends)
    rows = [(r["server"], r["score"], r["delta"]) for r in history.to_pylist()]
    assert rows == [("alpha", 50, ""), ("alpha", 55, "measurement profile changed"),
                    ("alpha", 60, "measurement profile changed"), ("alpha", 65, "standard changed"),
                    ("zeta", 70, "")]
    assert history.column("standard_changed").to_pylist() == [False, False, False, True, False]
    last = readiness_history(open_store(root).trends, last=2)
    assert [(r["server"], r["score"], r["delta"]) for r in last.to_pylist()] == [
        ("alpha", 60, ""), ("alpha", 65, "standard changed"), ("zeta", 70, "")]
    assert readiness_history(open_store(root).trends, last=0).num_rows == 0
