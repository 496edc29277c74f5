"""Canary store: no panel trait and no message sent to the front end ever carries a raw payload.

The capture root is seeded with unique markers wherever a hand-edited or foreign journal could carry
them (argument values, error messages, codes, layers, kinds, templates, extra fields, raw sessions,
annotation notes, trend fields), and the probe panel runs against fixture servers whose responses and
errors carry ``CANARY`` text.  Front-end messages are collected by giving ipywidgets a recording comm
through the ``comm`` package's own factory (nothing of ours is patched); widget state is then walked
with ``get_state()`` over every live widget.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, ClassVar

import comm
import ipywidgets
import pytest
from comm.base_comm import BaseComm

import mcpeval_nb as me
import mcpeval_nb.testing.servers.probe_clean as probe_clean
import mcpeval_nb.testing.servers.transport_fault as transport_fault
from mcpeval_nb.widgets import ExplorerPanel, ProbePanel, ReviewPanel, TrendsPanel
from tests.waiting import settled

MARK = "cnry-7Q2X"
MARKERS = (MARK, "CANARY")
SESSION = "session:" + "a" * 64


class RecordingComm(BaseComm):  # type: ignore[misc]
    """A comm that keeps every message a widget publishes."""

    sent: ClassVar[list[Any]] = []

    def publish_msg(self, msg_type: str, data: Any = None, metadata: Any = None, buffers: Any = None,
                    **keys: Any) -> None:
        RecordingComm.sent.append((msg_type, data, [bytes(b) for b in buffers or []]))


def _canary_root(root: Path) -> Path:
    me.load_salt(root)
    store = root / "store"
    store.mkdir(parents=True, exist_ok=True)
    calls = [
        {"ts": "2026-08-04T12:00:00.250Z", "session": SESSION, "seq": 1, "server": "demo",
         "method": "tools/call", "tool": "search",
         "args": {"query": f"{MARK}-arg", "nested": {"deep": f"{MARK}-deep"}},
         "latency_ms": 25, "outcome": "ok", "shim_self_us": 4, "kind": "real", "response": f"{MARK}-body"},
        {"ts": "2026-08-04T12:00:01.250Z", "session": SESSION, "seq": 2, "server": "demo",
         "method": "tools/call", "tool": "search", "args": {}, "latency_ms": 30, "outcome": "error",
         "error": {"code": f"{MARK} code", "layer": f"{MARK}-layer", "kind": f"{MARK}-kind",
                   "template": f"{MARK}-template", "message": f"{MARK}-message",
                   "template_id": "deadbeefdeadbeef", "data": MARK}, "shim_self_us": 4, "kind": "real"},
        {"ts": "2026-08-05T12:00:02.250Z", "session": f"{MARK}-raw-session", "seq": 3, "server": "demo",
         "method": "tools/call", "tool": "lookup", "args": f"{MARK}-string-args", "latency_ms": 40,
         "outcome": "ok", "shim_self_us": 4, "kind": "real"},
    ]
    (store / "calls-2026-08-04.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))
    note = {"ts": "2026-08-04T12:00:03Z", "session": SESSION, "seq": 1, "kind": "false-success",
            "note": f"{MARK}-note"}
    (store / "annotations-2026-08-04.jsonl").write_text(json.dumps(note) + "\n")
    (store / "probes").mkdir()
    point = {"ts": "2026-08-04T12:00:03Z", "server": "demo", "passed": True, "cases_total": 3,
             "cases_passed": 3, "score": 80, "extra": MARK}
    (store / "probes" / "history.jsonl").write_text(json.dumps(point) + "\n")
    return root


WRITERS = ("break_session",)  # annotated readOnlyHint: false: callable only by a sandboxed mutating case


def _manifest(tool: str) -> str:
    access: dict[str, str] = {"access": "mutating", "sandbox": "fixture"} if tool in WRITERS else \
        {"access": "read_only"}
    return json.dumps({"version": 1, "sandboxes": {"fixture": {"description": "the fixture's memory"}},
                       "probes": [
        {"id": "discovery", "probe": "discovery-cost", "access": "read_only", "max_tools": 1,
         "max_schema_bytes": 10},
        {"id": "repeat", "probe": "degradation-over-n", **access, "tool": tool,
         "arguments": {}, "max_attempts": 3},
        {"id": "literal", "probe": "instruction-fidelity", **access, "tool": tool,
         "arguments": {}, "expect": {"outcome": "ok", "equals": {"status": "ready"}}}]})


def _leaks(value: Any) -> list[str]:
    text = json.dumps(value, default=lambda v: bytes(v).decode("latin-1") if isinstance(
        v, bytes | bytearray | memoryview) else str(v))
    return [m for m in MARKERS if m in text]


def test_no_widget_state_or_front_end_message_carries_a_canary(root: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    RecordingComm.sent.clear()
    monkeypatch.setattr(comm, "create_comm", lambda *a, **k: RecordingComm(*a, **k))
    _canary_root(root)
    store = me.open_store(root, errors="report")

    explorer = ExplorerPanel(store)
    assert settled(explorer)
    for tool in [v for v in explorer.tool.options if v != "(any)"]:
        explorer.tool.value = tool
        assert settled(explorer)
    explorer.tool.value = "(any)"
    explorer.outcome.value = "error"
    explorer.refresh_button.click()
    assert settled(explorer)
    assert "deadbeefdeadbeef" in explorer.templates.value  # the panel did render the error row

    trends = TrendsPanel(store)
    assert settled(trends)
    assert "demo" in trends.points.value

    review = ReviewPanel(root, dest=tmp_path / "envelope")
    review.check_button.click()
    assert settled(review)
    assert review.state.sweep is not None and review.state.notes == 1
    assert review.state.clean  # short markers are not what the heuristic sweep looks for
    for box in review.checklist:
        box.value = True
    review.notes.value = True  # even with the note prose included in the envelope
    review.confirm.value = True
    review.export_button.click()
    assert settled(review)
    assert review.state.result is not None and "mcpeval share envelope" in review.result.value

    servers = ((f"{sys.executable} {probe_clean.__file__} broken", "break_session"),
               (f"{sys.executable} {probe_clean.__file__} broken", "describe_status"),
               (f"{sys.executable} {transport_fault.__file__}", "ok"))
    for command, tool in servers:  # responses and errors of these servers carry CANARY text
        probe = ProbePanel(root, command=command, server="fixture")
        probe.gate_only.value = True
        probe.editor.value = _manifest(tool)
        probe.allow_mutation.value = tool in WRITERS
        probe.run_button.click()
        assert settled(probe)
        assert probe.state.report is not None
        probe.save(tmp_path / "report.json")
        assert _leaks((tmp_path / "report.json").read_text()) == []

    instances = ipywidgets.widgets.widget._instances  # the registry behind the deprecated Widget.widgets
    states = {model_id: widget.get_state() for model_id, widget in instances.items()}
    assert len(states) > 50
    assert _leaks(states) == []
    assert len(RecordingComm.sent) > 100
    assert "deadbeefdeadbeef" in json.dumps(RecordingComm.sent, default=str)  # messages were recorded
    assert _leaks(RecordingComm.sent) == []


def test_the_leak_check_sees_a_marker_put_into_a_widget_state_and_its_messages(
        monkeypatch: pytest.MonkeyPatch) -> None:
    RecordingComm.sent.clear()
    monkeypatch.setattr(comm, "create_comm", lambda *a, **k: RecordingComm(*a, **k))
    label = ipywidgets.HTML(value="nothing yet")
    image = ipywidgets.Image(format="png", value=b"CANARY raw bytes")
    try:
        label.value = f"leaked {MARK}"
        assert _leaks(label.get_state()) == [MARK] and _leaks(image.get_state()) == ["CANARY"]
        assert MARK in _leaks(RecordingComm.sent) and "CANARY" in _leaks(RecordingComm.sent)
    finally:  # out of the widget registry: a later canary test in this worker (xdist) reads all of it
        label.close()
        image.close()
