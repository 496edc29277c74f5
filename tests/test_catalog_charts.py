"""The catalog charts under Agg on the demo's generated history: the artists they draw, empty inputs."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

import mcpeval_nb as me
from mcpeval_nb import charts


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> me.Store:
    from mcpeval_nb.demo.history import generate_history

    root = tmp_path_factory.mktemp("catalog-charts") / "root"
    root.mkdir()
    generate_history(root, today=dt.date(2026, 12, 1))
    return me.open_store(root)


def test_the_timeline_draws_each_change_kind_on_its_server_s_row_and_the_listings(store: me.Store) -> None:
    drift = me.catalog_drift(store)
    assert {(r["tool"], r["change"]) for r in drift.to_pylist()} == {("translate_page", "added"),
                                                                      ("fetch_page", "schema-changed")}
    fig, ax = plt.subplots()
    assert charts.plot_catalog_timeline(drift, history=me.catalog_history(store), ax=ax) is ax
    assert [t.get_text() for t in ax.get_yticklabels()] == ["generated-docs"]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["listing recorded", "added", "schema-changed"]
    ticks = ax.collections[0].get_offsets()
    assert len(ticks) == len({(r["session"], r["seq"]) for r in me.catalog_history(store).to_pylist()})
    plt.close(fig)


def test_usage_marks_dead_tools_with_the_tokens_every_session_pays(store: me.Store) -> None:
    usage = me.tool_usage(store)
    ax = charts.plot_tool_usage(usage)
    notes = sorted(t.get_text() for t in ax.texts)
    dead = {r["tool"]: r["catalog_tokens"] for r in usage.to_pylist() if r["verdict"] == "dead"}
    assert set(dead) == {"export_pdf", "translate_page"}
    assert notes == sorted(f"dead: {n} tokens a session" for n in dead.values())
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[-2:] == ["translate_page", "export_pdf"]  # dead tools on top
    ax.figure.canvas.draw()  # what a reader sees: notes inside the plot, the legend over no label
    frame, legend = ax.get_window_extent(), ax.get_legend().get_window_extent()
    assert all(frame.contains(*t.get_window_extent().min) and frame.contains(*t.get_window_extent().max)
               for t in ax.texts)
    assert not legend.overlaps(ax.xaxis.label.get_window_extent()) and not legend.overlaps(frame)
    plt.close(ax.figure)


def test_transitions_are_a_heatmap_of_probabilities_labelled_with_counts(store: me.Store) -> None:
    transitions = me.tool_transitions(store)
    ax = charts.plot_tool_transitions(transitions, server="generated-docs")
    image = ax.images[0].get_array()
    assert image.shape == (3, 3) and abs(float(image[1, 1]) - 1.0) < 1e-9  # list_sections -> list_sections
    counts = {r["count"] for r in transitions.to_pylist()}
    assert {int(t.get_text()) for t in ax.texts} == counts
    plt.close(ax.figure)


@pytest.mark.parametrize("plot", [charts.plot_tool_usage, charts.plot_tool_transitions])
def test_empty_tables_say_there_is_nothing_to_show(plot: object, tmp_path: Path) -> None:
    table = me.tool_usage(tmp_path) if plot is charts.plot_tool_usage else me.tool_transitions(tmp_path)
    ax = plot(table)  # type: ignore[operator]
    assert any(t.get_text().startswith("no ") for t in ax.texts)
    plt.close(ax.figure)
    ax = charts.plot_catalog_timeline(me.catalog_drift(tmp_path), history=me.catalog_history(tmp_path))
    assert [t.get_text() for t in ax.texts] == ["no catalog listings to show"]
    plt.close(ax.figure)
