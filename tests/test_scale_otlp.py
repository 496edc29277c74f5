"""OTLP export against a real receiver (Arize Phoenix on loopback, its embedded SQLite): spans read back
through Phoenix's own client match the journal; nothing else reaches it; the endpoint policy holds;
a missing extra names the extra to install."""

from __future__ import annotations

import datetime as dt
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import mcpeval_nb as m
from mcpeval_nb.cli import cli
from mcpeval_nb.scale.semconv import error_type
from mcpeval_nb.testing.canary import canary_store
from mcpeval_nb.testing.synthetic import synthetic_store
from tests import waiting
from tests.waiting import until

from .otlp_support import phoenix_server

#: Phoenix files spans without a project attribute under its default project.
PROJECT = "default"


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with phoenix_server(tmp_path_factory.mktemp("phoenix")) as url:
        yield url


def spans_of(url: str, project: str, want: int, *, stall_s: float = 120.0) -> Any:
    """The project's spans once ``want`` have arrived, waiting for as long as Phoenix makes progress (its
    span count grows) and giving up after ``stall_s`` without any: a loaded machine is slow, never stuck.
    A query that times out (the client's default is 5 s; a 400-span query took longer at load 17) is
    asked again with a longer timeout."""
    import httpx
    from phoenix.client import Client

    client = Client(base_url=url)
    frame, seen, since = None, -1, time.monotonic()
    while time.monotonic() - since < stall_s:
        try:
            frame = client.spans.get_spans_dataframe(project_identifier=project, limit=100_000, timeout=60)
        except httpx.TimeoutException:
            continue
        if len(frame) >= want:
            return frame
        if len(frame) != seen:
            seen, since = len(frame), time.monotonic()
        time.sleep(0.5)
    assert frame is not None, "Phoenix answered no span query"
    return frame


def test_each_call_record_is_one_span_with_its_journal_values(phoenix: str, tmp_path: Path) -> None:
    root = tmp_path / "root"
    synthetic_store(root, calls=400, days=2, error_rate=0.2, seed=3)
    calls = m.open_store(root).calls
    result = m.export_otlp(root, endpoint=phoenix)
    assert (result.spans, result.skipped) == (calls.num_rows, 0)
    frame = spans_of(phoenix, PROJECT, result.spans)
    sessions = set(calls.column("session").to_pylist())
    by_key = {(r["attributes.mcp"]["session.id"], r["attributes.mcpeval"]["seq"]): r
              for r in frame.to_dict("records") if r["attributes.mcp"]["session.id"] in sessions}
    assert len(by_key) == calls.num_rows
    for row in calls.to_pylist():
        span = by_key[(row["session"], row["seq"])]
        assert span["attributes.mcp"]["method"]["name"] == row["method"]
        assert span["attributes.mcpeval"]["server"] == row["server"]
        assert span["start_time"].to_pydatetime() == row["ts"]
        took = (span["end_time"] - span["start_time"]).total_seconds() * 1000
        assert round(took) == (row["latency_ms"] or 0)
        status = "ERROR" if row["has_error"] else {"ok": "OK"}.get(row["outcome"], "UNSET")
        assert span["status_code"] == status and span["status_message"] == ""
        assert (span["attributes.error"] or {}).get("type") == error_type(row)
        assert (span["attributes.mcpeval"].get("error") or {}).get("template_id") == row["error_template_id"]
        assert span["name"] == (f"tools/call {row['tool']}" if row["tool"] else row["method"])
        if row["tool"] is not None:  # Phoenix files the GenAI tool names under its OpenInference ones
            gen_ai = span["attributes.gen_ai"] or {}
            assert row["tool"] in (span["attributes.tool.name"], gen_ai.get("tool", {}).get("name"))
            assert row["args"] in (span["attributes.tool.parameters"],
                                   gen_ai.get("tool", {}).get("call", {}).get("arguments"))


def test_no_canary_reaches_the_collector(phoenix: str, tmp_path: Path) -> None:
    root = tmp_path / "canary"
    markers = canary_store(root).markers
    result = m.export_otlp(root, endpoint=phoenix + "/v1/traces", errors="report")
    assert result.spans > 0
    frame = spans_of(phoenix, PROJECT, result.spans)
    text = frame.to_json(default_handler=str, date_format="iso")
    assert text and not [marker for marker in markers if marker in text]


def test_since_keeps_only_the_later_days_and_the_cli_prints_the_count(phoenix: str, tmp_path: Path) -> None:
    root = tmp_path / "since"
    synthetic_store(root, calls=90, days=3, seed=5)
    later = m.filter_calls(m.open_store(root).calls, day_from=dt.date(2026, 8, 3)).num_rows
    out = CliRunner().invoke(cli, ["export-otlp", "--root", str(root), "--endpoint", phoenix,
                                   "--since", "2026-08-03"])
    assert out.exit_code == 0, out.output
    assert out.output == f"exported {later} span(s) to {phoenix}/v1/traces\n"
    assert 0 < later < 90


