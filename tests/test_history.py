"""Trend history: appends through the journal writer, strict/tolerant loading, and byte-exact rendering."""

from __future__ import annotations

import dataclasses
import multiprocessing
import textwrap
from pathlib import Path

import pytest

from mcpeval_nb.errors import ProfileError
from mcpeval_nb.privacy.records import MeasurementProfile, TrendPoint
from mcpeval_nb.probe.history import (
    NO_HISTORY,
    TrendHistoryCorrupt,
    load_trends,
    record_trend,
    render_trends,
    select_recent,
    trend_delta,
    trends_text,
)
from mcpeval_nb.root.layout import history_path
from tests.waiting import until

SHA_A = "0524c76b" + "a" * 56
SHA_B = "99fe0011" + "b" * 56
STD = "mcpeval-standard/2"
PROFILE = MeasurementProfile(evaluator_version="0.4.0", platform="linux", architecture="x86_64")


def point(ts: str, score: int, *, server: str = "demo", passed: bool = True, sha: str | None = SHA_A,
          standard: str | None = STD, profile: MeasurementProfile | None = PROFILE,
          cases: tuple[int, int] = (1, 1)) -> TrendPoint:
    return TrendPoint(ts=f"2026-09-{ts}Z", server=server, passed=passed, cases_passed=cases[0],
                      cases_total=cases[1], score=score, manifest_sha256=sha, standard=standard,
                      measurement_profile=profile)


def test_a_trend_point_is_appended_as_one_compact_line_in_struct_order(root: Path) -> None:
    path = record_trend(point("30T18:03:04.761", 91))
    assert path == history_path(root)
    assert path.read_bytes() == (
        b'{"ts":"2026-09-30T18:03:04.761Z","server":"demo","passed":true,"cases_total":1,"cases_passed":1,'
        b'"score":91,"manifest_sha256":"' + SHA_A.encode() + b'","standard":"mcpeval-standard/2",'
        b'"measurement_profile":{"schema":"mcpeval.measurement-profile/v1","evaluator_version":"0.4.0",'
        b'"platform":"linux","architecture":"x86_64","client_capabilities":"none","attested_read_only":false,'
        b'"skip_tools":[],"call_timeout_ms":15000,"repeats":3}}\n')


def test_missing_history_prints_the_exact_no_history_message(root: Path) -> None:
    assert trends_text(root=root) == ("no trend history yet; run `mcpeval-nb score` or `mcpeval-nb probe` "
                                      "first\n")
    assert NO_HISTORY.encode() == b"no trend history yet; run `mcpeval probe` first\n"


def test_rendering_groups_servers_ascending_oldest_first_with_every_delta_rule(root: Path) -> None:
    other = MeasurementProfile(evaluator_version="0.4.1", platform="linux", architecture="x86_64")
    for p in [
        point("01T00:00:00.000", 80),                                   # first: no delta
        point("02T00:00:00.000", 85),                                   # same everything: +5
        point("03T00:00:00.000", 85, passed=False, cases=(0, 1)),       # +0, FAILING
        point("04T00:00:00.000", 84, profile=other),                    # profile changed
        point("05T00:00:00.000", 84, profile=None),                     # profile unavailable
        point("06T00:00:00.000", 70, standard="mcpeval-standard/1", profile=None),  # standard changed
        point("01T00:00:00.000", 50, server="alpha", standard=None, profile=None, sha=SHA_A),
        point("02T00:00:00.000", 40, server="alpha", standard=None, profile=None, sha=SHA_A),  # -10
        point("03T00:00:00.000", 40, server="alpha", standard=None, profile=None, sha=SHA_B),  # manifest
        point("04T00:00:00.000", 45, server="alpha", standard=None, profile=None, sha=None),   # manifest
    ]:
        record_trend(p)
    assert trends_text(root=root, last=100) == textwrap.dedent("""\
        alpha
          2026-09-01T00:00:00.000Z score=50/100 cases=1/1 manifest=0524c76b
          2026-09-02T00:00:00.000Z score=40/100 cases=1/1 -10 manifest=0524c76b
          2026-09-03T00:00:00.000Z score=40/100 cases=1/1 manifest changed manifest=99fe0011
          2026-09-04T00:00:00.000Z score=45/100 cases=1/1 manifest changed
        demo
          2026-09-01T00:00:00.000Z score=80/100 cases=1/1 manifest=0524c76b
          2026-09-02T00:00:00.000Z score=85/100 cases=1/1 +5 manifest=0524c76b
          2026-09-03T00:00:00.000Z score=85/100 cases=0/1 FAILING +0 manifest=0524c76b
          2026-09-04T00:00:00.000Z score=84/100 cases=1/1 measurement profile changed manifest=0524c76b
          2026-09-05T00:00:00.000Z score=84/100 cases=1/1 measurement profile unavailable manifest=0524c76b
          2026-09-06T00:00:00.000Z score=70/100 cases=1/1 standard changed manifest=0524c76b
        """)


def test_legacy_points_without_standard_compare_scores_when_manifests_match() -> None:
    old = point("01T00:00:00.000", 60, standard=None, profile=None, sha=None)
    assert trend_delta(old, dataclasses.replace(old, score=75)) == " +15"
    assert trend_delta(None, old) == ""


