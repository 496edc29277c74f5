"""ExplorerPanel and TrendsPanel headless: filters, day range, incremental refresh, change markers."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow.compute as pc

import mcpeval_nb as me
from mcpeval_nb.testing.synthetic import synthetic_store
from mcpeval_nb.widgets import ExplorerPanel, TrendsPanel
from tests.waiting import settled


def _count(table, **equal: str) -> int:  # type: ignore[no-untyped-def]
    mask = None
    for name, value in equal.items():
        cond = pc.fill_null(pc.equal(table.column(name).cast("string"), value), False)
        mask = cond if mask is None else pc.and_(mask, cond)
    return table.num_rows if mask is None else pc.sum(mask.cast("int64")).as_py() or 0


def test_filters_narrow_every_view_to_the_selection(root: Path) -> None:
    synthetic_store(root, calls=600, days=3)
    store = me.open_store(root)
    panel = ExplorerPanel(store)
    assert settled(panel)
    assert panel.state.shown == panel.state.total == store.calls.num_rows
    assert set(panel.tool.options) >= {"(any)", "tool_0", "tool_1"}
    panel.server.value = "server-1"
    panel.tool.value = "tool_1"
    assert settled(panel)
    expected = _count(store.calls, server="server-1", tool="tool_1")
    assert 0 < expected < store.calls.num_rows
    assert panel.state.shown == expected and f"{expected} of {store.calls.num_rows}" in panel.status.value
    assert [row[0] for row in panel.state.percentiles] == ["tool_1"]
    assert set(panel.state.outcomes) == {"tool_1"}
    assert all(set(t.tools) == {"tool_1"} for t in panel.state.templates)
    assert panel.latency_chart.value[:4] == b"\x89PNG" and panel.outcome_chart.value[:4] == b"\x89PNG"


def test_outcome_filter_and_template_table_agree_with_the_table(root: Path) -> None:
    synthetic_store(root, calls=800, error_rate=0.2)
    store = me.open_store(root)
    panel = ExplorerPanel(store)
    assert settled(panel)
    panel.outcome.value = "error"
    assert settled(panel)
    assert panel.state.shown == _count(store.calls, outcome="error")
    total = sum(t.count for t in panel.state.templates)
    assert total == pc.sum(pc.is_valid(store.calls.column("error_template_id")).cast("int64")).as_py()
    top = panel.state.templates[0]
    assert top.template_id in panel.templates.value and "<svg" in panel.templates.value
    assert sum(top.daily) == top.count and len(top.daily) == len(panel.state.days)


def test_day_range_keeps_only_the_calls_of_those_days(root: Path) -> None:
    synthetic_store(root, calls=500, days=4)
    store = me.open_store(root)
    panel = ExplorerPanel(store)
    assert settled(panel)
    days = [d for d in panel.day_from.options if d != "(any)"]
    assert len(days) == 4
    panel.day_from.value, panel.day_to.value = days[1], days[2]
    assert settled(panel)
    ts = store.calls.column("ts")
    lo = dt.datetime.fromisoformat(days[1]).replace(tzinfo=dt.UTC)
    hi = dt.datetime.fromisoformat(days[2]).replace(tzinfo=dt.UTC) + dt.timedelta(days=1)
    inside = pc.and_(pc.greater_equal(ts, lo), pc.less(ts, hi))
    assert panel.state.shown == pc.sum(inside.cast("int64")).as_py() > 0


def test_refresh_reads_appended_records(root: Path) -> None:
    synthetic_store(root, calls=200, annotations=False, trends=False)
    store = me.open_store(root)
    panel = ExplorerPanel(store)
    assert settled(panel)
    before = panel.state.total
    records = [me.CallRecord(ts="2026-08-02T10:00:00.000Z", session="refresh-session", seq=i,
                             server="server-0", method="tools/call", tool="fresh_tool", args={"q": "value"},
                             latency_ms=5, outcome="ok", error=None, shim_self_us=1, kind="real")
               for i in range(1, 8)]
    me.append_records(root, records)
    panel.refresh_button.click()
    assert settled(panel)
    assert panel.state.total == before + 7
    assert "fresh_tool" in panel.tool.options and "7 new row(s) read" in panel.status.value


def test_trends_show_deltas_and_mark_points_whose_scores_are_not_comparable(root: Path) -> None:
    synthetic_store(root, calls=10, servers=2, days=6)
    store = me.open_store(root)
    panel = TrendsPanel(store, last=10)
    assert settled(panel)
    rows = panel.state.rows
    assert len(rows) == store.trends.num_rows == 12
    assert any(r.changed for r in rows) and any(not r.changed for r in rows)
    changed = [r for r in rows if r.changed]
    assert all(r.delta in ("standard changed", "manifest changed")
               or r.delta.startswith("measurement profile") for r in changed)
    assert panel.chart.value[:4] == b"\x89PNG"
    assert "standard changed" in panel.points.value or "manifest changed" in panel.points.value


def test_trends_pick_servers_and_a_window(root: Path) -> None:
    synthetic_store(root, calls=10, servers=2, days=6)
    panel = TrendsPanel(me.open_store(root))
    assert settled(panel)
    assert list(panel.servers.options) == ["server-0", "server-1"]
    panel.servers.value = ("server-1",)
    assert settled(panel)
    panel.last.value = 2
    assert settled(panel)
    assert [r.server for r in panel.state.rows] == ["server-1", "server-1"]
    assert panel.state.rows[0].delta == "first shown point"


def test_trends_refresh_reads_a_new_point(root: Path) -> None:
    synthetic_store(root, calls=10, servers=1, days=2)
    panel = TrendsPanel(me.open_store(root))
    assert settled(panel)
    assert len(panel.state.rows) == 2
    point = me.TrendPoint(ts="2026-09-01T00:00:00.000Z", server="server-0", passed=True, cases_total=10,
                          cases_passed=10, score=99, manifest_sha256=None, standard="mcpeval-standard/2",
                          measurement_profile=None)
    me.append_records(root, [point])
    panel.refresh_button.click()
    assert settled(panel)
    assert [r.score for r in panel.state.rows][-1] == 99 and len(panel.state.rows) == 3
    assert "2026-09-01 00:00" in panel.points.value


def test_above_the_size_threshold_the_panel_switches_to_duckdb_and_says_so(root: Path) -> None:
    synthetic_store(root, calls=3000, days=3, error_rate=0.2)
    small = ExplorerPanel(me.open_store(root))
    big = ExplorerPanel(me.open_store(root), engine_threshold=1000)
    assert settled(small) and settled(big)
    assert small.state.engine == "memory" and big.state.engine == "duckdb"
    assert "DuckDB engine" in big.state.status and "in-memory threshold" in big.state.status
    assert "DuckDB" not in small.state.status
    assert big.state.percentiles == small.state.percentiles
    assert big.state.outcomes == small.state.outcomes and big.state.templates == small.state.templates
    assert (big.state.total, big.state.choices, big.state.days) == \
        (small.state.total, small.state.choices, small.state.days)
    for panel in (small, big):
        panel.server.value = "server-1"
    assert settled(small) and settled(big)
    assert big.state.shown == small.state.shown < small.state.total
    assert big.state.percentiles == small.state.percentiles
    assert (root / "calls.parquet").is_dir()  # the incremental export the engine reads
