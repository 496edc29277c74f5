"""DuckDB and Dask give the in-memory analysis results, column for column, bit for bit, on generated
stores with errors, annotations, odd labels, an empty day, a day with one call and unknown timestamps."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import mcpeval_nb as m
from mcpeval_nb import CallRecord, append_records, open_store
from mcpeval_nb.testing.synthetic import synthetic_store

SESSION = "session:" + "ef" * 32


def build_store(root: Path) -> None:
    synthetic_store(root, calls=4000, servers=3, tools=6, days=4, error_rate=0.15, seed=7)
    # a day with exactly one call, one with none (an empty journal), and a record with no timestamp
    append_records(root, [CallRecord(ts="2026-08-09T08:00:00.000Z", session=SESSION, seq=1, server="lonely",
                                     method="tools/call", tool="only", latency_ms=42, outcome="error",
                                     error=m.error_info({"code": -32001, "message": "gone at 9"}, b"s" * 32),
                                     shim_self_us=1, kind="real")])
    (root / "store" / "calls-2026-08-07.jsonl").write_bytes(b"")
    journal = root / "store" / "calls-2026-08-09.jsonl"
    line = journal.read_bytes()
    # a tool label in another script and a timestamp that is not RFC 3339 (the loader keeps the label
    # if the grammar lets it, else sanitises it; either way every engine must agree)
    odd = line.replace(b'"tool":"only"', '"tool":"tôol-ü"'.encode()).replace(b'"seq":1', b'"seq":2')
    odd = odd.replace(b'2026-08-09T08:00:00.000Z', b'sometime')
    journal.write_bytes(line + odd)


@pytest.fixture(scope="module")
def store_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scale") / "root"
    build_store(root)
    return root


@pytest.fixture(scope="module")
def memory(store_root: Path) -> Any:
    return open_store(store_root)


def assert_same(expected: pa.Table, got: pa.Table) -> None:
    assert got.schema == expected.schema
    assert got.num_rows == expected.num_rows
    for name in expected.column_names:
        assert got.column(name).equals(expected.column(name)), name


CASES: list[tuple[str, Callable[[Any], pa.Table], Callable[[Any], pa.Table]]] = [
    ("latency", lambda s: m.latency_summary(s.calls), lambda e: e.latency_summary()),
    ("latency-tool-1h", lambda s: m.latency_summary(s.calls, by=("tool",), bucket="1h"),
     lambda e: e.latency_summary(by=("tool",), bucket="1h")),
    ("latency-filtered", lambda s: m.latency_summary(m.filter_calls(s.calls, server="server-1",
                                                                    day_from=dt.date(2026, 8, 2))),
     lambda e: e.latency_summary(server="server-1", day_from=dt.date(2026, 8, 2))),
    ("outcomes", lambda s: m.outcome_rates(s.calls), lambda e: e.outcome_rates()),
    ("outcomes-server", lambda s: m.outcome_rates(s.calls, by=("server",)),
     lambda e: e.outcome_rates(by=("server",))),
    ("outcomes-method", lambda s: m.outcome_rates(s.calls, by=("method", "tool")),
     lambda e: e.outcome_rates(by=("method", "tool"))),
    ("templates", lambda s: m.error_templates(s.calls), lambda e: e.error_templates()),
    ("daily", lambda s: m.template_daily(s.calls), lambda e: e.template_daily()),
    ("daily-filtered", lambda s: m.template_daily(m.filter_calls(s.calls, outcome="error",
                                                                 day_to=dt.date(2026, 8, 3))),
     lambda e: e.template_daily(outcome="error", day_to=dt.date(2026, 8, 3))),
    ("readiness", lambda s: m.readiness_history(s.trends), lambda e: e.readiness_history()),
    ("readiness-last", lambda s: m.readiness_history(s.trends, last=2),
     lambda e: e.readiness_history(last=2)),
    ("empty-selection", lambda s: m.latency_summary(m.filter_calls(s.calls, server="nobody")),
     lambda e: e.latency_summary(server="nobody")),
]


@pytest.fixture(scope="module")
def duck(store_root: Path) -> Iterator[Any]:
    with m.duckdb_engine(store_root, memory_limit="256MB", threads=2) as engine:
        yield engine


@pytest.mark.parametrize(("name", "in_memory", "engine"), CASES, ids=[c[0] for c in CASES])
def test_duckdb_results_equal_the_in_memory_results(memory: Any, duck: Any, name: str,
                                                    in_memory: Callable[[Any], pa.Table],
                                                    engine: Callable[[Any], pa.Table]) -> None:
    expected = in_memory(memory)
    assert expected.num_rows or name == "empty-selection"
    assert_same(expected, engine(duck))


def test_the_store_has_the_shapes_the_equality_tests_claim(memory: Any, duck: Any) -> None:
    calls = memory.calls
    assert calls.column("ts").null_count >= 1  # an unknown timestamp
    assert m.filter_calls(calls, day_from=dt.date(2026, 8, 9), day_to=dt.date(2026, 8, 9)).num_rows == 1
    assert memory.annotations.num_rows > 0 and memory.trends.num_rows > 0
    assert "unknown" in {p.parent.parent.name.removeprefix("day=") for p in duck.dataset.rglob("*.parquet")}
    assert duck.count() == calls.num_rows
    assert m.error_templates(calls).num_rows > 3


def test_the_engines_feed_the_same_charts(duck: Any) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from mcpeval_nb import charts

    assert charts.plot_outcome_mix(duck.outcome_rates(by=("tool",))).patches
    assert charts.plot_template_heatmap(duck.template_daily()).images
    assert charts.plot_readiness_history(duck.readiness_history()).lines
    assert charts.plot_latency_over_time(duck.latency_summary(by=("tool",), bucket="1h")).lines


def test_a_bad_group_column_or_bucket_is_a_usage_error(duck: Any) -> None:
    with pytest.raises(m.UsageError, match="cannot group by"):
        duck.latency_summary(by=("args",))
    with pytest.raises(m.UsageError, match="bucket"):
        duck.latency_summary(bucket="1M")
    with pytest.raises(m.UsageError, match="unknown filter"):
        duck.count(colour="red")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as local, Client(local) as client:
        yield client


DASK_CASES = [c for c in CASES if c[0] in ("latency", "latency-tool-1h", "latency-filtered", "outcomes",
                                            "outcomes-server", "templates", "daily", "readiness",
                                            "readiness-last")]


@pytest.mark.parametrize(("name", "in_memory", "engine"), DASK_CASES, ids=[c[0] for c in DASK_CASES])
def test_dask_on_a_two_process_cluster_equals_the_in_memory_results(
        memory: Any, duck: Any, cluster: Any, name: str, in_memory: Callable[[Any], pa.Table],
        engine: Callable[[Any], pa.Table]) -> None:
    dask = m.dask_engine(duck.dataset, client=cluster)
    # Distinct worker processes, asked of the workers themselves. (``scheduler_info()["workers"]`` races
    # the client's periodic refresh, which stores the identity without per-worker entries.)
    assert len(set(cluster.run(os.getpid).values()) - {os.getpid()}) == 2
    assert_same(in_memory(memory), engine(dask))
