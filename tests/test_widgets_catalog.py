"""The catalog panel headless: its state, its views (each the charts function a notebook cell calls),
the server filter, refresh after new listings, an empty root."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

import mcpeval_nb as me
from mcpeval_nb.transport import McpSession
from mcpeval_nb.widgets import CatalogPanel
from tests.catalog_support import stdio_shim
from tests.shim_helpers import wait_for
from tests.waiting import settled


@pytest.fixture
def history_root(tmp_path: Path) -> Path:
    from mcpeval_nb.demo.history import generate_history

    root = tmp_path / "root"
    root.mkdir()
    generate_history(root, today=dt.date(2026, 12, 1))
    return root


def test_the_panel_shows_the_catalog_changes_dead_tools_and_clusters(history_root: Path) -> None:
    panel = CatalogPanel(me.open_store(history_root))
    assert settled(panel)
    s = panel.state
    listed = ["search", "fetch_page", "list_sections", "export_pdf", "translate_page"]
    assert [t[1] for t in s.tools] == listed
    assert {(r["tool"], r["change"]) for r in s.changes} == {("translate_page", "added"),
                                                             ("fetch_page", "schema-changed")}
    assert {r["tool"] for r in s.dead} == {"export_pdf", "translate_page"}
    assert [c["tools"] for c in s.clusters] == [["fetch_page", "search"]]
    assert s.pins == {"generated-docs": "unpinned"} and "5 tool(s) listed now" in s.status
    pictures = set()
    for view in ("usage", "transitions", "timeline"):
        panel.view.value = view
        pictures.add(bytes(panel.chart.value))
    assert len(pictures) == 3 and all(p.startswith(b"\x89PNG") for p in pictures)


def test_the_server_filter_and_refresh_follow_new_listings(history_root: Path) -> None:
    panel = CatalogPanel(me.open_store(history_root), server="generated-docs", view="usage")
    assert settled(panel) and panel.server.value == "generated-docs" and panel.view.value == "usage"
    with McpSession.connect(stdio_shim(history_root, "inv", "v1"), timeout=120.0) as session:
        session.initialize(capabilities={})
        session.list_tools()
        # the record lands once the shim's recorder took the listing: wait for it with the session open
        # (closing the session SIGKILLs the shim's group after 1 s, recorder included, on a loaded machine)
        assert wait_for(lambda: b'"server":"inv"' in b"".join(
            p.read_bytes() for p in (history_root / "store").glob("catalogs-*.jsonl")), timeout=120)
    panel.refresh_button.click()
    assert settled(panel)
    assert "inv" in panel.state.servers and {t[0] for t in panel.state.tools} == {"generated-docs"}
    panel.server.value = "inv"
    assert settled(panel)
    assert {t[0] for t in panel.state.tools} == {"inv"} and panel.state.dead == []
    assert 'class="mcpeval-dead-none"' in panel.details.value and "mcpeval-dead\"" not in panel.details.value
    panel.server.value = ""
    assert settled(panel)
    assert {t[0] for t in panel.state.tools} == {"generated-docs", "inv"}


def test_a_root_path_or_the_default_root_opens_the_store_once(history_root: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPEVAL_HOME", str(history_root))
    for panel in (CatalogPanel(history_root), CatalogPanel(str(history_root)), CatalogPanel()):
        assert settled(panel) and isinstance(panel.store, me.Store)
        assert panel.state.servers == ["generated-docs"] and len(panel.state.tools) == 5


def test_an_empty_root_says_so_and_draws_the_empty_pictures(tmp_path: Path) -> None:
    panel = CatalogPanel(me.open_store(tmp_path))
    assert settled(panel)
    assert panel.state.status == "0 tool(s) listed now, 0 change(s), 0 flagged, 0 dead"
    assert bytes(panel.chart.value).startswith(b"\x89PNG")
    for section in ("catalog", "drift", "dead", "clusters"):  # each says why it is empty, no bare header
        assert f'class="mcpeval-{section}-none"' in panel.details.value
    assert "<table" not in panel.details.value
