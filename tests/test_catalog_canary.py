"""Catalog canaries through the public surface: markers planted in descriptions, schema descriptions,
titles and enum values that fail the grammar (the catalog fixture's ``CANARY``), and in a hand-edited
catalog line, never reach the store, a table, a chart, any CLI output, the envelope, index.db, serve,
or the catalog panel's state and front-end messages."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, ClassVar

import comm
import ipywidgets
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from comm.base_comm import BaseComm

import mcpeval_nb as me
from mcpeval_nb import charts
from mcpeval_nb.testing.servers.catalog_drift import CANARY
from mcpeval_nb.widgets import CatalogPanel
from tests.catalog_support import calls, list_only, run_session, stdio_shim
from tests.ci_support import cli
from tests.serve_support import sdk_call, serving
from tests.waiting import settled

HAND = "cnry-cat!"
MARKERS = (CANARY, "CANARY", HAND)


class RecordingComm(BaseComm):  # type: ignore[misc]
    """A comm that keeps every message a widget publishes."""

    sent: ClassVar[list[Any]] = []

    def publish_msg(self, msg_type: str, data: Any = None, metadata: Any = None, buffers: Any = None,
                    **keys: Any) -> None:
        RecordingComm.sent.append((msg_type, data, [bytes(b) for b in buffers or []]))


def _leaks(value: Any) -> list[str]:
    text = json.dumps(value, default=lambda v: bytes(v).decode("latin-1") if isinstance(
        v, bytes | bytearray | memoryview) else str(v))
    return [m for m in MARKERS if m in text]


def _svg(ax: Any) -> str:
    buf = io.StringIO()
    ax.figure.savefig(buf, format="svg")
    plt.close(ax.figure)
    return buf.getvalue()


@pytest.fixture(scope="module")
def canary_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("catalog-canary") / "root"
    run_session(stdio_shim(root, "inv", "v1", "--page-size", "4"), calls("search_items", "get_item"))
    me.pin_catalogs(root)
    run_session(stdio_shim(root, "inv", "v2"), list_only)
    run_session(stdio_shim(root, "weather", "poisoned"), calls("weather_now"))
    tool = {"name": HAND, "def_digest": HAND, "desc_bucket": HAND, "flags": [HAND], "hints": {HAND: True},
            "skeleton": {"type": [HAND], "properties": {HAND: {}}, "enum": [HAND]}}
    edited = {"ts": "2026-08-04T10:00:00.000Z", "session": HAND, "seq": 1, "server": HAND, "complete": True,
              HAND: HAND, "tools": [tool]}
    with (root / "store" / "catalogs-2026-08-04.jsonl").open("a") as handle:
        handle.write(json.dumps(edited) + "\n")
    return root


def test_no_catalog_canary_reaches_the_store_tables_charts_or_any_cli_output(
        canary_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = canary_root
    journals = b"".join(p.read_bytes() for p in (root / "store").rglob("*.jsonl"))
    assert CANARY.encode() not in journals  # the privacy boundary itself
    assert b"weather_directive" in journals and b'"model-directive"' in journals  # what was recorded
    store = me.open_store(root)
    tables = [store.catalogs, me.catalog_history(store), me.catalog_drift(store),
              me.catalog_drift(store, pins=True), me.tool_usage(store), me.tool_transitions(store),
              me.tool_clusters(store)]
    outputs: list[str] = [json.dumps(t.to_pylist(), default=str) for t in tables]
    outputs.append(json.dumps(me.catalog_status(store).to_json()))
    outputs += [_svg(charts.plot_catalog_timeline(tables[2], history=tables[1])),
                _svg(charts.plot_tool_usage(tables[4])), _svg(charts.plot_tool_transitions(tables[5]))]
    budgets = tmp_path / "budgets.json"
    budgets.write_text(json.dumps({"version": 1, "budgets": [], "catalog": {"fail_on": "any"}}))
    envelope = tmp_path / "envelope"
    for argv in (["catalog"], ["catalog", "--format", "json"], ["catalog", "--format", "md"], ["usage"],
                 ["usage", "--format", "json"], ["catalog", "check"],
                 ["catalog", "check", "--format", "json"], ["catalog", "check", "--format", "junit"],
                 ["catalog", "check", "--format", "sarif"],
                 ["gate", "--budgets", str(budgets), "--format", "json"], ["doctor"], ["summary"],
                 ["share", "--dir", str(envelope)], ["index"], ["catalog", "pin"]):
        code, out, err = cli(capsys, *argv, "--root", str(root))
        assert code in (0, 1), (argv, code, err)
        outputs.append(out + err)
    outputs += [p.read_text(encoding="utf-8") for p in sorted(envelope.rglob("*")) if p.is_file()]
    outputs += [(root / "catalog-pins.json").read_text(), (root / "audit.jsonl").read_text()]
    assert HAND not in (root / "index.db").read_bytes().decode("latin-1")
    assert CANARY not in (root / "index.db").read_bytes().decode("latin-1")
    leaks = [(i, m) for i, text in enumerate(outputs) for m in MARKERS if m in text]
    assert leaks == []


def test_serve_and_the_catalog_panel_carry_no_catalog_canary(canary_root: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    with serving(canary_root) as server:
        result = sdk_call(server.url, "get_catalog_status", {})
    answer = result.model_dump()
    assert "weather" in json.dumps(answer) and _leaks(answer) == []

    RecordingComm.sent.clear()
    monkeypatch.setattr(comm, "create_comm", lambda *a, **k: RecordingComm(*a, **k))
    earlier = set(ipywidgets.widgets.widget._instances)  # other test files' widgets in this worker (xdist)
    panel = CatalogPanel(me.open_store(canary_root))
    assert settled(panel)
    assert "weather_secret" in panel.details.value and "secret-request" in panel.details.value
    for view in ("usage", "transitions", "timeline"):
        panel.view.value = view
    panel.server.value = "weather"
    assert settled(panel)
    assert [t[1] for t in panel.state.tools][:2] == ["weather_now", "weather_hidden"]
    panel.refresh_button.click()
    assert settled(panel)
    states = {k: v.get_state() for k, v in ipywidgets.widgets.widget._instances.items() if k not in earlier}
    assert states
    assert _leaks(states) == [] and _leaks(panel.state.__dict__) == []
    assert len(RecordingComm.sent) > 10 and _leaks(RecordingComm.sent) == []
