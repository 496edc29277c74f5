"""The demo's capture step through the real shim, and its summary: content-free, with the scripted mix."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pytest

import mcpeval_nb as me
from mcpeval_nb.demo import summarize
from mcpeval_nb.demo.capture import CaptureSummary, capture_sessions

SCRIPTED_TEXT = ("hello number", "could not be found", "docs.example.com/guide", "shop.example.org",
                 "progress 4", "agent retried")


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CaptureSummary, list[str]]:
    """One scripted capture (the SDK demo server behind the real shim), shared by the tests below."""
    root = tmp_path_factory.mktemp("demo") / "root"
    said: list[str] = []
    return root, capture_sessions(root, say=said.append, time_server=False), said


def test_demo_capture_records_successes_tool_errors_protocol_errors_and_an_annotation(
        captured: tuple[Path, CaptureSummary, list[str]]) -> None:
    root, summary, said = captured
    assert summary.annotations == 1 and summary.calls["demo"] >= 40
    calls = me.open_store(root).calls
    rows = calls.to_pylist()
    tool_calls = [r for r in rows if r["method"] == "tools/call"]
    assert len(tool_calls) == summary.calls["demo"]
    assert {r["outcome"] for r in tool_calls} == {"ok", "error"}
    assert any(r["tool"] == "fail" and r["error_code"] == '"tool-error"' for r in tool_calls)
    protocol = [r for r in rows if r["method"] == "demo/no-such-method"]
    assert len(protocol) == 1 and protocol[0]["outcome"] == "error" and protocol[0]["error_code"] == "-32601"
    assert pc.sum(pc.equal(calls.column("kind").cast("string"), "real").cast("int64")).as_py() == len(rows)
    journal = b"".join(p.read_bytes() for p in (root / "store").glob("calls-*.jsonl"))
    assert not [t for t in SCRIPTED_TEXT if t.encode() in journal]
    assert said and not [t for t in SCRIPTED_TEXT if any(t in line for line in said)]


def test_demo_summary_names_tools_templates_and_the_redaction_check_without_payloads(
        captured: tuple[Path, CaptureSummary, list[str]]) -> None:
    text = "\n".join(summarize(captured[0]))
    assert "navigate" in text and "p95=" in text and "top error templates:" in text
    assert "redaction check: clean" in text and "1 annotation note(s) to review" in text
    assert not [t for t in SCRIPTED_TEXT if t in text]
