"""What the browser tests share: Debian's Chromium (Playwright never downloads one), its flags, and the
rule that a missing browser fails in CI and skips, saying what to install, elsewhere."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
#: Every host name fails to resolve: a page that needs the network shows it.
OFFLINE_ARGS = [*CHROMIUM_ARGS, "--host-resolver-rules=MAP * ~NOTFOUND"]


def require_browser(*modules: str) -> None:
    """Fail (CI) or skip (elsewhere) unless Chromium and the named Python modules are installed."""
    missing = [name for name in ("playwright", *modules) if importlib.util.find_spec(name) is None]
    if not CHROMIUM.exists():
        missing.append("Debian chromium (/usr/bin/chromium: apt-get install chromium)")
    if missing:
        reason = f"browser test needs {', '.join(missing)} (pip install -e '.[browser]')"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
