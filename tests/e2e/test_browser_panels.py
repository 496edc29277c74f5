"""The panels in a real browser: Voila serves a panel notebook on 127.0.0.1, Playwright drives Chromium.

Uses Debian's ``/usr/bin/chromium`` through ``executable_path`` (Playwright never downloads a browser).
In CI (``CI`` set) a missing Chromium, Voila or Playwright is a failure; elsewhere the test skips and
says what to install.  Screenshots go to ``build/browser/``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcpeval_nb.testing.servers.probe_clean as probe_clean
from mcpeval_nb.testing.servers.catalog_drift import CANARY
from mcpeval_nb.testing.synthetic import synthetic_store

from .browser import CHROMIUM, CHROMIUM_ARGS, require_browser, voila, write_notebook

pytestmark = pytest.mark.e2e
#: A ceiling for a page or an element to reach its state, only against a hang: each wait ends as soon as it
#: does, and a loaded machine's Voila kernel may take minutes to start.
WAIT_MS = 180_000

REPO = Path(__file__).resolve().parents[2]
MANIFEST = REPO / "data" / "manifests" / "probe-fixture.manifest.json"
SHOTS = REPO / "build" / "browser"


def _require() -> None:
    require_browser("voila")


def _notebook(path: Path, dest: Path) -> None:
    source = f"""
import os, sys
from pathlib import Path
from IPython.display import display
from mcpeval_nb.widgets import ProbePanel, ReviewPanel

ROOT = Path(os.environ["MCPEVAL_HOME"])
probe = ProbePanel(ROOT, command={f"{sys.executable} {probe_clean.__file__} broken"!r},
                   manifest={str(MANIFEST)!r}, server="fixture")
probe.gate_only.value = True
display(probe)
display(ReviewPanel(ROOT, dest={str(dest)!r}))
"""
    write_notebook(path, source)


@pytest.fixture
def voila_panels(root: Path, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A Voila server on 127.0.0.1 serving the panel notebook; yields (url, envelope dir)."""
    _require()
    synthetic_store(root, calls=120, trends=False)
    dest = tmp_path / "envelope"
    _notebook(tmp_path / "panels.ipynb", dest)
    env = dict(os.environ, MCPEVAL_HOME=str(root), MPLBACKEND="Agg")
    with voila(tmp_path / "panels.ipynb", env=env) as url:
        yield url, dest


def test_probe_and_review_panels_work_in_a_real_browser(voila_panels: tuple[str, Path]) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, dest = voila_panels
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 2400})
            page.set_default_timeout(WAIT_MS)
            expect.set_options(timeout=WAIT_MS)
            page.goto(url, timeout=WAIT_MS)
            run = page.get_by_role("button", name="Run probe")
            expect(run).to_be_enabled(timeout=WAIT_MS)
            run.click()
            verdicts = page.locator("table.mcpeval-verdicts")
            expect(verdicts).to_contain_text("value-mismatch", timeout=WAIT_MS)
            expect(verdicts).to_contain_text("unexpected-outcome")
            expect(page.get_by_text("gate 3/5 passed")).to_be_visible()
            page.screenshot(path=str(SHOTS / "probe-panel.png"), full_page=True)

            page.get_by_role("button", name="Run redaction check").click()
            expect(page.get_by_text("clean:", exact=False)).to_be_visible(timeout=WAIT_MS)
            export = page.get_by_role("button", name="Export envelope")
            expect(export).to_be_disabled()
            for label in ("I know what goes in", "I understand annotation notes",
                          "The envelope will not travel", "I understand the sweep is heuristic",
                          "I reviewed the sweep"):
                page.get_by_label(label, exact=False).check()
            expect(export).to_be_enabled(timeout=WAIT_MS)
            export.click()
            expect(page.locator("code.mcpeval-envelope")).to_have_text(str(dest), timeout=WAIT_MS)
            expect(page.locator("pre.mcpeval-share-md")).to_contain_text("mcpeval share envelope")
            page.screenshot(path=str(SHOTS / "review-panel.png"), full_page=True)
        finally:
            browser.close()
    assert (dest / "SHARE.md").is_file() and not (dest / ".salt").exists()


@pytest.fixture
def voila_catalog(root: Path, tmp_path: Path) -> Iterator[str]:
    """Voila serving a CatalogPanel over the demo's catalog sessions (real shim captures: a pinned
    catalog that changed, a poisoned one) and its generated history (the dead tools); yields the URL."""
    from mcpeval_nb.demo.catalogs import catalog_sessions
    from mcpeval_nb.demo.history import generate_history

    _require()
    catalog_sessions(root, say=lambda _line: None)
    generate_history(root)
    source = """
import os
from pathlib import Path
from IPython.display import display
import mcpeval_nb as me
from mcpeval_nb.widgets import CatalogPanel

display(CatalogPanel(me.open_store(Path(os.environ["MCPEVAL_HOME"]))))
"""
    env = dict(os.environ, MCPEVAL_HOME=str(root), MPLBACKEND="Agg")
    with voila(write_notebook(tmp_path / "catalog.ipynb", source), env=env) as url:
        yield url


def test_the_catalog_panel_works_in_a_real_browser(voila_catalog: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1800})
            page.set_default_timeout(WAIT_MS)
            expect.set_options(timeout=WAIT_MS)
            page.goto(voila_catalog, timeout=WAIT_MS)
            expect(page.get_by_text("tool(s) listed now", exact=False)).to_be_visible(timeout=WAIT_MS)
            drift, listed = page.locator("table.mcpeval-drift"), page.locator("table.mcpeval-catalog")
            for change in ("renamed", "description-changed", "schema-changed", "annotations-changed",
                           "added", "removed"):
                expect(drift).to_contain_text(change)
            for flag in ("hidden-text", "model-directive", "cross-tool-reference", "secret-request",
                         "oversized"):
                expect(listed).to_contain_text(flag)
            expect(page.locator("table.mcpeval-dead")).to_contain_text("export_pdf")
            picture = page.locator("img.widget-image")
            timeline = picture.get_attribute("src")
            page.screenshot(path=str(SHOTS / "catalog-panel.png"), full_page=True)

            page.get_by_role("button", name="usage", exact=True).click()
            expect(picture).not_to_have_attribute("src", timeline or "", timeout=WAIT_MS)
            page.locator("select").select_option(label="inventory")
            expect(page.locator("table.mcpeval-drift tbody tr").first).to_contain_text("inventory",
                                                                                          timeout=WAIT_MS)
            expect(listed).not_to_contain_text("weather", timeout=WAIT_MS)
            expect(listed).to_contain_text("remove_item")
            expect(page.locator("p.mcpeval-dead-none")).to_contain_text("none: a tool is dead only")
            page.screenshot(path=str(SHOTS / "catalog-panel-inventory-usage.png"), full_page=True)
            assert CANARY not in page.content()
        finally:
            browser.close()
