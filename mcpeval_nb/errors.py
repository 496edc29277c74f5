"""The error tree of mcpeval-nb.

Every message names *where* something went wrong (a path, a line number, a case id, a flag) and *what*
rule was broken, never the payload text that broke it.  The CLI maps each class to an exit code
(SPEC 9.4): ``exit_code`` is carried by the class.

::

    MCPEvalError                      exit 3 (evaluation could not complete)
    ├── UsageError                    exit 2 (bad arguments; nothing evaluated)
    │   ├── GrammarError              a label, method, tool or identifier outside its grammar
    │   ├── ManifestError             manifest rejected by the schema or the semantic rules
    │   ├── DocumentError             an input document (report, diff base) is not acceptable
    │   ├── ProfileError              a measurement profile fails its rules (SPEC 7.2)
    │   ├── ProtocolMismatch          the server and --protocol name different eras (says which to use)
    │   └── MissingExtra              an optional engine is not installed (names the extra to install)
    ├── JournalError                  exit 3: the capture root or a journal could not be used
    │   ├── RecordTooLarge            a record over 4 MiB (including the newline)
    │   ├── InvalidRecord             a complete journal line that is not a valid record
    │   ├── LockTimeout               a journal lock not acquired before its deadline
    │   ├── SaltError                 the fingerprint salt is missing, unreadable or the wrong size
    │   └── TrendHistoryCorrupt       a line of the readiness trend history is not a valid point
    ├── TransportError                exit 3: an MCP peer could not be reached or broke a limit
    ├── ProbeError                    exit 3: a probe run could not complete
    ├── FindingsError                 exit 3: index.db or lifecycle.db could not be used (or is not ours)
    ├── GovernanceError               exit 3: retention or erasure could not complete
    │   └── EraseIncomplete           an erase stopped part-way; names the journals already done
    └── ReviewError                   exit 3: the redaction check or the share export failed
        ├── ShareRefused              exit 1: the redaction sweep flagged records; nothing published
        └── ShareOutputError          exit 2: the share output directory is unusable

    Cancelled (BaseException)         a control-flow signal inside a cancelled run, never an error:
                                      ``except Exception`` does not catch it

``describe(exc)`` is the one safe text for any exception: an ``MCPEvalError``'s own message (which by
construction names places and labels, never content), else ``unexpected <Type> (details withheld)``.
Panels and the CLI show nothing else.
"""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # typing's, without importing typing: the shim starts its server first
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "Cancelled",
    "DocumentError",
    "EraseIncomplete",
    "FindingsError",
    "GovernanceError",
    "GrammarError",
    "InvalidRecord",
    "JournalError",
    "LockTimeout",
    "MCPEvalError",
    "ManifestError",
    "MissingExtra",
    "ProbeError",
    "ProfileError",
    "ProtocolMismatch",
    "RecordTooLarge",
    "ReviewError",
    "SaltError",
    "ShareOutputError",
    "ShareRefused",
    "TransportError",
    "TrendHistoryCorrupt",
    "UsageError",
    "describe",
]


class MCPEvalError(Exception):
    """Base class of every error raised on purpose by mcpeval-nb.

    Attributes:
        exit_code: the process exit code the CLI uses for this error (SPEC 9.4).
    """

    exit_code: int = 3


class UsageError(MCPEvalError):
    """Bad arguments or input documents: nothing was evaluated (exit 2)."""

    exit_code = 2


class GrammarError(UsageError):
    """A server label, method, tool name or identifier is outside its grammar (SPEC 4.4)."""


class ManifestError(UsageError):
    """A probe manifest failed schema or semantic validation (SPEC 8.1)."""


class DocumentError(UsageError):
    """An input document (probe report, diff input) is not acceptable."""


class ProfileError(UsageError):
    """A measurement profile that fails validation (SPEC 7.2); the message never echoes values."""


class ProtocolMismatch(UsageError):
    """The server does not serve the protocol era ``--protocol`` asked for; the message names the era the
    server needs and the flag to use (``run with --protocol auto``), never server text.

    Attributes:
        required: what the server serves: ``2026-07-28`` or ``legacy``.
    """

    def __init__(self, message: str, *, required: str) -> None:
        super().__init__(message)
        self.required = required


class MissingExtra(UsageError):
    """An optional engine (DuckDB, Dask, OpenTelemetry) is not installed; the message names the extra.

    Attributes:
        extra: the extra to install (``pip install 'mcpeval-nb[<extra>]'``).
    """

    def __init__(self, what: str, extra: str) -> None:
        super().__init__(f"{what} needs the optional '{extra}' extra: pip install 'mcpeval-nb[{extra}]'")
        self.extra = extra


class JournalError(MCPEvalError):
    """The capture root or a journal file could not be used."""


