"""The Parquet edge: a hive-partitioned (day, server) dataset of the calls table.

The dataset is written from streamed batches of the calls table (bounded memory: ``Store.to_parquet``
passes ``Store.iter_batches("calls")``, which holds one chunk at a time), zstd-compressed, one directory per
``day=<YYYY-MM-DD|unknown>/server=<label>``.  Read it back with ``pyarrow.dataset.dataset(dest,
partitioning="hive")``, DuckDB ``read_parquet('<dest>/**/*.parquet', hive_partitioning=true)`` or Polars
``scan_parquet``.  Server labels pass the label grammar, so partition directory names are safe.

The dataset is written into a private staging directory beside the destination and swapped into place
atomically (``mcpeval_nb.root.outputs``, the share envelope's way): readers see the complete previous dataset
or the complete new one, a failed or killed export leaves the previous one as it was, and the dataset
holds exactly the store's calls (no partition of an earlier export survives).  A destination that is a
symlink, or that holds a symlink anywhere inside, is refused before anything is written.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from ..clock import day_of
from ..errors import JournalError
from ..privacy.read_rules import CALL_RULES, rule_for
from ..root.outputs import PARQUET
from .schemas import CALLS_SCHEMA

if TYPE_CHECKING:
    from .load import SkippedLine

__all__ = ["PARQUET_SCHEMA", "UNKNOWN_DAY", "ParquetExport", "count_files", "days",
           "publish_dataset", "to_parquet", "write_batches"]

T = TypeVar("T")
#: The calls schema plus the ``day`` partition column (UTC day of ``ts`` or ``UNKNOWN_DAY``).
PARQUET_SCHEMA = CALLS_SCHEMA.append(pa.field("day", pa.string(), nullable=False))
#: The partition of calls whose timestamp was not RFC 3339 (null ``ts``): the journal day a record with
#: the ``ts`` read rule's fallback is stored under.
UNKNOWN_DAY = day_of(rule_for(CALL_RULES, "ts").fallback)
#: Rows per Parquet row group: bounds what the writer buffers per open partition (memory stays flat).
_GROUP_ROWS = 128 * 1024


def _with_day(batch: pa.RecordBatch) -> pa.RecordBatch:
    day = pc.fill_null(pc.strftime(batch.column("ts"), format="%Y-%m-%d"), UNKNOWN_DAY)
    return pa.RecordBatch.from_arrays([*batch.columns, day], schema=PARQUET_SCHEMA)


def days(calls: Iterable[pa.RecordBatch | pa.Table]) -> Iterator[pa.RecordBatch]:
    """The batches of ``calls`` as ``PARQUET_SCHEMA`` batches, with their ``day`` partition column."""
    for part in calls:
        for batch in part.to_batches() if isinstance(part, pa.Table) else (part,):
            yield _with_day(batch.cast(CALLS_SCHEMA))


class ParquetExport(os.PathLike[str]):
    """Where the dataset went and what it holds: ``dest``, the Parquet ``files`` and ``rows`` it holds.

    It is path-like (``os.fspath(export)`` is the dataset directory), so it can be used as ``dest``.
    An incremental export (``Store.to_parquet``) also says how many journals it ``rewrote`` (read again
    and written anew) and ``kept`` (their files carried over unchanged), and which lines of the journals
    it read it ``skipped`` (``SkippedLine``: not usable records, under ``errors="report"``).
    """

    def __init__(self, dest: Path, files: int, rows: int, *, rewrote: int = 0, kept: int = 0,
                 skipped: tuple[SkippedLine, ...] = ()) -> None:
        self.dest, self.files, self.rows = dest, files, rows
        self.rewrote, self.kept, self.skipped = rewrote, kept, skipped

    def __fspath__(self) -> str:
        return os.fspath(self.dest)

    def __repr__(self) -> str:
        return f"ParquetExport({str(self.dest)!r}, files={self.files}, rows={self.rows})"


def count_files(stage: Path) -> int:
    """The Parquet files under ``stage``."""
    walk = os.walk(stage, followlinks=False)
    return sum(name.endswith(".parquet") for _, _, names in walk for name in names)


def to_parquet(calls: Iterable[pa.RecordBatch | pa.Table], dest: Path | str) -> ParquetExport:
    """Write calls as a hive-partitioned (day, server) Parquet dataset, replacing ``dest`` atomically.

    Args:
        calls: batches or tables of ``CALLS_SCHEMA`` rows, consumed one at a time (e.g.
            ``store.iter_batches("calls")``; ``store.to_parquet(dest)`` does exactly that).
        dest: the dataset directory (created, or replaced whole by the new dataset).

    Returns:
        The export: its directory, the files and the rows written.

    Raises:
        UsageError: ``dest`` is a symlink, not a directory, or holds a symlink; nothing was written.
        JournalError: the destination cannot be written; the previous dataset is untouched.
        Exception: whatever iterating ``calls`` raises (a store's RecordTooLarge, InvalidRecord); the
            previous dataset is untouched.
    """
    dest = Path(dest)
    rows = [0]

    def counted() -> Iterator[pa.RecordBatch]:
        for batch in days(calls):
            rows[0] += batch.num_rows
            yield batch

    def build(stage: Path) -> ParquetExport:
        write_batches(counted(), stage, dest)
        return ParquetExport(dest, count_files(stage), rows[0])

    return publish_dataset(dest, build)


def publish_dataset(dest: Path, build: Callable[[Path], T], *, root: Path | None = None) -> T:
    """Build a dataset in a staging directory beside ``dest`` and swap it in atomically, where the
    output rule (``root.outputs.PARQUET``) lets it go.

    Args:
        dest: the dataset directory (refused when it is, or holds, a symlink; before and after building).
        build: writes the complete dataset into the staging directory it is given.
        root: the capture root exported, if any (the dataset may not overlap its store).

    Returns:
        What ``build`` returned.

    Raises:
        UsageError: a symlinked destination, one holding a symlink, or one overlapping the store.
        JournalError: the staging or the swap failed; the previous dataset is untouched.
    """
    out = PARQUET.resolve(dest, root=root)
    result: list[T] = []
    PARQUET.build(out, fill=lambda stage: result.append(build(stage)))  # checked again before the swap
    return result[0]


def write_batches(batches: Iterator[pa.RecordBatch], stage: Path, dest: Path, *,
                  basename: str = "part-{i}.parquet") -> list[str]:
    """Write ``PARQUET_SCHEMA`` batches as hive partitions under ``stage``.

    Returns:
        The files written, relative to ``stage`` (``day=.../server=.../<basename>``).

    Raises:
        JournalError: a write failed (``dest`` named).
    """
    import pyarrow.dataset as ds  # here, not at import: it loads pandas (0.2 s of every command's start)

    reader = pa.RecordBatchReader.from_batches(PARQUET_SCHEMA, batches)
    written: list[str] = []
    try:
        ds.write_dataset(reader, stage, format="parquet", basename_template=basename,
                         partitioning=ds.partitioning(pa.schema([("day", pa.string()),
                                                                 ("server", pa.string())]), flavor="hive"),
                         existing_data_behavior="overwrite_or_ignore",
                         max_rows_per_group=_GROUP_ROWS, min_rows_per_group=_GROUP_ROWS // 2,
                         file_visitor=lambda f: written.append(os.path.relpath(f.path, stage)),
                         file_options=ds.ParquetFileFormat().make_write_options(compression="zstd"))
    except OSError as exc:
        reason = exc.strerror or "I/O error"
        raise JournalError(f"cannot write Parquet dataset under {dest}: {reason}") from None
    return sorted(written)