def test_last_keeps_the_newest_points_per_server_by_timestamp_with_stable_ties(root: Path) -> None:
    # written out of order; two points share a timestamp and keep file order
    for p in [point("03T00:00:00.000", 3), point("01T00:00:00.000", 1), point("05T00:00:00.000", 5),
              point("05T00:00:00.000", 6), point("02T00:00:00.000", 2, server="zeta")]:
        record_trend(p)
    assert trends_text(root=root, last=2) == (
        "demo\n"
        "  2026-09-05T00:00:00.000Z score=5/100 cases=1/1 manifest=0524c76b\n"
        "  2026-09-05T00:00:00.000Z score=6/100 cases=1/1 +1 manifest=0524c76b\n"
        "zeta\n"
        "  2026-09-02T00:00:00.000Z score=2/100 cases=1/1 manifest=0524c76b\n")
    assert trends_text(root=root, last=0) == ""
    points = load_trends(root=root)
    assert points is not None and [p.score for p in points] == [3, 1, 5, 6, 2]
    assert [p.score for p in select_recent(points, 3)["demo"]] == [3, 5, 6]


def test_an_invalid_profile_is_refused_before_any_directory_is_created(root: Path) -> None:
    bad = dataclasses.replace(PROFILE, platform="CANARY platform value")
    with pytest.raises(ProfileError, match="invalid measurement conditions") as info:
        record_trend(point("01T00:00:00.000", 1, profile=bad))
    assert "CANARY" not in str(info.value)
    assert not root.exists()


def test_an_invalid_profile_leaves_existing_history_bytes_unchanged(root: Path) -> None:
    record_trend(point("01T00:00:00.000", 1))
    before = history_path(root).read_bytes()
    for bad in (dataclasses.replace(PROFILE, evaluator_version="CANARY"),
                dataclasses.replace(PROFILE, skip_tools=("b", "a")), dataclasses.replace(PROFILE, repeats=0),
                dataclasses.replace(PROFILE, schema="CANARY/v9")):
        with pytest.raises(ProfileError) as info:
            record_trend(point("02T00:00:00.000", 2, profile=bad))
        assert "CANARY" not in str(info.value)
    assert history_path(root).read_bytes() == before


def test_a_corrupt_complete_line_makes_history_corrupt_naming_the_line(root: Path) -> None:
    record_trend(point("01T00:00:00.000", 1))
    with open(history_path(root), "ab") as fh:
        fh.write(b'{"ts":"x","CANARY":true}\n')
    with pytest.raises(TrendHistoryCorrupt, match=r"trend history is corrupt \(line 2 of ") as info:
        trends_text(root=root)
    assert "CANARY" not in str(info.value)


def test_an_invalid_profile_on_disk_is_corrupt_history_without_echoing_it(root: Path) -> None:
    record_trend(point("01T00:00:00.000", 1))
    line = history_path(root).read_text().replace('"platform":"linux"', '"platform":"CANARY linux"')
    history_path(root).write_text(line)
    with pytest.raises(TrendHistoryCorrupt, match=r"invalid measurement conditions \(line 1 ") as info:
        load_trends(root=root)
    assert "CANARY" not in str(info.value)


def test_an_unterminated_tail_is_ignored_as_a_writer_in_progress(root: Path) -> None:
    record_trend(point("01T00:00:00.000", 1))
    with open(history_path(root), "ab") as fh:
        fh.write(b'{"ts":"2026-09-02T00:00:00.000Z","server":"demo","pass')
    points = load_trends(root=root)
    assert points is not None and [p.score for p in points] == [1]


def test_an_oversized_line_is_corrupt_history(root: Path) -> None:
    record_trend(point("01T00:00:00.000", 1))
    with open(history_path(root), "ab") as fh:
        fh.write(b'{"pad":"' + b"x" * (4 * 1024 * 1024) + b'"}\n')
    with pytest.raises(TrendHistoryCorrupt, match=r"exceeds 4 MiB \(line 2 "):
        load_trends(root=root)


def test_older_points_without_a_profile_or_standard_still_load(root: Path) -> None:
    history_path(root).parent.mkdir(parents=True)
    history_path(root).write_bytes(
        b'{"ts":"2026-01-01T00:00:00.000Z","server":"old","passed":false,"cases_total":7,"cases_passed":5,'
        b'"score":71}\n')
    assert trends_text(root=root) == "old\n  2026-01-01T00:00:00.000Z score=71/100 cases=5/7 FAILING\n"


def _writer(root: str, server: str, count: int) -> None:
    for i in range(count):
        record_trend(point(f"01T00:00:00.{i:03d}", i, server=server), root=root)


def test_concurrent_writers_in_separate_processes_never_tear_a_line(root: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(root), f"srv{n}", 150)) for n in range(4)]
    for p in procs:
        p.start()
    try:
        until(lambda: not any(p.is_alive() for p in procs))  # while they work (tests/waiting.py)
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join()
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    points = load_trends(root=root)
    assert points is not None and len(points) == 600
    groups = select_recent(points, 150)
    assert sorted(groups) == ["srv0", "srv1", "srv2", "srv3"]
    assert all([p.score for p in g] == list(range(150)) for g in groups.values())
    text = render_trends(groups)
    assert text.count("\n") == 4 + 600 and text.count(" +1 ") == 4 * 149
