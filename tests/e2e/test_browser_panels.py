"""The panels in a real browser: Voila serves a panel notebook on 127.0.0.1, Playwright drives Chromium.

Uses Debian's ``/usr/bin/chromium`` through ``executable_path`` (Playwright never downloads a browser).
In CI (``CI`` set) a missing Chromium, Voila or Playwright is a failure; elsewhere the test skips and
says what to install.  Screenshots go to ``build/browser/``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcpeval_nb.testing.servers.probe_clean as probe_clean
from mcpeval_nb.testing.synthetic import synthetic_store

from .browser import CHROMIUM, CHROMIUM_ARGS, require_browser

pytestmark = pytest.mark.e2e

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
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": "panels", "metadata": {},
                     "outputs": [], "source": source.strip()}],
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def voila(root: Path, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A Voila server on 127.0.0.1 serving the panel notebook; yields (url, envelope dir)."""
    _require()
    synthetic_store(root, calls=120, trends=False)
    dest = tmp_path / "envelope"
    _notebook(tmp_path / "panels.ipynb", dest)
    port = _free_port()
    env = dict(os.environ, MCPEVAL_HOME=str(root), MPLBACKEND="Agg")
    proc = subprocess.Popen(
        [sys.executable, "-m", "voila", "panels.ipynb", "--no-browser", f"--port={port}",
         "--Voila.ip=127.0.0.1", "--show_tracebacks=True"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:  # the port accepts connections once Voila's server is up
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("voila did not start") from None
                time.sleep(0.25)
        yield url, dest
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)


def test_probe_and_review_panels_work_in_a_real_browser(voila: tuple[str, Path]) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, dest = voila
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 2400})
            page.goto(url, timeout=90_000)
            run = page.get_by_role("button", name="Run probe")
            expect(run).to_be_enabled(timeout=90_000)
            run.click()
            verdicts = page.locator("table.mcpeval-verdicts")
            expect(verdicts).to_contain_text("value-mismatch", timeout=60_000)
            expect(verdicts).to_contain_text("unexpected-outcome")
            expect(page.get_by_text("gate 3/5 passed")).to_be_visible()
            page.screenshot(path=str(SHOTS / "probe-panel.png"), full_page=True)

            page.get_by_role("button", name="Run redaction check").click()
            expect(page.get_by_text("clean:", exact=False)).to_be_visible(timeout=60_000)
            export = page.get_by_role("button", name="Export envelope")
            expect(export).to_be_disabled()
            for label in ("I know what goes in", "I understand annotation notes",
                          "The envelope will not travel", "I understand the sweep is heuristic",
                          "I reviewed the sweep"):
                page.get_by_label(label, exact=False).check()
            expect(export).to_be_enabled(timeout=10_000)
            export.click()
            expect(page.locator("code.mcpeval-envelope")).to_have_text(str(dest), timeout=60_000)
            expect(page.locator("pre.mcpeval-share-md")).to_contain_text("mcpeval share envelope")
            page.screenshot(path=str(SHOTS / "review-panel.png"), full_page=True)
        finally:
            browser.close()
    assert (dest / "SHARE.md").is_file() and not (dest / ".salt").exists()
