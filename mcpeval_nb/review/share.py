"""The share envelope (SPEC 11): checked, normalised snapshots of the store, published atomically.

``export_share`` follows SPEC 11 step by step.  Everything that can be refused without writing is
checked first (store, output, overlap, the store's entries); then each selected journal is snapshotted
under a shared lock and streamed in bounded chunks: every non-blank line is normalised (sorted keys,
compact, newline), the exact normalised bytes are swept with the doctor's detectors, and clean records
go to the staging directory.  Only after a clean sweep is ``SHARE.md`` written and the staging directory
swapped into place; any failure or a flagged sweep removes staging and leaves a previous envelope
byte-identical.  Memory is bounded by the record limit and the chunk size, not by the store.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ReviewError
from ..home import resolve_root, store_dir
from ..jsonfmt import JSONFormatError
from ..limits import MAX_RECORD_BYTES
from .detectors import LineVerdict
from .doctor import FlaggedLine, scan_chunk
from .normalize import NotAnObject, normalize_chunk, normalize_record
from .publish import (
    Staging,
    check_output,
    discard,
    pause_point,
    publish,
    remove_stale_staging,
    resolve_output,
)
from .scan import StoreFile, check_utf8, iter_chunks, snapshot, walk_store

__all__ = ["ShareOptions", "ShareRefused", "ShareResult", "export_share", "share_md"]

Progress = Callable[[int, int], None]
#: Bytes read per share chunk: parsed records take several times their text, so chunks stay small.
SHARE_CHUNK_BYTES = 1024 * 1024


@dataclass(frozen=True, kw_only=True)
class ShareOptions:
    """What to put in the envelope.

    Attributes:
        include_probe_history: also export ``store/probes/``.
        include_annotation_notes: keep annotation ``note`` prose (otherwise replaced by ``""``).
        force: replace a non-empty output (only after the new envelope is fully prepared).
    """

    include_probe_history: bool = False
    include_annotation_notes: bool = False
    force: bool = False


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
    """

    dest: Path
    files: tuple[str, ...]
    records: int
    notes_included: int
    bytes_read: int
    stale_staging_removed: int = 0


class ShareRefused(ReviewError):
    """The redaction sweep flagged records: nothing was published (exit 1).

    Attributes:
        flagged: every flagged record (canonical store path and normalised record number).
        files_flagged: how many journals had a flagged record.
    """

    exit_code = 1

    def __init__(self, flagged: tuple[FlaggedLine, ...], files_flagged: int) -> None:
        super().__init__(f"redaction sweep flagged {files_flagged} file(s); nothing was published")
        self.flagged = flagged
        self.files_flagged = files_flagged


def share_md(files: int, notes: int | None) -> str:
    """The exact ``SHARE.md`` text (SPEC 11 step 7).

    Args:
        files: JSONL files scanned.
        notes: annotation notes included, or None when notes were excluded.

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
            f"{notice}\n\n"
            "Keep this envelope separate from any file that contains the salt.\n")


@dataclass
class _Sweep:
    canon_store: Path
    options: ShareOptions
    flagged: list[FlaggedLine] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    files_flagged: int = 0
    records: int = 0
    file_records: int = 0
    notes: int = 0
    done: int = 0


def _normalize_slow(data: bytes, first_line: int, tail: bool, item: StoreFile, drop_note: bool) -> bytes:
    out: list[bytes] = []
    for index, line in enumerate(data.split(b"\n")):
        if not line.strip():
            continue
        where = f"{item.relpath} line {first_line + index}"
        try:
            record, _value = normalize_record(line, drop_note=drop_note)
        except JSONFormatError:
            if tail:
                raise ReviewError(f"incomplete trailing record in {where}") from None
            raise ReviewError(f"invalid JSON record in {where}") from None
        except NotAnObject:
            raise ReviewError(f"store records must be JSON objects ({where})") from None
        if len(record) > MAX_RECORD_BYTES:
            raise ReviewError(f"normalized journal record exceeds 4 MiB ({where})")
        out.append(record)
    return b"".join(out)


def _normalize(data: bytes, first_line: int, tail: bool, item: StoreFile, drop_note: bool) -> bytes:
    """The chunk's normalised records, each with its newline (fast path first, exact path on doubt)."""
    fast = normalize_chunk(data, tail=tail, drop_note=drop_note, limit=MAX_RECORD_BYTES)
    if fast is not None:
        return fast[0]
    return _normalize_slow(data, first_line, tail, item, drop_note)


