"""The error templates a baseline knows: a share envelope or a Parquet export directory.

* a share envelope (``mcpeval-nb share --dir``: ``SHARE.md`` and ``store/*.jsonl``) — or any capture
  root — is read with ``open_store`` like the store itself;
* a Parquet export (``mcpeval-nb export-parquet --dest``: ``day=*/server=*/*.parquet``) is read with
  ``pyarrow.dataset``, only the columns ``error_templates`` needs.

The baseline's template ids are used for membership only and never printed, so a hand-edited baseline
cannot put text into a gate report.
"""

from __future__ import annotations

from pathlib import Path

from ..analysis import error_templates
from ..errors import DocumentError
from ..root.layout import store_dir
from ..tables import open_store

__all__ = ["baseline_templates"]

_COLUMNS = ["error_template_id", "ts", "session", "tool", "error_code"]


def _parquet(path: Path) -> frozenset[str]:
    import pyarrow as pa
    import pyarrow.dataset as ds

    try:
        table = ds.dataset(path, format="parquet", partitioning="hive").to_table(columns=_COLUMNS)
    except (pa.ArrowException, OSError) as exc:
        raise DocumentError(f"--baseline {path}: not a readable Parquet export "
                            f"({type(exc).__name__})") from None
    return frozenset(error_templates(table).column("template_id").to_pylist())


def baseline_templates(path: Path) -> frozenset[str]:
    """The template ids of every error in the baseline at ``path``.

    Raises:
        DocumentError: ``path`` is neither a share envelope (a ``store/`` directory) nor a directory
            holding a Parquet export (exit 2).
        JournalError: the envelope's journals could not be read (exit 3).
    """
    if not path.is_dir():
        raise DocumentError(f"--baseline {path} is not a directory")
    if store_dir(path).is_dir():
        return frozenset(error_templates(open_store(path).calls).column("template_id").to_pylist())
    if next(path.rglob("*.parquet"), None) is not None:
        return _parquet(path)
    raise DocumentError(f"--baseline {path} is neither a share envelope (store/) nor a Parquet export")
