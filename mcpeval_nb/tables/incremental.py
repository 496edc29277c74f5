"""Incremental Parquet export: re-read only the journals that changed since the last export.

The dataset keeps a checkpoint, ``_mcpeval_checkpoint.json`` at its top (a leading ``_`` hides it from
pyarrow, Dask and Spark discovery, and it is no ``*.parquet`` for DuckDB or Polars globs; ``root.layout``
names it).  Per source journal it holds the file name, the proof of the prefix exported
(``journal.proof.Prefix``: identity, length, SHA-256 of its first 4 KiB, of its last 64 KiB and of the
whole prefix), the rows and the Parquet files it fed.  Each journal writes its own files
(``day=D/server=S/<journal stem>-<i>.parquet``), so a partition is the union of its journals' files.

An export builds a complete new dataset in a staging directory beside ``dest`` (``mcpeval_nb.root.outputs``)
and swaps it in atomically: files of unchanged journals are hard-linked (copied where links fail), so a
re-export after a day of appends reads and writes only that day's journal.  A journal is unchanged when,
on the descriptor opened for it, it is proven to be the one exported and no longer (``verify="full"``:
its whole prefix re-hashed); any other journal, or one whose files are missing, is read again whole
through that descriptor: an erasure rewriting earlier lines rewrites its partitions, and a journal
removed by retention takes its files with it.  A checkpoint from another capture root, another
``errors`` mode or another layout version is ignored (a full export).  Readers see the previous complete
dataset or the new one; a killed export leaves the previous one as it was.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..errors import JournalError, UsageError
from ..journal.listing import Journal
from ..journal.proof import Prefix, Snapshot, Verify
from ..limits import CHUNK_BYTES
from ..root.layout import DATASET_CHECKPOINT, DATASET_TRENDS
from .load import Errors, LoadReport, digest_cursor, load_file
from .parquet import ParquetExport, days, publish_dataset, write_batches
from .progress import Progress
from .schemas import SCHEMA_VERSION, TRENDS_SCHEMA

__all__ = ["LAYOUT", "JournalMark", "export_incremental", "read_checkpoint"]

#: Layout version of the dataset and checkpoint (a different one means a full export).  Version 2: each
#: journal's mark is the one append proof (``journal.proof.Prefix``).
LAYOUT = f"mcpeval-nb.parquet/3+calls/{SCHEMA_VERSION}"  # 3: error_code shown plain (issue 28)


@dataclass(frozen=True)
class JournalMark:
    """What the checkpoint remembers of one exported journal: its name, the proof of what was exported
    (``Prefix.to_text``), the rows and the files."""

    name: str
    prefix: str
    rows: int
    files: tuple[str, ...]


def read_checkpoint(dest: Path, *, root: Path, errors: Errors) -> dict[str, JournalMark]:
    """The journals of the dataset at ``dest`` exported from ``root`` in ``errors`` mode.

    Returns:
        ``{journal name: mark}``; empty when there is no usable checkpoint (absent, unreadable, another
        root, mode or layout): the next export is a full one.
    """
    try:
        doc = json.loads((dest / DATASET_CHECKPOINT).read_text(encoding="utf-8"))
        if doc.get("layout") != LAYOUT or doc.get("root") != os.fspath(root.resolve()) or \
                doc.get("errors") != errors:
            return {}
        marks = [JournalMark(**{**m, "files": tuple(m["files"])}) for m in doc["journals"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}
    return {m.name: m for m in marks}


def _unchanged(mark: JournalMark | None, snap: Snapshot, verify: Verify) -> bool:
    """Whether ``snap`` is the journal ``mark`` exported, not one byte longer."""
    prefix = None if mark is None else Prefix.from_text(mark.prefix)
    return prefix is not None and snap.size == prefix.offset and snap.grew_from(prefix, verify=verify)


def _carry(dest: Path, stage: Path, files: tuple[str, ...]) -> bool:
    """Hard-link (else copy) a journal's files from the current dataset; False if one is missing."""
    for rel in files:
        src, dst = dest / rel, stage / rel
        if os.path.islink(src) or not src.is_file():
            return False
        dst.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(src, dst)
        except OSError:
            try:
                shutil.copyfile(src, dst)
            except OSError as exc:
                raise JournalError(f"cannot copy {src} into the new dataset: {exc.strerror}") from None
    return True


