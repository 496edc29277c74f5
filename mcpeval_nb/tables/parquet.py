"""The Parquet edge: a hive-partitioned (day, server) dataset of the calls table.

The dataset is written from streamed batches of the calls table (bounded memory: ``Store.to_parquet``
passes ``Store.iter_batches("calls")``, which holds one chunk at a time), zstd-compressed, one directory per
``day=<YYYY-MM-DD|unknown>/server=<label>``.  Read it back with ``pyarrow.dataset.dataset(dest,
partitioning="hive")``, DuckDB ``read_parquet('<dest>/**/*.parquet', hive_partitioning=true)`` or Polars
``scan_parquet``.  Server labels pass the label grammar, so partition directory names are safe.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from ..errors import JournalError
from ..privacy.read_rules import CALL_RULES, rule_for
from ..privacy.timestamps import day_of
from .schemas import CALLS_SCHEMA

__all__ = ["PARQUET_SCHEMA", "UNKNOWN_DAY", "to_parquet"]

#: The calls schema plus the ``day`` partition column (UTC day of ``ts`` or ``UNKNOWN_DAY``).
PARQUET_SCHEMA = CALLS_SCHEMA.append(pa.field("day", pa.string(), nullable=False))
#: The partition of calls whose timestamp was not RFC 3339 (null ``ts``): the journal day a record with
#: the ``ts`` read rule's fallback is stored under.
UNKNOWN_DAY = day_of(rule_for(CALL_RULES, "ts").fallback)


def _with_day(batch: pa.RecordBatch) -> pa.RecordBatch:
    day = pc.fill_null(pc.strftime(batch.column("ts"), format="%Y-%m-%d"), UNKNOWN_DAY)
    return pa.RecordBatch.from_arrays([*batch.columns, day], schema=PARQUET_SCHEMA)


def _days(calls: Iterable[pa.RecordBatch | pa.Table]) -> Iterator[pa.RecordBatch]:
    for part in calls:
        for batch in part.to_batches() if isinstance(part, pa.Table) else (part,):
            yield _with_day(batch.cast(CALLS_SCHEMA))


def to_parquet(calls: Iterable[pa.RecordBatch | pa.Table], dest: Path | str) -> Path:
    """Write calls as a hive-partitioned (day, server) Parquet dataset.

    Args:
        calls: batches or tables of ``CALLS_SCHEMA`` rows, consumed one at a time (e.g.
            ``store.iter_batches("calls")``; ``store.to_parquet(dest)`` does exactly that).
        dest: the dataset directory; partitions written now replace earlier ones with the same keys.

    Returns:
        The dataset directory.

    Raises:
        JournalError: the destination cannot be written.
        Exception: whatever iterating ``calls`` raises (a store's RecordTooLarge, InvalidRecord).
    """
    dest = Path(dest)
    reader = pa.RecordBatchReader.from_batches(PARQUET_SCHEMA, _days(calls))
    try:
        ds.write_dataset(reader, dest, format="parquet",
                         partitioning=ds.partitioning(pa.schema([("day", pa.string()),
                                                                 ("server", pa.string())]), flavor="hive"),
                         existing_data_behavior="delete_matching",
                         file_options=ds.ParquetFileFormat().make_write_options(compression="zstd"))
    except OSError as exc:
        reason = exc.strerror or "I/O error"
        raise JournalError(f"cannot write Parquet dataset under {dest}: {reason}") from None
    return dest
