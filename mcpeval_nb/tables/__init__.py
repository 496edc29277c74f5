"""Arrow tables over a capture root: explicit schemas, a streaming exact loader, pandas/Parquet edges."""

from __future__ import annotations

from .load import LoadReport
from .parquet import to_parquet
from .progress import Progress, notebook_progress, text_progress
from .schemas import (
    ANNOTATIONS_SCHEMA,
    CALLS_SCHEMA,
    CATALOGS_SCHEMA,
    LOAD_REPORT_SCHEMA,
    SCHEMA_VERSION,
    TRENDS_SCHEMA,
)
from .store import Store, open_store

__all__ = [
    "ANNOTATIONS_SCHEMA",
    "CALLS_SCHEMA",
    "CATALOGS_SCHEMA",
    "LOAD_REPORT_SCHEMA",
    "SCHEMA_VERSION",
    "TRENDS_SCHEMA",
    "LoadReport",
    "Progress",
    "Store",
    "notebook_progress",
    "open_store",
    "text_progress",
    "to_parquet",
]
