"""The demo's exported notebook pages are self-contained: opened from disk in Chromium with every
outside host unresolvable and every non-file request refused, each panel's own text is visible.

nbconvert's default page loads require.js and the widget renderer from public CDNs, so offline every
panel is blank; the control case below removes the renderer copy and checks that the panel then is
blank, so this test can fail.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcpeval_nb.demo import build_root
from mcpeval_nb.demo.notebooks import NOTEBOOKS, run_notebooks

from .browser import CHROMIUM, OFFLINE_ARGS, require_browser

pytestmark = pytest.mark.e2e
#: Screenshots of every page, to look at (make test leaves them here).
SHOTS = Path(__file__).resolve().parents[2] / "build" / "browser"

#: Text only a rendered panel shows (widget labels), per page.
PANEL_TEXT = {
    "01-latency-and-errors": ("From day", "Refresh"),
    "02-readiness-history": ("Last N", "first shown point"),
    "03-probe-a-server": ("Run probe", "Gate only (no readiness battery)"),
    "04-review-and-share": ("Run redaction check", "Export envelope"),
    "05-findings": ("Re-index", "Re-promote"),
    "06-context-cost": ("Measure result sizes", "Load calls"),
    "07-catalog-and-usage": ("Tool catalogs", "Dead tools"),
    "08-mock-and-replay": (),  # no panel: the page is checked for markers and machine paths
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_browser()
    out = tmp_path_factory.mktemp("pages")
    root = build_root(out / "root", quick=True)
    written = run_notebooks(Path(__file__).resolve().parents[2] / "notebooks", root, out, say=lambda _l: None)
    assert [p.stem for p in written] == list(NOTEBOOKS)
    return out


def _visible(page_path: Path, texts: tuple[str, ...], *, timeout_ms: int,
             shot: Path | None = None) -> tuple[list[str], list[str]]:
    """(texts visible on the page, outside requests refused); with ``shot``, a full-page screenshot."""
    from playwright.sync_api import sync_playwright

    outside: list[str] = []
    seen = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=OFFLINE_ARGS)
        try:
            page = browser.new_page()

            def route(r):  # type: ignore[no-untyped-def]
                if r.request.url.startswith(("file://", "data:", "blob:")):
                    r.continue_()
                else:
                    outside.append(r.request.url)
                    r.abort()

            page.route("**/*", route)
            page.goto(page_path.as_uri())
            for text in texts:
                try:
                    page.get_by_text(text, exact=False).first.wait_for(state="visible", timeout=timeout_ms)
                    seen.append(text)
                except Exception:
                    pass
            if shot is not None:
                page.wait_for_timeout(500)  # let the panels' pictures decode before the screenshot
                page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    return seen, outside


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_panel_renders_offline(pages: Path, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    seen, outside = _visible(pages / f"{name}.html", PANEL_TEXT[name], timeout_ms=120_000,
                             shot=SHOTS / f"page-{name}.png")
    assert seen == list(PANEL_TEXT[name])
    assert outside == []


def test_without_the_renderer_beside_it_a_panel_is_blank(pages: Path, tmp_path: Path) -> None:
    page = tmp_path / "02-readiness-history.html"
    page.write_bytes((pages / page.name).read_bytes())
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "require.js").write_bytes((pages / "static" / "require.js").read_bytes())
    seen, _outside = _visible(page, ("Last N",), timeout_ms=4_000)
    assert seen == []


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_pages_show_readers_no_test_markers_spec_references_or_machine_paths(pages: Path, name: str) -> None:
    import sys

    text = (pages / f"{name}.html").read_text(encoding="utf-8")
    assert "NBVAL_" not in text and "SPEC 12" not in text
    checkout = str(Path(__file__).resolve().parents[2])
    for path in (str(pages), checkout, sys.prefix, str(Path.home())):
        for form in (path, path.replace("/", "\\/")):  # as text, and inside the widget state's JSON
            assert re.search(r"(?<![\w.~\\/-])" + re.escape(form) + r"(?![\w.-])", text) is None, path
