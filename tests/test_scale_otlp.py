"""OTLP export against a real receiver (Arize Phoenix on loopback, its embedded SQLite): spans read back
through Phoenix's own client match the journal; nothing else reaches it; the endpoint policy holds;
a missing extra names the extra to install."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import mcpeval_nb as m
from mcpeval_nb.cli import cli
from mcpeval_nb.testing.canary import canary_store
from mcpeval_nb.testing.synthetic import synthetic_store

from .otlp_support import phoenix_server

#: Phoenix files spans without a project attribute under its default project.
PROJECT = "default"


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with phoenix_server(tmp_path_factory.mktemp("phoenix")) as url:
        yield url


def spans_of(url: str, project: str, want: int) -> Any:
    from phoenix.client import Client

    client = Client(base_url=url)
    deadline = time.monotonic() + 30
    while True:
        frame = client.spans.get_spans_dataframe(project_identifier=project, limit=100_000)
        if len(frame) >= want or time.monotonic() > deadline:
            return frame
        time.sleep(0.5)


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
        status = {"ok": "OK", "error": "ERROR"}.get(row["outcome"], "UNSET")
        assert span["status_code"] == status and span["status_message"] == ""
        error = row["error_template_id"] or row["error_code"]
        assert (span["attributes.error"] or {}).get("type") == error
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
    proc = subprocess.run([sys.executable, "-m", "mcpeval_nb", "export-otlp", "--root", str(root),
                           "--endpoint", endpoint, *flags], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("mcpeval-nb: ") and message in proc.stderr
    assert "collector.example" not in proc.stderr and "pw" not in proc.stderr


def test_an_unreachable_collector_is_exit_3_in_one_line(root: Path) -> None:
    synthetic_store(root, calls=10, days=1)
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.run([sys.executable, "-m", "mcpeval_nb", "export-otlp", "--root", str(root),
                           "--endpoint", f"http://127.0.0.1:{port}"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 3
    assert proc.stderr.strip().splitlines()[-1] == \
        "mcpeval-nb: the OTLP endpoint did not accept the spans (unreachable or refused)"
    assert "Traceback" not in proc.stderr
