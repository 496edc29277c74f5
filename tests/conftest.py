"""Shared fixtures: isolated capture roots and canary strings."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh capture root, also exported as MCPEVAL_HOME for subprocesses and default lookups."""
    path = tmp_path / "capture-root"
    monkeypatch.setenv("MCPEVAL_HOME", str(path))
    yield path