@pytest.mark.parametrize(("endpoint", "flags", "message"), [
    ("http://collector.example:4318", [], "require --allow-remote-http"),
    ("http://collector.example:4318", ["--allow-remote-http"], "require HTTPS"),
    ("http://user:pw@127.0.0.1:4318", [], "credential-free"),
])
def test_a_remote_endpoint_is_refused_without_https_and_the_flag(root: Path, endpoint: str,
                                                                 flags: list[str], message: str) -> None:
    synthetic_store(root, calls=10, days=1)
    proc = waiting.run([sys.executable, "-m", "mcpeval_nb", "export-otlp", "--root", str(root),
                           "--endpoint", endpoint, *flags], capture_output=True, text=True, stall_s=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("mcpeval-nb: ") and message in proc.stderr
    assert "collector.example" not in proc.stderr and "pw" not in proc.stderr


def test_an_unreachable_collector_is_exit_3_in_one_line(root: Path) -> None:
    synthetic_store(root, calls=10, days=1)
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = waiting.run([sys.executable, "-m", "mcpeval_nb", "export-otlp", "--root", str(root),
                           "--endpoint", f"http://127.0.0.1:{port}"], capture_output=True, text=True,
                       stall_s=120)
    assert proc.returncode == 3
    assert proc.stderr.strip().splitlines()[-1] == \
        "mcpeval-nb: the OTLP endpoint did not accept the spans (unreachable or refused)"
    assert "Traceback" not in proc.stderr


def _agent_span(phoenix: str) -> tuple[Any, Any]:
    """A fixture agent's span exported to Phoenix by the OpenTelemetry SDK; returns (provider, span)."""
    import requests
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    session = requests.Session()
    session.trust_env = False
    provider = TracerProvider(resource=Resource({"service.name": "fixture-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{phoenix}/v1/traces",
                                                                     session=session)))
    span = provider.get_tracer("fixture-agent").start_span("invoke_agent fixture-agent")
    return provider, span


def test_spans_follow_the_mcp_conventions_and_nest_under_the_agents_span(
        phoenix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.eras_support import eras_argv, run_calls

    root = tmp_path / "agent"
    monkeypatch.setenv("MCPEVAL_HOME", str(root))
    provider, agent = _agent_span(phoenix)
    ctx = agent.get_span_context()
    traceparent = f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-01"
    shim = [sys.executable, "-m", "mcpeval_nb", "shim", "--server", "eras", "--", *eras_argv()]
    run_calls(shim, [("echo", {"text": "hi"}), ("fail", {"message": "no"}), ("ask", {"rounds": 2})],
              mode="2026-07-28", meta={"traceparent": traceparent, "baggage": "user=CANARY-baggage"})
    agent.end()
    provider.shutdown()
    m.export_otlp(root, endpoint=phoenix)
    want = {"tools/call echo", "tools/call fail", "tools/call ask"}
    agent_id = f"{ctx.span_id:016x}"
    frame: Any = None
    parents: list[dict[str, Any]] = []
    children: dict[str, dict[str, Any]] = {}

    def ingested() -> bool:  # Phoenix ingests asynchronously: wait for the agent's span and its children
        nonlocal frame, parents, children
        frame = spans_of(phoenix, PROJECT, 1)
        rows = frame.to_dict("records")
        parents = [r for r in rows if r["context.span_id"] == agent_id]
        children = {r["name"]: r for r in rows if r["parent_id"] == agent_id}
        return bool(parents) and set(children) >= want

    until(ingested)  # while Phoenix (a child of this test) uses CPU (tests/waiting.py)
    (parent,) = parents
    assert parent["name"] == "invoke_agent fixture-agent" and set(children) == want
    for span in children.values():
        assert span["context.trace_id"] == parent["context.trace_id"]
        assert span["attributes.mcp"]["protocol"]["version"] == "2026-07-28"
        assert span["attributes.network"]["transport"] == "pipe"
        assert span["attributes.jsonrpc"]["request"]["id"]
    failed = children["tools/call fail"]
    assert failed["attributes.error"]["type"] == "tool_error" and failed["status_code"] == "ERROR"
    assert children["tools/call ask"]["attributes.mcpeval"]["rounds"] == 3
    assert "CANARY" not in frame.to_json(default_handler=str, date_format="iso")


def test_the_duration_histogram_has_the_conventions_buckets_and_attributes(tmp_path: Path) -> None:
    from tests.otlp_receiver import receiver

    root = tmp_path / "metrics"
    synthetic_store(root, calls=200, days=1, error_rate=0.3, seed=9)
    calls = m.open_store(root).calls
    with receiver() as collector:
        result = m.export_otlp(root, endpoint=collector.url, metrics_endpoint=collector.url)
    assert result.measurements == calls.filter(pa_valid(calls, "latency_ms")).num_rows > 0
    (request,) = collector.metrics
    (metric,) = [mm for rm in request.resource_metrics for sm in rm.scope_metrics for mm in sm.metrics]
    assert (metric.name, metric.unit) == ("mcp.client.operation.duration", "s")
    points = metric.histogram.data_points
    assert {tuple(p.explicit_bounds) for p in points} == {
        (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)}
    assert sum(p.count for p in points) == result.measurements
    keys = {a.key for p in points for a in p.attributes}
    assert {"mcp.method.name", "gen_ai.tool.name", "error.type"} <= keys and "mcp.session.id" not in keys


def test_export_ignores_proxy_variables_and_sends_only_where_the_policy_says(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.otlp_receiver import counting_listener, receiver

    root = tmp_path / "proxy"
    synthetic_store(root, calls=30, days=1, seed=4)
    with counting_listener() as (proxy, contacted), receiver() as collector:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.setenv(name, proxy)
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        result = m.export_otlp(root, endpoint=collector.url, metrics_endpoint=collector.url)
    received = sum(len(scoped.spans) for request in collector.traces for spans in request.resource_spans
                   for scoped in spans.scope_spans)
    assert result.spans == received == 30
    assert collector.metrics and contacted == []


def pa_valid(table: Any, column: str) -> Any:
    import pyarrow.compute as pc

    return pc.is_valid(table.column(column))