def _sweep_records(body: bytes, first_record: int, item: StoreFile, sweep: _Sweep) -> tuple[bytes, bool]:
    hits: list[tuple[int, LineVerdict]] = scan_chunk(body, first_record, annotation=item.is_annotations)
    sweep.notes += sum(1 for _line, verdict in hits if verdict.has_note)
    bad = set()
    for line, verdict in hits:
        if verdict.detectors:
            bad.add(line)
            sweep.flagged.append(FlaggedLine(sweep.canon_store / item.relpath, line, verdict.detectors))
    if bad:
        records = body.split(b"\n")[:-1]
        body = b"".join(r + b"\n" for i, r in enumerate(records, first_record) if i not in bad)
    return body, bool(bad)


def _export_file(item: StoreFile, fd: int, stage_store: Path, sweep: _Sweep,
                 progress: Progress | None, total: int) -> None:
    size = snapshot(fd, item.path)
    pause_point("snapshot-taken")
    target = stage_store / item.relpath
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    drop_note = item.is_annotations and not sweep.options.include_annotation_notes
    flagged = False
    out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        for chunk in iter_chunks(fd, item.path, size, chunk_bytes=SHARE_CHUNK_BYTES):
            check_utf8(chunk.data, item.path, chunk.first_line)
            normalized = _normalize(chunk.data, chunk.first_line, chunk.tail, item, drop_note)
            count = normalized.count(b"\n")
            body, bad = _sweep_records(normalized, sweep.file_records + 1, item, sweep)
            sweep.file_records += count
            sweep.records += count
            flagged = flagged or bad
            _write_all(out, body)
            sweep.done += len(chunk.data)
            if progress is not None:
                progress(sweep.done, max(total, sweep.done))
            pause_point("chunk-written")
        os.fsync(out)
    finally:
        os.close(out)
    sweep.files_flagged += flagged


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _inventory(store: Path, options: ShareOptions) -> tuple[list[str], int]:
    names, total = [], 0
    for item, fd in walk_store(store, what="share", skip_probes=not options.include_probe_history):
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


def _fill_stage(stage: Path, store: Path, canon_store: Path, options: ShareOptions, total: int,
                progress: Progress | None) -> _Sweep:
    sweep = _Sweep(canon_store, options)
    stage_store = stage / "store"
    stage_store.mkdir(mode=0o700)
    for item, fd in walk_store(store, what="share", skip_probes=not options.include_probe_history):
        try:
            sweep.file_records = 0
            _export_file(item, fd, stage_store, sweep, progress, total)
            sweep.files.append(item.relpath)
        finally:
            os.close(fd)
    for dirpath, _dirs, _files in os.walk(stage_store):
        _fsync_dir(Path(dirpath))
    return sweep


def export_share(root: str | os.PathLike[str] | None = None, *, dest: str | os.PathLike[str],
                 options: ShareOptions = ShareOptions(), progress: Progress | None = None) -> ShareResult:
    """Export a checked share envelope of ``<root>/store`` to ``dest`` (SPEC 11).

    Args:
        root: the capture root (default ``$MCPEVAL_HOME`` or ``~/.mcp-eval``).
        dest: the envelope directory (created; must be empty unless ``options.force``).
        options: probe history, annotation notes, force.
        progress: called with ``(bytes done, bytes total)`` after every chunk.

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
    """
    base = resolve_root(root)
    store = store_dir(base)
    if not os.path.lexists(store):
        raise ReviewError("nothing to share: store does not exist")
    out = resolve_output(dest, root=base, force=options.force)
    names, total = _inventory(store, options)  # refuses symlinks before anything is written
    if not names:
        raise ReviewError("the store contains no records to share")
    canon_store = Path(os.path.realpath(store))
    out.parent.mkdir(parents=True, exist_ok=True)
    stale = remove_stale_staging(out.parent)
    staging = Staging(out.parent)
    try:
        pause_point("staging-created")
        sweep = _fill_stage(staging.path, store, canon_store, options, total, progress)
        if sweep.files_flagged:
            raise ShareRefused(tuple(sweep.flagged), sweep.files_flagged)
        notes = sweep.notes if options.include_annotation_notes else None
        _write_file(staging.path / "SHARE.md", share_md(len(sweep.files), notes).encode("utf-8"))
        _fsync_dir(staging.path)
        pause_point("before-publish")
        check_output(out, force=options.force)
        replaced = publish(staging.path, out)
        _fsync_dir(out.parent)
        pause_point("after-publish")
        discard(replaced)
    finally:
        if staging.path.exists():
            staging.remove()
        staging.release()
    return ShareResult(dest=out, files=tuple(sweep.files), records=sweep.records,
                       notes_included=sweep.notes if options.include_annotation_notes else 0,
                       bytes_read=sweep.done, stale_staging_removed=stale)

