"""The panels draw no chart of their own: each picture is the ``charts`` function a notebook user would
call on the same selection, and the panels keep the one safe error text."""

from __future__ import annotations

import ast
import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest

import mcpeval_nb as me
from mcpeval_nb.charts import plot_latency_distribution, plot_outcome_mix, plot_readiness_history
from mcpeval_nb.testing.synthetic import synthetic_store
from mcpeval_nb.widgets import ExplorerPanel, TrendsPanel
from mcpeval_nb.widgets._base import Panel
from mcpeval_nb.widgets._figure import figure_png
from tests.waiting import settled

WIDGETS = Path(me.__file__).resolve().parent / "widgets"


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_only_the_figure_helper_touches_matplotlib() -> None:
    users = sorted(p.name for p in WIDGETS.glob("*.py")
                   if any(m.startswith("matplotlib") for m in _imports(p)))
    assert users == ["_figure.py"]


def _selection(calls: pa.Table, **filters: str) -> pa.Table:
    chosen = me.filter_calls(calls, **filters)
    return pa.table({"tool": me.call_label(chosen), "latency_ms": chosen.column("latency_ms"),
                     "outcome": chosen.column("outcome").cast(pa.string())})


def test_the_explorer_pictures_are_the_charts_of_its_selection(root: Path) -> None:
    synthetic_store(root, calls=400, days=2)
    store = me.open_store(root)
    panel = ExplorerPanel(store)
    assert settled(panel)
    panel.server.value = "server-0"
    assert settled(panel)
    view = _selection(store.calls, server="server-0")
    assert panel.state.view.equals(view)
    groups = len(set(view.column("tool").to_pylist()))
    height = 0.45 * groups + 1.4
    latency = figure_png(lambda ax: plot_latency_distribution(view, ax=ax), width=6, height=height)
    outcomes = figure_png(lambda ax: plot_outcome_mix(view, ax=ax), width=6, height=height)
    assert panel.latency_chart.value == latency
    assert panel.outcome_chart.value == outcomes
    # and the selection drawn is really narrower than the store (the comparison above can fail)
    assert panel.latency_chart.value != ExplorerPanel.latency_png(_selection(store.calls))


def test_the_trends_picture_is_the_readiness_history_chart(root: Path) -> None:
    synthetic_store(root, calls=50, days=3)
    store = me.open_store(root)
    panel = TrendsPanel(store, last=4)
    assert settled(panel)
    history = me.readiness_history(store.trends, last=4)
    assert panel.state.history is not None and panel.state.history.equals(history)
    assert panel.chart.value == figure_png(lambda ax: plot_readiness_history(history, ax=ax), height=3.2)


def test_a_failed_job_shows_only_the_safe_text() -> None:
    canary = "CANARY-9f2c secret payload"
    assert Panel.error_text(RuntimeError(canary)) == "unexpected RuntimeError (details withheld)"
    assert Panel.error_text(me.UsageError("manifest: cases[0] is invalid")) == "manifest: cases[0] is invalid"


def test_filter_calls_selects_by_label_and_inclusive_day_range(root: Path) -> None:
    synthetic_store(root, calls=300, days=3)
    calls = me.open_store(root).calls
    days = sorted({ts.date() for ts in calls.column("ts").to_pylist()})
    assert len(days) == 3
    middle = me.filter_calls(calls, day_from=days[1], day_to=days[1])
    assert {ts.date() for ts in middle.column("ts").to_pylist()} == {days[1]}
    both = me.filter_calls(calls, day_from=days[1])
    assert {ts.date() for ts in both.column("ts").to_pylist()} == {days[1], days[2]}
    errors = me.filter_calls(calls, outcome="error", server="server-1")
    assert errors.num_rows > 0
    assert set(errors.column("outcome").cast(pa.string()).to_pylist()) == {"error"}
    assert set(errors.column("server").cast(pa.string()).to_pylist()) == {"server-1"}
    assert me.filter_calls(calls) is calls
    assert me.filter_calls(calls, day_from=days[2] + dt.timedelta(days=1)).num_rows == 0


def test_filter_calls_names_a_missing_column() -> None:
    with pytest.raises(me.UsageError, match="no 'server' column"):
        me.filter_calls(pa.table({"tool": ["a"]}), server="x")
