"""The share envelope (SPEC 11): checked, normalised snapshots of the store, published atomically.

``export_share`` follows SPEC 11 step by step.  Everything that can be refused without writing is
checked first (store, output, overlap, the store's entries); then each selected journal is snapshotted
under a shared lock and streamed in bounded chunks: every non-blank line is normalised (sorted keys,
compact, newline), the exact normalised bytes are swept with the doctor's detectors, and clean records
go to the staging directory.  Only after a clean sweep is ``SHARE.md`` written and the staging directory
swapped into place; any failure or a flagged sweep removes staging and leaves a previous envelope
byte-identical.  Memory is bounded by the record limit and the chunk size, not by the store.  Stores of
32 MiB or more are normalised and swept by helper processes (``sharepool``, ``sharework``): the
parent keeps the walk, the snapshots, the chunk boundaries and the order, and assembles each staged
journal from the helpers' part files; the bytes published are the same either way.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Iterator
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import ReviewError, ShareOutputError, ShareRefused
from ..governance import audit
from ..governance.erasure import recover
from ..journal.snapshot import locked_size, spans
from ..journal.walk import StoreFile
from ..limits import MAX_RECORD_BYTES, SHARE_READ_BYTES, SHARE_SPAN_BYTES
from ..root import Root, RootLike, entry_exists
from ..root.layout import store_dir
from ..root.outputs import SHARE, Staging, discard, publish, remove_stale_staging
from .doctor import FlaggedLine, snapshot_chunks, store_files
from .resanitise import journal_kind
from .sharepool import HelperPool, copy_part, helper_count, part_path, settle_in_order
from .sharework import ProcessedChunk, SpanDone, SpanJob, process_chunk

__all__ = ["ShareOptions", "ShareResult", "export_share", "share_md"]

Progress = Callable[[int, int], None]
#: Called with the name of each step an export reaches (``staging-created``, ``snapshot-taken``,
#: ``chunk-written``, ``before-publish``, ``after-publish``); only tests pass one (``_checkpoint``), to
#: stop an export at a known step.  Production code never sets it.
Checkpoint = Callable[[str], None]
HELPERS_BROKE = ("share helper processes stopped unexpectedly; nothing was published (a script that "
                 "exports at import time needs an `if __name__ == \"__main__\":` guard; "
                 "ShareOptions(workers=0) exports in process)")


@dataclass(frozen=True, kw_only=True)
class ShareOptions:
    """What to put in the envelope.

    Attributes:
        include_probe_history: also export ``store/probes/``.
        include_annotation_notes: keep annotation ``note`` prose (otherwise replaced by ``""``).
        force: replace a non-empty output (only after the new envelope is fully prepared).
        workers: helper processes for normalising and sweeping (None = by store size and usable
            cores: stores under 32 MiB stay in process; 0 = always in process).  The envelope's bytes
            do not depend on it.
    """

    include_probe_history: bool = False
    include_annotation_notes: bool = False
    force: bool = False
    workers: int | None = None


@dataclass(frozen=True)
class ShareResult:
    """A published envelope.

    Attributes:
        dest: the envelope directory.
        files: relative paths of the exported journals (under ``<dest>/store/``).
        records: normalised records written.
        notes_included: annotation notes kept (only with ``include_annotation_notes``).
        bytes_read: snapshot bytes processed.
        stale_staging_removed: staging directories of killed exports that were cleaned up.
        audit_written: the audit record of the export was written (False: a warning was printed).
        rewritten: hand-edited records the store's read rules rewrote (0 for journals the writers
            produced: sanitising is idempotent).
    """

    dest: Path
    files: tuple[str, ...]
    records: int
    notes_included: int
    bytes_read: int
    stale_staging_removed: int = 0
    audit_written: bool = True
    rewritten: int = 0


def share_md(files: int, notes: int | None, rewritten: int = 0) -> str:
    """The exact ``SHARE.md`` text (SPEC 11 step 7).

    Args:
        files: JSONL files scanned.
        notes: annotation notes included, or None when notes were excluded.
        rewritten: records the read rules rewrote; when there are any, one line after the sweep line
            says so (without any, the text is SPEC's, byte for byte).

    Returns:
        The file's text, ending with a newline.
    """
    if notes is None:
        notice = "Annotation prose: excluded. Typed annotation metadata is retained."
    else:
        notice = f"ATTENTION: {notes} annotation note(s) explicitly included; review before sharing."
    return ("# mcpeval share envelope\n\n"
            "Checked JSONL snapshots from store/. Excludes the fingerprint salt, index.db, and manifests.\n\n"
            f"Redaction sweep: clean ({files} JSONL files scanned). This heuristic scan does not prove "
            "arbitrary metadata is non-sensitive.\n\n"
            f"{_rewritten_line(rewritten)}"
            f"{notice}\n\n"
            "Keep this envelope separate from any file that contains the salt.\n")


def _rewritten_line(rewritten: int) -> str:
    if not rewritten:
        return ""
    return (f"Re-sanitised: {rewritten} hand-edited record(s) rewritten by the store's read rules "
            "(values outside their field's grammar replaced, extra keys reduced to shapes).\n\n")


class _Syncer:
    """Flushes and closes finished staged journals in background threads, so the disk flush of one
    journal overlaps the work on the next; ``wait`` joins them and reports the first failure."""

    def __init__(self) -> None:
        self._threads: list[threading.Thread] = []
        self._errors: list[OSError] = []

    def later(self, fd: int) -> None:
        thread = threading.Thread(target=self._run, args=(fd,), name="share-fsync", daemon=True)
        thread.start()
        self._threads.append(thread)

    def _run(self, fd: int) -> None:
        try:
            os.fsync(fd)
        except OSError as exc:
            self._errors.append(exc)
        finally:
            os.close(fd)

    def wait(self) -> None:
        for thread in self._threads:
            thread.join()
        self._threads.clear()
        if self._errors:
            raise ReviewError(f"cannot write the staged envelope: {self._errors[0].strerror}")


def _no_checkpoint(_name: str) -> None:
    return None


@dataclass
class _Sweep:
    canon_store: Path
    options: ShareOptions
    checkpoint: Checkpoint = _no_checkpoint
    flagged: list[FlaggedLine] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    files_flagged: int = 0
    records: int = 0
    file_records: int = 0
    notes: int = 0
    rewritten: int = 0
    done: int = 0
    syncer: _Syncer = field(default_factory=_Syncer)


def _account(item: StoreFile, out: ProcessedChunk | SpanDone, sweep: _Sweep) -> bool:
    """Count a processed chunk's records and notes and record its flagged lines; True when flagged."""
    for line, detectors in out.flagged:
        sweep.flagged.append(FlaggedLine(sweep.canon_store / item.relpath, sweep.file_records + line,
                                         detectors))
    sweep.file_records += out.records
    sweep.records += out.records
    sweep.notes += out.notes
    sweep.rewritten += out.rewritten
    return bool(out.flagged)


def _chunk_done(sweep: _Sweep, length: int, progress: Progress | None, total: int) -> None:
    sweep.done += length
    if progress is not None:
        progress(sweep.done, max(total, sweep.done))
    sweep.checkpoint("chunk-written")


def _export_in_process(item: StoreFile, fd: int, size: int, out: int, sweep: _Sweep, drop_note: bool,
                       progress: Progress | None, total: int) -> bool:
    flagged = False
    for chunk in snapshot_chunks(fd, item.path, size, chunk_bytes=SHARE_READ_BYTES):
        done = process_chunk(bytes(chunk.data), path=item.path, relpath=item.relpath,
                             first_line=chunk.first_line,
                             tail=chunk.tail, annotation=item.is_annotations, drop_note=drop_note,
                             kind=journal_kind(item.relpath))
        flagged = _account(item, done, sweep) or flagged
        _write_all(out, done.body)
        _chunk_done(sweep, len(chunk.data), progress, total)
    return flagged


@dataclass
class _Helpers:
    pool: HelperPool
    parts: Path
    next_index: int = 0


def _export_with_helpers(item: StoreFile, fd: int, size: int, out: int, sweep: _Sweep, drop_note: bool,
                         helpers: _Helpers, progress: Progress | None, total: int) -> bool:
    st = os.fstat(fd)
    flagged = False
    line = 1

    def jobs() -> Iterator[SpanJob]:
        for offset, length, tail in spans(fd, item.path, size, window=SHARE_SPAN_BYTES,
                                          limit=MAX_RECORD_BYTES):
            index = helpers.next_index
            helpers.next_index += 1
            yield SpanJob(index=index, path=str(item.path), relpath=item.relpath, dev=st.st_dev,
                           ino=st.st_ino, offset=offset, length=length, tail=tail,
                           annotation=item.is_annotations, drop_note=drop_note,
                           part=part_path(helpers.parts, index), kind=journal_kind(item.relpath))

    def settle(done: SpanDone, job: SpanJob) -> None:
        nonlocal flagged, line
        if done.error is not None:  # re-run here to name the line as the in-process export does
            data = os.pread(fd, job.length, job.offset)
            if len(data) == job.length:
                process_chunk(data, path=item.path, relpath=item.relpath, first_line=line, tail=job.tail,
                              annotation=item.is_annotations, drop_note=drop_note, kind=job.kind)
            raise ReviewError(done.error)
        copy_part(job.part, out)
        line += done.lines
        flagged = _account(item, done, sweep) or flagged
        _chunk_done(sweep, job.length, progress, total)

    settle_in_order(helpers.pool, jobs(), settle)
    return flagged


def _export_file(item: StoreFile, fd: int, stage_store: Path, sweep: _Sweep, helpers: _Helpers | None,
                 progress: Progress | None, total: int) -> None:
    size = locked_size(fd, item.path)
    sweep.checkpoint("snapshot-taken")
    target = stage_store / item.relpath
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    drop_note = item.is_annotations and not sweep.options.include_annotation_notes
    out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        if helpers is None:
            flagged = _export_in_process(item, fd, size, out, sweep, drop_note, progress, total)
        else:
            flagged = _export_with_helpers(item, fd, size, out, sweep, drop_note, helpers, progress, total)
    except BaseException:
        os.close(out)
        raise
    sweep.syncer.later(out)
    sweep.files_flagged += flagged


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _inventory(store: Path, options: ShareOptions) -> tuple[list[str], int]:
    names, total = [], 0
    for item, fd in store_files(store, what="share", skip_probes=not options.include_probe_history):
        try:
            total += os.fstat(fd).st_size
        finally:
            os.close(fd)
        names.append(item.relpath)
    return names, total


def _write_file(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fill_files(store: Path, stage_store: Path, sweep: _Sweep, helpers: _Helpers | None,
                progress: Progress | None, total: int) -> None:
    for item, fd in store_files(store, what="share", skip_probes=not sweep.options.include_probe_history):
        try:
            sweep.file_records = 0
            _export_file(item, fd, stage_store, sweep, helpers, progress, total)
            sweep.files.append(item.relpath)
        finally:
            os.close(fd)


def _fill_stage(stage: Path, store: Path, canon_store: Path, options: ShareOptions, total: int,
                progress: Progress | None, checkpoint: Checkpoint) -> _Sweep:
    stage_store = store_dir(stage)
    workers = helper_count(options.workers, total)
    if workers:
        try:
            return _fill_with_helpers(stage, store, _Sweep(canon_store, options, checkpoint), total, progress,
                                      workers)
        except BrokenProcessPool:
            if options.workers is not None:
                raise ReviewError(HELPERS_BROKE) from None
            # Helpers could not run here (e.g. a script without a __main__ guard, which every
            # multiprocessing helper re-imports): start over in process; nothing was published.
            shutil.rmtree(stage_store, ignore_errors=True)
            shutil.rmtree(stage / "parts", ignore_errors=True)
    sweep = _Sweep(canon_store, options, checkpoint)
    stage_store.mkdir(mode=0o700)
    try:
        _fill_files(store, stage_store, sweep, None, progress, total)
    finally:
        sweep.syncer.wait()
    _fsync_tree(stage_store)
    return sweep


def _fill_with_helpers(stage: Path, store: Path, sweep: _Sweep, total: int, progress: Progress | None,
                       workers: int) -> _Sweep:
    stage_store = store_dir(stage)
    stage_store.mkdir(mode=0o700)
    parts = stage / "parts"
    parts.mkdir(mode=0o700)
    try:
        with HelperPool(workers) as pool:
            _fill_files(store, stage_store, sweep, _Helpers(pool, parts), progress, total)
    finally:
        sweep.syncer.wait()
    parts.rmdir()
    _fsync_tree(stage_store)
    return sweep


def _fsync_tree(stage_store: Path) -> None:
    for dirpath, _dirs, _files in os.walk(stage_store):
        _fsync_dir(Path(dirpath))


def export_share(root: RootLike = None, *, dest: str | os.PathLike[str],
                 options: ShareOptions = ShareOptions(), progress: Progress | None = None,
                 _checkpoint: Checkpoint = _no_checkpoint) -> ShareResult:
    """Export a checked share envelope of ``<root>/store`` to ``dest`` (SPEC 11).

    Every export, and every refused or failed one, appends a record to ``<root>/audit.jsonl``
    (docs/governance.md); a failed audit write never fails the export (``ShareResult.audit_written``).
    The rest is ``_export_share``'s contract, below.
    """
    base = Root.of(root).path
    flags = {"annotation_notes": "included" if options.include_annotation_notes else "excluded",
             "probe_history": "included" if options.include_probe_history else "excluded",
             "force": "yes" if options.force else "no"}
    try:
        result = _export_share(base, dest=dest, options=options, progress=progress, _checkpoint=_checkpoint)
    except BaseException as exc:
        refused = isinstance(exc, ShareRefused | ShareOutputError)
        reason = ("redaction-flagged" if isinstance(exc, ShareRefused) else
                  "unusable-output" if isinstance(exc, ShareOutputError) else
                  "review-error" if isinstance(exc, ReviewError) else "error")
        counts = {"files_flagged": exc.files_flagged} if isinstance(exc, ShareRefused) else {}
        audit.record(base, action="share", outcome="refused" if refused else "failed", reason=reason,
                     labels=flags, counts=counts, paths=[os.path.abspath(dest)])
        raise
    written = audit.record(base, action="share", labels=flags,
                           counts={"files": len(result.files), "records": result.records,
                                   "notes_included": result.notes_included},
                           paths=[result.dest])
    return replace(result, audit_written=written)


def _export_share(root: RootLike = None, *, dest: str | os.PathLike[str],
                  options: ShareOptions = ShareOptions(), progress: Progress | None = None,
                  _checkpoint: Checkpoint = _no_checkpoint) -> ShareResult:
    """Export a checked share envelope of ``<root>/store`` to ``dest`` (SPEC 11).

    Args:
        root: the capture root (default ``$MCPEVAL_HOME`` or ``~/.mcp-eval``).
        dest: the envelope directory (created; must be empty unless ``options.force``).
        options: probe history, annotation notes, force.
        progress: called with ``(bytes done, bytes total)`` after every chunk.
        _checkpoint: private, for tests only: called with the name of each step reached (``Checkpoint``).

    Returns:
        What was published.

    Raises:
        ShareRefused: the sweep flagged records (exit 1); nothing was published.
        ShareOutputError: the output is symlinked, overlaps the capture root, is not a directory, or
            is not empty without ``force`` (exit 2); nothing was written.
        ReviewError: a missing or symlinked store, symlinks or special files in the store, a store with
            no journals, invalid UTF-8 or JSON, a non-object record, an incomplete trailing record, or
            a failed publish; the previous envelope is unchanged and staging is removed.
        RecordTooLarge: a line over 4 MiB.
        GovernanceError: an interrupted erase could not be finished first (nothing was written).

    Large stores are normalised by helper processes started from a fork server.  Where helpers cannot
    run (a script calling this at import time without an ``if __name__ == "__main__":`` guard, which
    every ``multiprocessing`` helper re-imports), an automatic export (``workers=None``) starts over in
    process; an explicit ``workers=N`` fails with a ``ReviewError`` instead.  Nothing is published by
    the failed attempt either way.
    """
    base = Root.of(root).path
    recover(base)  # an interrupted erase is finished first: never share what it was removing
    store = store_dir(base)
    if not entry_exists(store):
        raise ReviewError("nothing to share: store does not exist")
    out = SHARE.resolve(dest, root=base, force=options.force)
    names, total = _inventory(store, options)  # refuses symlinks before anything is written
    if not names:
        raise ReviewError("the store contains no records to share")
    canon_store = Path(os.path.realpath(store))
    out.parent.mkdir(parents=True, exist_ok=True)
    stale = remove_stale_staging(out.parent, kind="share")
    staging = Staging(out.parent, kind="share", error=ReviewError)
    try:
        _checkpoint("staging-created")
        sweep = _fill_stage(staging.path, store, canon_store, options, total, progress, _checkpoint)
        if sweep.files_flagged:
            raise ShareRefused(tuple(sweep.flagged), sweep.files_flagged)
        notes = sweep.notes if options.include_annotation_notes else None
        _write_file(staging.path / "SHARE.md",
                    share_md(len(sweep.files), notes, sweep.rewritten).encode("utf-8"))
        _fsync_dir(staging.path)
        _checkpoint("before-publish")
        SHARE.check(out, force=options.force)
        replaced = publish(staging.path, out, what="the share envelope", error=ReviewError)
        _fsync_dir(out.parent)
        _checkpoint("after-publish")
        discard(replaced)
    except OSError as exc:  # a full disk, a file-size limit, an I/O error while staging
        raise ReviewError(f"cannot write the share envelope beside {out}: {exc.strerror or 'I/O error'}; "
                          "nothing was published (a previous envelope is untouched)") from None
    finally:
        if staging.path.exists():
            staging.remove()
        staging.release()
    return ShareResult(dest=out, files=tuple(sweep.files), records=sweep.records,
                       notes_included=sweep.notes if options.include_annotation_notes else 0,
                       bytes_read=sweep.done, stale_staging_removed=stale, rewritten=sweep.rewritten)

