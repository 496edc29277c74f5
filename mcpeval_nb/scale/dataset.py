"""Where an engine's data comes from: a Parquet dataset directory, or a capture root exported to one.

A capture root (or an open ``Store``) is exported incrementally to ``<root>/calls.parquet`` first, so an
engine over a root always sees the store as it is now, re-reading only the journals that changed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa

from ..errors import UsageError
from ..root.layout import DATASET_CHECKPOINT, DATASET_TRENDS, engine_dataset_path, store_dir
from ..tables.schemas import TRENDS_SCHEMA
from ..tables.store import Store, open_store

__all__ = ["Source", "dataset_files", "resolve_dataset", "stored_trends"]

Source = Store | str | os.PathLike[str]


def resolve_dataset(source: Source) -> Path:
    """The dataset directory of ``source``: the directory itself, or a root's exported dataset.

    Args:
        source: a Parquet dataset directory, a capture root or a ``Store``.

    Returns:
        A dataset directory (for a root or store: ``<root>/calls.parquet``, refreshed first).

    Raises:
        UsageError: ``source`` is not a directory.
        JournalError, RecordTooLarge, InvalidRecord: what the export raises.
    """
    if isinstance(source, Store):
        return Path(os.fspath(source.to_parquet(engine_dataset_path(source.root))))
    path = Path(source)
    if not path.is_dir():
        raise UsageError(f"no Parquet dataset or capture root at {path}")
    if (path / DATASET_CHECKPOINT).exists() or not store_dir(path).is_dir():
        return path
    return resolve_dataset(open_store(path))


def dataset_files(dataset: Path) -> list[str]:
    """The dataset's Parquet files (hidden ``.``/``_`` names skipped, symlinks never followed), sorted."""
    out: list[str] = []
    for top, dirs, files in os.walk(dataset, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        out += [os.path.join(top, f) for f in files if f.endswith(".parquet") and not f.startswith((".", "_"))
                and not os.path.islink(os.path.join(top, f))]
    return sorted(out)


def stored_trends(dataset: Path) -> pa.Table:
    """The trend points stored beside the calls (``_mcpeval_trends.arrow``), or an empty trends table."""
    path = dataset / DATASET_TRENDS
    if not path.is_file():
        return TRENDS_SCHEMA.empty_table()
    import pyarrow.feather as feather

    return feather.read_table(path).cast(TRENDS_SCHEMA)
