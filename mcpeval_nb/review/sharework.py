"""One share chunk's work (normalise, sweep, drop flagged records), in process or in a helper process.

``process_chunk`` is the whole per-chunk pipeline of SPEC 11 step 5 for whole lines already read:
UTF-8 check, normalisation (orjson fast path, exact ``jsonfmt`` path on doubt), the doctor's detectors
over the exact normalised bytes, and the flagged records removed.  The in-process export calls it
directly; helper processes (``run_job``) ``pread`` the snapshot bytes themselves, after re-opening the
journal with ``O_NOFOLLOW`` and checking it is the file the parent locked (same device and inode), and
write the chunk's output as a part file in the owner-only staging directory, so only a small
``SpanDone`` crosses the pipe.  Helpers die with the export: ``PR_SET_PDEATHSIG`` ties them to their
parent and a thread watching a pidfd of the exporting process kills them when it goes.
"""

from __future__ import annotations

import ctypes
import gc
import os
import select
import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ReviewError
from ..jsonfmt import JSONFormatError
from ..limits import MAX_RECORD_BYTES
from .doctor import check_utf8, scan_chunk
from .normalize import NotAnObject, encode_value, normalize_chunk, normalize_record
from .resanitise import resanitise_values

__all__ = ["ProcessedChunk", "SpanDone", "SpanJob", "init_helper", "process_chunk", "run_job"]

_PR_SET_PDEATHSIG = 1
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_HEAP_KEEP_BYTES = 16 * 1024 * 1024
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_PART_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class ProcessedChunk:
    """A processed chunk: clean normalised records, their count (flagged ones included), the newlines
    read, flagged records as ``(1-based record number within the chunk, detector ids)``, notes seen,
    and the records the read rules rewrote (hand-edited ones: ``resanitise``)."""

    body: bytes
    records: int
    lines: int
    flagged: tuple[tuple[int, tuple[str, ...]], ...]
    notes: int
    rewritten: int = 0


@dataclass(frozen=True)
class SpanJob:
    """What a helper needs for one span of a snapshot (``journal.snapshot.spans``): where to read, what
    rules apply, where to write.

    Attributes:
        index: the chunk's position in the export (results are consumed in this order).
        path: the journal's path (opened with ``O_NOFOLLOW``; also the name used in messages).
        relpath: the journal relative to the store (messages).
        dev: ``st_dev`` of the descriptor the parent locked.
        ino: ``st_ino`` of that descriptor.
        offset: first byte of the chunk.
        length: bytes in the chunk (``offset + length`` never passes the snapshot size).
        tail: the chunk is the unterminated final line.
        annotation: annotation-file rules (note exempt, notes counted).
        drop_note: replace ``note`` by ``""``.
        part: the part file to create inside staging.
        kind: the file's read rules (``resanitise.journal_kind``).
    """

    index: int
    path: str
    relpath: str
    dev: int
    ino: int
    offset: int
    length: int
    tail: bool
    annotation: bool
    drop_note: bool
    part: str
    kind: str = ""


@dataclass(frozen=True)
class SpanDone:
    """A helper's answer for one span: its counts (``lines``: newlines read) and flagged records, or
    the refusal message (its line numbers are relative to the span: the parent re-runs a refused span
    in process to name the line exactly)."""

    index: int
    lines: int
    records: int
    flagged: tuple[tuple[int, tuple[str, ...]], ...]
    notes: int
    error: str | None = None
    rewritten: int = 0


def _normalize_slow(data: bytes, first_line: int, tail: bool, relpath: str,
                    drop_note: bool) -> tuple[bytes, list[dict[str, Any]], list[int]]:
    out: list[bytes] = []
    values: list[dict[str, Any]] = []
    lines: list[int] = []
    for index, line in enumerate(data.split(b"\n")):
        if not line.strip():
            continue
        where = f"{relpath} line {first_line + index}"
        try:
            record, value = normalize_record(line, drop_note=drop_note)
        except JSONFormatError:
            if tail:
                raise ReviewError(f"incomplete trailing record in {where}") from None
            raise ReviewError(f"invalid JSON record in {where}") from None
        except NotAnObject:
            raise ReviewError(f"store records must be JSON objects ({where})") from None
        if len(record) > MAX_RECORD_BYTES:
            raise ReviewError(f"normalized journal record exceeds 4 MiB ({where})")
        out.append(record)
        values.append(value)
        lines.append(first_line + index)
    return b"".join(out), values, lines