def _export_journal(path: Path, snap: Snapshot, stage: Path, dest: Path, *, errors: Errors,
                    report: LoadReport, chunk_bytes: int, on_bytes: Any) -> JournalMark:
    cursor = digest_cursor()
    rows = [0]

    def counted() -> Iterator[pa.RecordBatch]:
        batches = load_file("calls", snap, cursor, errors=errors, report=report,
                            chunk_bytes=chunk_bytes, on_bytes=on_bytes)
        for batch in days(batches):
            rows[0] += batch.num_rows
            yield batch

    files = write_batches(counted(), stage, dest, basename=f"{path.stem}-{{i}}.parquet")
    return JournalMark(name=path.name, prefix=snap.prefix(cursor).to_text(), rows=rows[0], files=tuple(files))


def _write_checkpoint(stage: Path, root: Path, errors: Errors, marks: list[JournalMark]) -> None:
    doc = {"layout": LAYOUT, "root": os.fspath(root.resolve()), "errors": errors,
           "journals": [{**asdict(m), "files": list(m.files)} for m in marks]}
    text = json.dumps(doc, indent=1, sort_keys=True) + "\n"
    (stage / DATASET_CHECKPOINT).write_text(text, encoding="utf-8")


def _write_trends(stage: Path, trends: pa.Table) -> None:
    import pyarrow.feather as feather

    feather.write_feather(trends.cast(TRENDS_SCHEMA), stage / DATASET_TRENDS, compression="zstd")


def export_incremental(root: Path, journals: list[Journal], dest: Path | str, *, errors: Errors,
                       trends: pa.Table | None = None, verify: Verify = "window",
                       chunk_bytes: int = CHUNK_BYTES, progress: Progress | None = None) -> ParquetExport:
    """Export the calls journals of ``root`` to ``dest``, re-reading only the journals that changed.

    Args:
        root: the capture root (recorded in the checkpoint).
        journals: its calls journals, in order.
        dest: the dataset directory.
        errors: the loader's mode (``raise`` or ``report``).
        trends: the trend points to store beside the calls (``root.layout.DATASET_TRENDS``, an Arrow IPC
            file), or None for none.
        verify: ``window`` proves an unchanged journal by its identity, first 4 KiB and last 64 KiB,
            ``full`` also by its whole prefix.
        chunk_bytes: read size. progress: a ``(done, total)`` bytes callback.

    Returns:
        The export: files, rows, journals rewritten and kept.

    Raises:
        UsageError: ``dest`` is a symlink, not a directory, or holds a symlink; nothing was written.
        JournalError: the dataset cannot be written; the previous one is untouched.
        RecordTooLarge, InvalidRecord: a bad line in raise mode; the previous dataset is untouched.
    """
    if verify not in ("window", "full"):
        raise UsageError('verify must be "window" or "full"')
    dest = Path(dest)

    def build(stage: Path) -> ParquetExport:
        return _build(root, journals, dest, stage, errors=errors, trends=trends, verify=verify,
                      chunk_bytes=chunk_bytes, progress=progress)

    return publish_dataset(dest, build, root=root)


def _build(root: Path, journals: list[Journal], dest: Path, stage: Path, *, errors: Errors,
           trends: pa.Table | None, verify: Verify, chunk_bytes: int,
           progress: Progress | None) -> ParquetExport:
    previous = read_checkpoint(dest, root=root, errors=errors) if dest.is_dir() else {}
    marks: list[JournalMark] = []
    todo = [j for j in journals if _changed(previous.get(j.path.name), j.path)]  # the progress estimate
    total, done, rewrote = sum(_size(j.path) for j in todo), 0, 0
    report = LoadReport()
    for journal in journals:
        mark = previous.get(journal.path.name)
        with Snapshot(journal.path) as snap:  # proven, read and marked through one descriptor
            if _unchanged(mark, snap, verify) and mark is not None and _carry(dest, stage, mark.files):
                marks.append(mark)
                continue

            def on_bytes(n: int, before: int = done) -> None:
                if progress is not None:
                    progress(min(total, before + n), max(total, before + n))

            marks.append(_export_journal(journal.path, snap, stage, dest, errors=errors, report=report,
                                         chunk_bytes=chunk_bytes, on_bytes=on_bytes))
            done, rewrote = done + snap.size, rewrote + 1
    if progress is not None and rewrote:
        progress(max(total, done), max(total, done))
    _write_checkpoint(stage, root, errors, marks)
    if trends is not None:
        _write_trends(stage, trends)
    return ParquetExport(dest, sum(len(m.files) for m in marks), sum(m.rows for m in marks),
                         rewrote=rewrote, kept=len(marks) - rewrote, skipped=report.lines())


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _changed(mark: JournalMark | None, path: Path) -> bool:
    """A cheap guess, for progress only: whether the journal will be read again (its size moved)."""
    prefix = None if mark is None else Prefix.from_text(mark.prefix)
    return prefix is None or _size(path) != prefix.offset
