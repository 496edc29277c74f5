"""The Parquet edge: a hive-partitioned (day, server) dataset of the calls table.

The dataset is written from streamed batches (bounded memory), zstd-compressed, one directory per
``day=<YYYY-MM-DD|unknown>/server=<label>``.  Read it back with ``pyarrow.dataset.dataset(dest,
partitioning="hive")``, DuckDB ``read_parquet('<dest>/**/*.parquet', hive_partitioning=true)`` or Polars
``scan_parquet``.  Server labels pass the label grammar, so partition directory names are safe.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from .schemas import CALLS_SCHEMA

if TYPE_CHECKING:
    from .store import Store

__all__ = ["PARQUET_SCHEMA", "to_parquet"]

#: The calls schema plus the ``day`` partition column (UTC day of ``ts`` or ``unknown``).
PARQUET_SCHEMA = CALLS_SCHEMA.append(pa.field("day", pa.string(), nullable=False))


def _with_day(batch: pa.RecordBatch) -> pa.RecordBatch:
    day = pc.fill_null(pc.strftime(batch.column("ts"), format="%Y-%m-%d"), "unknown")
    return pa.RecordBatch.from_arrays([*batch.columns, day], schema=PARQUET_SCHEMA)


def to_parquet(store: Store, dest: Path | str) -> Path:
    """Write the store's calls as a hive-partitioned Parquet dataset.

    Args:
        store: an open store (its ``errors`` mode applies while streaming).
        dest: the dataset directory; partitions written now replace earlier ones with the same keys.

    Returns:
        The dataset directory.

    Raises:
        RecordTooLarge, InvalidRecord: a bad line in raise mode.
        JournalError: the destination cannot be written.
    """
    dest = Path(dest)

    def batches() -> Iterator[pa.RecordBatch]:
        for batch in store.iter_batches("calls"):
            yield _with_day(batch.cast(CALLS_SCHEMA))

    reader = pa.RecordBatchReader.from_batches(PARQUET_SCHEMA, batches())
    try:
        ds.write_dataset(reader, dest, format="parquet",
                         partitioning=ds.partitioning(pa.schema([("day", pa.string()),
                                                                 ("server", pa.string())]), flavor="hive"),
                         existing_data_behavior="delete_matching",
                         file_options=ds.ParquetFileFormat().make_write_options(compression="zstd"))
    except OSError as exc:
        from ..errors import JournalError
        reason = exc.strerror or "I/O error"
        raise JournalError(f"cannot write Parquet dataset under {dest}: {reason}") from None
    return dest