def process_chunk(data: bytes, *, path: Path, relpath: str, first_line: int, tail: bool,
                  annotation: bool, drop_note: bool, kind: str = "") -> ProcessedChunk:
    """Normalise and sweep one chunk of whole lines.

    Args:
        data: the chunk (whole lines; the last lacks its newline only when ``tail``).
        path: the journal, for the UTF-8 message.
        relpath: the journal relative to the store, for record messages.
        first_line: physical number of the chunk's first line.
        tail: ``data`` is the unterminated final line.
        annotation: annotation-file rules for the sweep.
        drop_note: replace ``note`` by ``""``.
        kind: the file's read rules (``resanitise.journal_kind``), re-applied to every record.

    Returns:
        The clean records and the chunk's counts.

    Raises:
        ReviewError: invalid UTF-8 or JSON, a non-object, an incomplete trailing record or an
            over-long normalised record, named by file and line.
    """
    check_utf8(data, path, first_line)
    fast = normalize_chunk(data, tail=tail, drop_note=drop_note, limit=MAX_RECORD_BYTES)
    if fast is not None:  # one record per line, no blank lines
        body, values = fast
        records = len(values)
        lines = 0 if tail else records
        physical: list[int] | None = None
    else:
        body, values, physical = _normalize_slow(data, first_line, tail, relpath, drop_note)
        records, lines = len(values), data.count(b"\n")
    # The sweep reads what the store holds (SPEC 11): a flagged record is refused, not silently fixed.
    hits = scan_chunk(body, 1, annotation=annotation)
    notes = sum(1 for _line, verdict in hits if verdict.has_note)
    flagged = tuple((line, verdict.detectors) for line, verdict in hits if verdict.detectors)
    changed = resanitise_values(values, kind)
    if flagged or changed:
        bad = {line for line, _ids in flagged}
        out = body.split(b"\n")[:-1]
        for index in changed:
            record = encode_value(values[index])
            if len(record) > MAX_RECORD_BYTES:
                line = first_line + index if physical is None else physical[index]
                raise ReviewError(f"normalized journal record exceeds 4 MiB ({relpath} line {line})")
            out[index] = record[:-1]
        body = b"".join(r + b"\n" for i, r in enumerate(out, 1) if i not in bad)
    return ProcessedChunk(body, records, lines, flagged, notes, len(changed))


def _watch(pidfd: int) -> None:
    select.select([pidfd], [], [])
    os.kill(os.getpid(), signal.SIGKILL)


def init_helper(export_pid: int) -> None:
    """Pool initializer: die with the parent (``PR_SET_PDEATHSIG``) and with the exporting process.

    Args:
        export_pid: the process running the export (the helper's parent may be a fork server).
    """
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    # Chunk-sized buffers would otherwise be mmap'd and unmapped (and their pages faulted in) every
    # chunk: keep them on the heap and keep freed heap memory for the next chunk.
    libc.mallopt(_M_MMAP_THRESHOLD, _HEAP_KEEP_BYTES)
    libc.mallopt(_M_TRIM_THRESHOLD, _HEAP_KEEP_BYTES * 2)
    # Parsed records hold no reference cycles; the cyclic collector would only walk every chunk's
    # thousands of fresh dicts again and again (about a third of the per-chunk time).
    gc.disable()
    try:
        pidfd = os.pidfd_open(export_pid)
    except ProcessLookupError:
        os._exit(1)
    threading.Thread(target=_watch, args=(pidfd,), name="share-parent-watch", daemon=True).start()


def _read(job: SpanJob) -> bytes:
    try:
        fd = os.open(job.path, _READ_FLAGS)
    except OSError:
        raise ReviewError(f"share refuses a journal that changed during the export: {job.path}") from None
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (job.dev, job.ino):
            raise ReviewError(f"share refuses a journal that changed during the export: {job.path}")
        data = os.pread(fd, job.length, job.offset)
    finally:
        os.close(fd)
    if len(data) != job.length or (not job.tail and not data.endswith(b"\n")):
        raise ReviewError(f"{job.path} changed while it was read")
    return data


def run_job(job: SpanJob) -> SpanDone:
    """Helper side: read, process and write one chunk as a part file (mode 0600).

    Args:
        job: the chunk.

    Returns:
        Its counts and flagged records, or the refusal message (never content).
    """
    try:
        data = _read(job)
        out = process_chunk(data, path=Path(job.path), relpath=job.relpath, first_line=1,
                            tail=job.tail, annotation=job.annotation, drop_note=job.drop_note,
                            kind=job.kind)
    except ReviewError as exc:
        return SpanDone(job.index, 0, 0, (), 0, str(exc))
    fd = os.open(job.part, _PART_FLAGS, 0o600)
    try:
        view = memoryview(out.body)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    return SpanDone(job.index, out.lines, out.records, out.flagged, out.notes, rewritten=out.rewritten)