class RecordTooLarge(JournalError):
    """A record whose encoded line (newline included) exceeds the 4 MiB bound."""

    def __init__(self, path: Path | str | None = None, line: int | None = None) -> None:
        where = ""
        if path is not None:
            where = f" ({path}" + (f" line {line}" if line is not None else "") + ")"
        super().__init__(f"journal record exceeds 4 MiB{where}")
        self.path = None if path is None else Path(path)
        self.line = line


class InvalidRecord(JournalError):
    """A complete journal line that does not parse as the expected record type."""

    def __init__(self, path: Path | str, line: int, reason: str = "invalid journal record") -> None:
        super().__init__(f"{reason} on line {line} of {path}")
        self.path = Path(path)
        self.line = line
        self.reason = reason


class LockTimeout(JournalError):
    """A journal lock was not acquired before its deadline."""

    def __init__(self, path: Path | str, mode: str, seconds: float) -> None:
        super().__init__(f"timed out after {seconds:g} s waiting for a {mode} lock on {path}")
        self.path = Path(path)


class SaltError(JournalError):
    """The fingerprint salt is unusable (wrong size, unreadable)."""


class TrendHistoryCorrupt(JournalError):
    """A complete line of ``store/probes/history.jsonl`` is not a valid trend point (or its profile is
    invalid); the message names the file and line, never the content."""

    def __init__(self, path: Path, line: int | None, detail: str | None = None) -> None:
        where = f" (line {line} of {path})" if line is not None else f" ({path})"
        super().__init__("trend history is corrupt" + (f": {detail}" if detail else "") + where)
        self.path = path
        self.line = line


class TransportError(MCPEvalError):
    """An MCP peer could not be reached, timed out, closed, or broke a transport limit.

    Attributes:
        reason: one of ``transport-timeout``, ``transport-closed``, ``transport-error``,
            ``evaluation-budget-exceeded``.
        detail: lines ``describe`` adds below the message: for a stdio server that closed the
            connection, its exit status and its last stderr lines (bounded, through the redaction
            check's text patterns; ``transport.stderr_tail``).  Shown to the operator, never stored.
    """

    def __init__(self, message: str, reason: str = "transport-error", *,
                 detail: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.reason = reason
        self.detail = detail


class ProbeError(MCPEvalError):
    """A probe run could not complete."""


class FindingsError(MCPEvalError):
    """The findings index (``index.db``) or the lifecycle database (``lifecycle.db``) could not be used:
    a foreign or corrupt file (never overwritten when it is the lifecycle), a lock timeout, or a finding
    that does not exist."""


class GovernanceError(MCPEvalError):
    """Retention or erasure could not complete (a lock, an I/O failure, an interrupted erase that
    cannot be finished); the message names journals, never records."""


class EraseIncomplete(GovernanceError):
    """An erase stopped part-way: every journal in ``done`` is fully erased, ``failed`` is as it was
    (or is finished by the next command), the rest were not touched.

    Attributes:
        done: store-relative paths of the journals already erased.
        failed: the journal being erased when it stopped.
    """

    def __init__(self, failed: str, reason: str, done: tuple[str, ...]) -> None:
        finished = ", ".join(done) if done else "none"
        super().__init__(f"erase stopped at {failed}: {reason}; journals already erased: {finished}; "
                         "run the same erase again to finish")
        self.failed = failed
        self.done = done


class ReviewError(MCPEvalError):
    """The redaction check or the share export refused or failed."""


class ShareRefused(ReviewError):
    """The redaction sweep flagged records: nothing was published (exit 1).

    Attributes:
        flagged: every flagged record (``review.FlaggedLine``: canonical store path and normalised
            record number).
        files_flagged: how many journals had a flagged record.
    """

    exit_code = 1

    def __init__(self, flagged: tuple[Any, ...], files_flagged: int) -> None:
        super().__init__(f"redaction sweep flagged {files_flagged} file(s); nothing was published")
        self.flagged = flagged
        self.files_flagged = files_flagged


class ShareOutputError(ReviewError):
    """The share output is unusable (symlinked, overlapping the store, not a directory, not empty)."""

    exit_code = 2


class Cancelled(BaseException):
    """Raised inside a run when its cancel event is set; caught by the runner, never escapes it.

    A ``BaseException`` so that ``except Exception`` in a probe kind or a battery check cannot swallow
    a cancellation.
    """


def describe(exc: BaseException) -> str:
    """The one text that may be shown for an exception.

    Args:
        exc: any exception.

    Returns:
        An ``MCPEvalError``'s message (paths, line numbers, labels; never payload text), else
        ``unexpected <Type> (details withheld)``: a foreign exception's message may quote anything.
    """
    if isinstance(exc, TransportError) and exc.detail:
        return "\n  ".join((str(exc), *exc.detail))
    if isinstance(exc, MCPEvalError):
        return str(exc) or type(exc).__name__
    return f"unexpected {type(exc).__name__} (details withheld)"
