"""The redaction check (SPEC 10): flag lines of the store that look like they carry payload.

``check_redaction`` walks every ``*.jsonl`` file under ``<root>/store`` (probe history included), takes
each file's size under a shared lock and streams the bytes below it in bounded chunks: memory depends on
the 4 MiB record bound, never on the store's size.  The fast filter of ``detectors`` picks the lines the
exact rule must look at; annotation files get the exact rule on every line (their ``note`` is exempt and
counted).  An unterminated final line is checked too.  Symlinks, special or unreadable entries, invalid
UTF-8 and over-long lines stop the check with an error naming the path and line: such a store never
passes.  The report holds paths, line numbers, detector ids and counts, never matched text.

The review's reading of the store is defined here once for doctor and share: ``store_files`` (the
symlink-proof walk of ``journal.walk`` raising ``ReviewError``), ``snapshot_chunks`` (the one snapshot
reader, ``journal.snapshot.iter_chunks``, with the tail chunk and a shrinking file refused) and
``check_utf8``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ReviewError
from ..htmltext import lines_html
from ..journal.snapshot import Chunk, iter_chunks, locked_size
from ..journal.walk import StoreFile, walk_store
from ..limits import DOCTOR_READ_BYTES
from ..root import Root, RootLike, entry_exists
from ..root.layout import SALT, salt_path, store_dir
from .detectors import LineVerdict, candidate_lines, has_note, line_detectors
from .dupkeys import DUPLICATE_KEY, duplicate_key_lines
from .resanitise import journal_kind

__all__ = ["FlaggedLine", "RedactionReport", "check_redaction", "check_utf8", "scan_chunk", "snapshot_chunks",
           "store_files"]

#: ``progress(done_bytes, total_bytes)``, called after every chunk.
Progress = Callable[[int, int], None]


def store_files(store: Path, *, what: str, skip_probes: bool = False) -> Iterator[tuple[StoreFile, int]]:
    """The store walk of ``journal.walk`` with review errors (``ReviewError`` naming ``what``).

    Returns:
        Every journal under ``store`` with an open descriptor the caller closes.

    Raises:
        ReviewError: a missing or symlinked store, a symlink, special file or unreadable entry.
    """
    return walk_store(store, what=what, skip_probes=skip_probes, error=ReviewError)


def _shrunk(path: Path) -> ReviewError:
    return ReviewError(f"{path} shrank while it was read")


def snapshot_chunks(fd: int, path: Path, size: int, *, chunk_bytes: int) -> Iterator[Chunk]:
    """The review's reading of a snapshot (``journal.snapshot.iter_chunks``): chunks of whole, bounded
    lines, then an unterminated final line alone as a ``tail`` chunk.

    Args:
        fd: the open journal.
        path: its path, for messages.
        size: the snapshot size (``locked_size``).
        chunk_bytes: bytes per read (at most the line bound, so no chunk hides a line before a bad one).

    Returns:
        An iterator of chunks whose ``data`` is ``bytes``.

    Raises:
        RecordTooLarge: a line (newline included) over 4 MiB, named by file and line.
        ReviewError: the file shrank below the snapshot while it was read.
    """
    return iter_chunks(fd, path, size, chunk_bytes=chunk_bytes, tail=True, shrunk=_shrunk)


def check_utf8(data: bytes, path: Path, first_line: int, what: str = "store snapshot") -> None:
    """Raise naming the line when ``data`` is not UTF-8 (``store snapshot is not UTF-8``).

    Args:
        data: whole lines.
        path: the journal, for the message.
        first_line: the number of the first line in ``data``.
        what: the message's subject.

    Raises:
        ReviewError: invalid UTF-8, named by path and line.
    """
    if data.isascii():
        return
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        raise ReviewError(f"{what} is not UTF-8: {path} line {line}") from None


@dataclass(frozen=True)
class FlaggedLine:
    """One flagged line: where it is and which detectors fired (never what matched).

    Attributes:
        path: the journal (``<root>/store/<relative path>`` for the doctor, the canonical store path for
            share).
        line: 1-based line number (share: the normalised record number).
        detectors: detector ids from ``DETECTORS``.
    """

    path: Path
    line: int
    detectors: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class RedactionReport:
    """The facts of one redaction check.

    Attributes:
        root: the capture root.
        files: the journals scanned, in scan order.
        flagged: every flagged line, in scan order.
        notes_requiring_review: annotation lines whose ``note`` is non-empty.
        bytes_scanned: bytes read from the snapshots.
        salt: the salt path that must never be shared.
    """

    root: Path
    files: tuple[Path, ...]
    flagged: tuple[FlaggedLine, ...]
    notes_requiring_review: int
    bytes_scanned: int
    salt: Path = field(default=Path(SALT))

    @property
    def files_scanned(self) -> int:
        """How many journals were scanned."""
        return len(self.files)

    @property
    def clean(self) -> bool:
        """True when no line was flagged."""
        return not self.flagged

    def lines(self) -> list[str]:
        """The text report of SPEC 10, one string per output line."""
        out = [f"scanned {self.files_scanned} files"]
        out.extend(str(flag) for flag in self.flagged)
        if self.notes_requiring_review:
            out.append(f"{self.notes_requiring_review} annotation notes contain agent prose; "
                       "review before sharing")
        out.append(f"do not share: {self.salt} (fingerprint salt)")
        return out

    def _repr_html_(self) -> str:
        """How a notebook cell shows it (the same lines as the CLI prints)."""
        return lines_html("redaction check", self.lines())

@dataclass
class _Tally:
    flagged: list[FlaggedLine] = field(default_factory=list)
    notes: int = 0


def scan_chunk(data: bytes, first_line: int, *, annotation: bool) -> list[tuple[int, LineVerdict]]:
    """Apply the detectors to a chunk of whole lines.

    Args:
        data: whole UTF-8 lines (the last may lack its newline).
        first_line: the number of the chunk's first line.
        annotation: annotation-file rule (every line checked exactly; notes counted).

    Returns:
        ``(line number, verdict)`` for every line that was flagged or carries a note.
    """
    hits: list[tuple[int, LineVerdict]] = []
    if annotation:
        suspects = {start for start, _end in candidate_lines(data)}
        start = 0
        for index, line in enumerate(data.split(b"\n")):
            if start in suspects or b"\\" in line:
                verdict = line_detectors(line, annotation=True)
            else:  # nothing here can be flagged (see detectors); only the note needs looking at
                verdict = LineVerdict((), has_note(line))
            start += len(line) + 1
            if verdict.detectors or verdict.has_note:
                hits.append((first_line + index, verdict))
        return hits
    line_no, counted = first_line, 0
    for start, end in candidate_lines(data):
        line_no += data.count(b"\n", counted, start)
        counted = start
        verdict = line_detectors(data[start:end], annotation=False)
        if verdict.detectors:
            hits.append((line_no, verdict))
    return hits


def _scan_file(item: StoreFile, fd: int, tally: _Tally, done: int, total: int,
               progress: Progress | None) -> int:
    size = locked_size(fd, item.path)
    for chunk in snapshot_chunks(fd, item.path, size, chunk_bytes=DOCTOR_READ_BYTES):
        data = bytes(chunk.data)
        check_utf8(data, item.path, chunk.first_line)
        found: dict[int, tuple[str, ...]] = {}
        for line, verdict in scan_chunk(data, chunk.first_line, annotation=item.is_annotations):
            tally.notes += verdict.has_note
            if verdict.detectors:
                found[line] = verdict.detectors
        for index in duplicate_key_lines(data, calls=journal_kind(item.relpath) == "calls"):
            line = chunk.first_line + index
            found[line] = (*found.get(line, ()), DUPLICATE_KEY)
        tally.flagged.extend(FlaggedLine(item.path, line, found[line]) for line in sorted(found))
        done += len(data)
        if progress is not None:
            progress(done, max(total, done))
    return size


def _total_bytes(store: Path) -> int:
    total = 0
    for _item, fd in store_files(store, what="doctor"):
        try:
            total += os.fstat(fd).st_size
        finally:
            os.close(fd)
    return total


def check_redaction(root: RootLike = None, *,
                    progress: Progress | None = None) -> RedactionReport:
    """Run the redaction check over ``<root>/store`` (SPEC 10; recursive, probe history included).

    Args:
        root: the capture root (default ``$MCPEVAL_HOME`` or ``~/.mcp-eval``).
        progress: called with ``(bytes done, bytes total)`` after every chunk.

    Returns:
        The report: files scanned, flagged lines (path, line, detector ids), the notes count and the
        salt path.  A missing store is reported as zero files scanned; nothing is created.

    Raises:
        ReviewError: a symlink, special file or unreadable entry in the store, or invalid UTF-8 (path
            and line named); the check cannot pass.
        RecordTooLarge: a line over 4 MiB (path and line named).
        LockTimeout: a writer held a journal past the lock deadline.
    """
    base = Root.of(root).path
    store = store_dir(base)
    files: list[Path] = []
    tally = _Tally()
    done = 0
    if entry_exists(store):  # an unreadable root is an error, never a clean empty store
        total = _total_bytes(store) if progress is not None else 0
        for item, fd in store_files(store, what="doctor"):
            try:
                done += _scan_file(item, fd, tally, done, total, progress)
            finally:
                os.close(fd)
            files.append(item.path)
    return RedactionReport(root=base, files=tuple(files), flagged=tuple(tally.flagged),
                           notes_requiring_review=tally.notes, bytes_scanned=done, salt=salt_path(base))
