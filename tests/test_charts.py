"""Charts under Agg: inspect the artists each plot draws; no global state changes, no leaks."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

import mcpeval_nb
from mcpeval_nb import charts
from mcpeval_nb.testing import canary_store, synthetic_store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> mcpeval_nb.Store:
    root = tmp_path_factory.mktemp("charts")
    synthetic_store(root, calls=1500, servers=2, tools=4, days=3, error_rate=0.1, seed=11)
    return mcpeval_nb.open_store(root)


def test_latency_distribution_draws_one_box_per_tool_on_the_given_axes(store: mcpeval_nb.Store) -> None:
    fig, ax = plt.subplots()
    out = charts.plot_latency_distribution(store.calls, ax=ax)
    assert out is ax
    labels = sorted(t.get_text() for t in ax.get_yticklabels())
    # one tool name on two servers is drawn per server, never pooled
    assert labels == [f"server-{s}/tool_{t}" for s in range(2) for t in range(4)]
    assert ax.get_xscale() == "symlog" and ax.get_xlim()[0] == 0
    plt.close(fig)


def test_latency_over_time_draws_a_line_per_percentile(store: mcpeval_nb.Store) -> None:
    ax = charts.plot_latency_over_time(store.calls, bucket="6h", percentiles=(50, 95, 99))
    assert [line.get_label() for line in ax.get_lines()] == ["p50", "p95", "p99"]
    assert len(ax.get_lines()[0].get_xdata()) == 12  # 3 days of 6-hour buckets
    plt.close(ax.figure)


def test_outcome_mix_bars_sum_to_one_per_tool(store: mcpeval_nb.Store) -> None:
    ax = charts.plot_outcome_mix(store.calls)
    widths: dict[float, float] = {}
    for patch in ax.patches:
        y = round(patch.get_y(), 6)
        widths[y] = widths.get(y, 0.0) + patch.get_width()
    assert widths and all(abs(w - 1.0) < 1e-9 for w in widths.values())
    assert {t.get_text() for t in ax.get_legend().get_texts()} == set(mcpeval_nb.OUTCOMES)
    plt.close(ax.figure)


def test_template_heatmap_has_a_cell_per_template_and_day(store: mcpeval_nb.Store) -> None:
    daily = mcpeval_nb.template_daily(store.calls)
    ax = charts.plot_template_heatmap(daily, top=3)
    image = ax.images[0].get_array()
    assert image.shape == (3, 3)
    totals = daily.to_pandas().groupby("template_id")["count"].sum().sort_values(ascending=False)
    assert image.sum(axis=1)[0] == totals.iloc[0]
    plt.close(ax.figure)


def test_readiness_history_marks_standard_and_profile_changes(store: mcpeval_nb.Store) -> None:
    ax = charts.plot_readiness_history(store.trends)
    assert sorted(line.get_label() for line in ax.get_lines()) == ["server-0", "server-1"]
    marked = {c.get_label(): len(c.get_offsets()) for c in ax.collections}
    history = mcpeval_nb.readiness_history(store.trends)
    assert marked["standard changed"] == sum(history.column("standard_changed").to_pylist()) > 0
    assert marked["profile changed"] == sum(history.column("profile_changed").to_pylist()) > 0
    plt.close(ax.figure)


def test_charts_leave_global_style_alone_and_accept_frames(store: mcpeval_nb.Store) -> None:
    before = dict(matplotlib.rcParams)
    ax = charts.plot_latency_distribution(store.calls.to_pandas())
    assert dict(matplotlib.rcParams) == before
    plt.close(ax.figure)
    with pytest.raises(mcpeval_nb.UsageError):
        charts.plot_latency_distribution([1, 2])


def test_no_canary_marker_reaches_chart_text(tmp_path: Path) -> None:
    canary = canary_store(tmp_path)
    store = mcpeval_nb.open_store(tmp_path, errors="report")
    texts: list[str] = []
    plots = ((charts.plot_latency_distribution, store.calls), (charts.plot_outcome_mix, store.calls),
             (charts.plot_template_heatmap, store.calls), (charts.plot_readiness_history, store.trends),
             (charts.plot_latency_over_time, store.calls))
    for plot, data in plots:
        ax = plot(data)
        texts += [t.get_text() for t in ax.figure.findobj(matplotlib.text.Text)]
        plt.close(ax.figure)
    blob = "\n".join(texts)
    assert "tool" in blob or "lookup" in blob
    assert [m for m in canary.markers if m in blob] == []


def test_plot_result_sizes_draws_one_line_per_tool_over_runs(root: Path) -> None:
    from tests.probe_support import fixture

    manifest = {"calls": [{"tool": "fixed_text", "args": {}}, {"tool": "sized_text", "args": {"chars": 10}},
                          {"tool": "crash", "args": {}}]}
    for _ in range(2):
        mcpeval_nb.probe_result_sizes(fixture("result_sizes"), call_manifest=manifest,
                                      options=mcpeval_nb.SizesOptions(server="fx", root=root, journal=False))
    ax = charts.plot_result_sizes(mcpeval_nb.result_size_history(root=root))
    lines = {line.get_label(): list(line.get_ydata()) for line in ax.get_lines()}
    assert lines == {"fixed_text": [1039.0, 1039.0], "sized_text": [49.0, 49.0]}  # crash has no result
    empty = charts.plot_result_sizes(mcpeval_nb.result_size_history(root=root / "none"))
    assert "no result sizes to show" in [t.get_text() for t in empty.texts]
    plt.close("all")
