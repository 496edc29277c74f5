"""Notebook-native results (docs/tables.md, "In a notebook"): tables from any Arrow stream, tables and
result objects that render as HTML in a cell, and imports that load nothing heavy."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import mcpeval_nb as me
from mcpeval_nb.testing import synthetic_store
from mcpeval_nb.testing.canary import canary_store
from tests import waiting


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> me.Store:
    root = tmp_path_factory.mktemp("results")
    synthetic_store(root, calls=400, servers=2, tools=3, days=2, error_rate=0.2, seed=5)
    return me.open_store(root)


def test_every_table_input_takes_pandas_polars_and_duckdb_alike(store: me.Store) -> None:
    polars = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    calls = store.calls
    frame = calls.to_pandas()
    pl_frame = polars.from_arrow(calls)
    relation = duckdb.sql("select * from pl_frame")
    expected = me.filter_calls(calls, tool="tool_1").num_rows
    assert expected > 0
    for data in (frame, pl_frame, relation, calls.to_reader()):
        assert me.filter_calls(data, tool="tool_1").num_rows == expected
    summary = me.latency_summary(calls, by=("server", "tool"))
    assert me.latency_summary(pl_frame, by=("server", "tool")).equals(summary)
    assert me.as_table(relation).num_rows == calls.num_rows
    with pytest.raises(me.UsageError, match="__arrow_c_stream__"):
        me.as_table([1, 2, 3])


def test_a_table_renders_as_an_escaped_html_table_with_its_types(store: me.Store) -> None:
    from mcpeval_nb.tables.html import table_html

    html = table_html(pa.table({"tool": ["<b>x</b>", None], "n": [1, 2]}), max_rows=1)
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html
    assert ">int64<" in html and "2 rows × 2 columns (1 more not shown)" in html


def test_in_a_kernel_importing_the_package_registers_the_table_formatter() -> None:
    code = ("from IPython.testing.globalipapp import start_ipython\n"
            "ip = start_ipython()\n"
            "import pyarrow as pa, mcpeval_nb\n"

            "html = ip.display_formatter.formatters['text/html']\n"
            "html.enabled = True  # a terminal shell renders no HTML; a Jupyter kernel does\n"
            "print('<table' in (html(pa.table({'tool': ['a']})) or ''))\n")
    result = waiting.run([sys.executable, "-c", code], capture_output=True, text=True, stall_s=120)
    assert result.stdout.strip().splitlines()[-1] == "True", result.stderr


def test_result_objects_render_themselves(store: me.Store, tmp_path: Path) -> None:
    html = store._repr_html_()
    assert "calls across 2 server(s)" in html and "<table" in html
    report = me.check_redaction(store.root)
    assert "redaction check" in report._repr_html_()
    for kind in ("Store", "PromoteResult", "RedactionReport", "Explanation", "ProbeReport", "GateReport",
                 "VerifyResult", "EraseResult", "ResultSizes"):
        assert callable(getattr(getattr(me, kind), "_repr_html_", None)), kind


def test_no_canary_reaches_a_rendered_store(tmp_path: Path) -> None:
    canary = canary_store(tmp_path / "root")
    html = me.open_store(canary.root, errors="report")._repr_html_()
    assert [m for m in canary.markers if m in html] == []


@pytest.mark.parametrize("module", ["mcpeval_nb.widgets", "mcpeval_nb.charts"])
def test_importing_widgets_or_charts_loads_neither_pyplot_nor_pandas(module: str) -> None:
    code = (f"import sys, json, {module}\n"
            "print(json.dumps([m for m in ('matplotlib', 'matplotlib.pyplot', 'pandas', 'ipywidgets')"
            " if m in sys.modules]))")
    result = waiting.run([sys.executable, "-c", code], capture_output=True, text=True, stall_s=120)
    assert json.loads(result.stdout) == [], result.stderr


def test_the_version_is_read_without_package_metadata() -> None:
    from importlib import metadata

    code = "import sys, mcpeval_nb; print(mcpeval_nb.__version__, 'importlib.metadata' in sys.modules)"
    out = waiting.run([sys.executable, "-c", code], capture_output=True, text=True, stall_s=60).stdout
    assert out.split() == [metadata.version("mcpeval-nb"), "False"]
