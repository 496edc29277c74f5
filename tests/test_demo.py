"""The demo's capture step through the real shim, and its summary: content-free, with the scripted mix."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
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
    assert any(r["tool"] == "fail" and r["error_code"] == "tool-error" for r in tool_calls)
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


HISTORY_TEXT = ("how do I configure retries", "index not ready", "upstream rate limited", "page not found",
                "docs.example.com/guide/")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, me.Store]:
    """The generated history alone, ending before a fixed day so the figures below are exact."""
    from mcpeval_nb.demo.history import generate_history

    root = tmp_path_factory.mktemp("history") / "root"
    root.mkdir()
    summary = generate_history(root, today=dt.date(2026, 12, 1))
    assert (summary.first_day, summary.last_day) == (dt.date(2026, 11, 3), dt.date(2026, 11, 30))
    return root, me.open_store(root)


def _daily_p50(calls: pa.Table, tool: str) -> list[float]:
    table = me.latency_summary(me.filter_calls(calls, tool=tool), by=("tool",), bucket="1D")
    return table.column("p50").to_pylist()


def test_generated_calls_span_four_weeks_with_a_latency_regression_and_its_recovery(
        history: tuple[Path, me.Store]) -> None:
    calls = history[1].calls
    days = sorted({ts.date() for ts in calls.column("ts").to_pylist()})
    assert len(days) == 28 and (days[-1] - days[0]).days == 27
    p50 = _daily_p50(calls, "search")
    before, during, after = max(p50[:11]), min(p50[11:17]), max(p50[17:])
    assert during > 3 * before and during > 3 * after
    assert me.format_ms(min(_daily_p50(calls, "list_sections"))) == "<1"


def test_generated_templates_fade_and_appear(history: tuple[Path, me.Store]) -> None:
    calls = history[1].calls
    daily = me.template_daily(calls).to_pylist()
    spans = {}
    for row in daily:
        first, last = spans.get(row["template_id"], (row["day"], row["day"]))
        spans[row["template_id"]] = (min(first, row["day"]), max(last, row["day"]))
    start = dt.date(2026, 11, 3)
    offsets = sorted(((a - start).days, (b - start).days) for a, b in spans.values())
    assert offsets[0][0] <= 1 and offsets[0][1] <= 10          # fades: seen early, gone after day 10
    assert any(a >= 13 and b >= 26 for a, b in offsets)           # appears mid-way and stays


def test_generated_readiness_has_a_regression_a_fix_and_incomparable_points(
        history: tuple[Path, me.Store]) -> None:
    points = me.readiness_history(history[1].trends).to_pylist()
    stamps = [p["ts"] for p in points]
    assert len(points) >= 10 and (stamps[-1] - stamps[0]).days >= 14
    deltas = [p["delta"] for p in points]
    assert "standard changed" in deltas and "measurement profile changed" in deltas
    assert any(d.startswith("-") and int(d) <= -10 for d in deltas if d and d[0] in "+-")
    assert any(d.startswith("+") and int(d) >= 10 for d in deltas if d and d[0] in "+-")


def test_generated_history_went_through_the_writer_and_holds_no_text(history: tuple[Path, me.Store]) -> None:
    root = history[0]
    data = b"".join(p.read_bytes() for p in (root / "store").rglob("*.jsonl"))
    assert not [t for t in HISTORY_TEXT if t.encode() in data]
    assert me.check_redaction(root).clean


def test_the_demo_catalogs_show_drift_against_the_pin_flags_and_dead_tools(
        history: tuple[Path, me.Store], tmp_path: Path) -> None:
    import shutil

    from mcpeval_nb.demo.catalogs import catalog_sessions

    root = tmp_path / "root"
    shutil.copytree(history[0], root)
    said: list[str] = []
    done = catalog_sessions(root, say=said.append)
    assert done.sessions == {"inventory": 4, "weather": 1} and done.pinned == 6
    text = "\n".join(summarize(root))
    assert "inventory/remove_item      renamed (was delete_item)" in text
    assert "weather/weather_directive  model-directive" in text
    assert "generated-docs/export_pdf       listed in" in text and "generated-docs/translate_page" in text
    assert me.check_catalogs(root, server="inventory").exit_code == 1  # changed since it was pinned
    assert "CANARY" not in text and not [t for t in HISTORY_TEXT if t in text]
