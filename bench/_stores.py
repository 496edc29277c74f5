"""Cached synthetic stores for the benchmarks: generated through the real writer once, reused by a marker."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path


def cached_synthetic(path: Path, params: Mapping[str, object]) -> Path:
    """``synthetic_store(path, **params)``, unless ``path`` already holds it (its ``READY`` marker
    records the parameters); generating a million records takes about a minute."""
    marker = path / "READY"
    if marker.exists() and json.loads(marker.read_text() or "{}") == dict(params):
        return path
    from mcpeval_nb.testing import synthetic_store
    shutil.rmtree(path, ignore_errors=True)
    print(f"generating {params['calls']:,} call records under {path} ...", file=sys.stderr)
    synthetic_store(path, **params)  # type: ignore[arg-type]
    marker.write_text(json.dumps(dict(params)))
    return path
