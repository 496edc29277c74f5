"""Every panel that loads on construction is drawn complete when its constructor returns: a front end
that attaches after the cell ran (Voila, an exported page) reads the widget state once and may drop
updates that arrive while it sets up its models, so nothing of the first view may still be in flight."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import mcpeval_nb as me
from mcpeval_nb.widgets import CatalogPanel, ExplorerPanel, FindingsPanel, TrendsPanel


@pytest.fixture(scope="module")
def history_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from mcpeval_nb.demo.history import generate_history

    root = tmp_path_factory.mktemp("first-view") / "root"
    root.mkdir()
    generate_history(root, today=dt.date(2026, 12, 1))
    return root


PANELS: dict[str, Callable[[Path], Any]] = {
    "catalog": lambda root: CatalogPanel(me.open_store(root)),
    "explorer": lambda root: ExplorerPanel(me.open_store(root)),
    "trends": lambda root: TrendsPanel(me.open_store(root)),
    "findings": lambda root: FindingsPanel(root),
}


@pytest.mark.parametrize("name", sorted(PANELS))
def test_the_first_view_is_complete_when_the_constructor_returns(history_root: Path, name: str) -> None:
    panel = PANELS[name](history_root)
    assert not panel.busy
    status = str(panel.status.value)
    assert status and "loading" not in status and "computing" not in status, status
