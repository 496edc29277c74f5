"""The error tree of mcpeval-nb.

Every message names *where* something went wrong (a path, a line number, a case id, a flag) and *what*
rule was broken, never the payload text that broke it.  The CLI maps each class to an exit code
(SPEC 9.4): ``exit_code`` is carried by the class.

::

    MCPEvalError                      exit 3 (evaluation could not complete)
    ├── UsageError                    exit 2 (bad arguments; nothing evaluated)
    │   ├── GrammarError              a label, method, tool or identifier outside its grammar
    │   ├── ManifestError             manifest rejected by the schema or the semantic rules
    │   └── DocumentError             an input document (report, diff base) is not acceptable
    ├── JournalError                  the capture root or a journal could not be used
    │   ├── RecordTooLarge            a record over 4 MiB (including the newline)
    │   ├── InvalidRecord             a complete journal line that is not a valid record
    │   ├── LockTimeout               a journal lock not acquired before its deadline
    │   └── SaltError                 the fingerprint salt is missing, unreadable or the wrong size
    ├── TransportError                an MCP peer could not be reached or broke a limit
    ├── ProbeError                    a probe run could not complete
    └── ReviewError                   the redaction check or the share export refused or failed
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "DocumentError",
    "GrammarError",
    "InvalidRecord",
    "JournalError",
    "LockTimeout",
    "MCPEvalError",
    "ManifestError",
    "ProbeError",
    "RecordTooLarge",
    "ReviewError",
    "SaltError",
    "TransportError",
    "UsageError",
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


class TransportError(MCPEvalError):
    """An MCP peer could not be reached, timed out, closed, or broke a transport limit.

    Attributes:
        reason: one of ``transport-timeout``, ``transport-closed``, ``transport-error``,
            ``evaluation-budget-exceeded``.
    """

    def __init__(self, message: str, reason: str = "transport-error") -> None:
        super().__init__(message)
        self.reason = reason


class ProbeError(MCPEvalError):
    """A probe run could not complete."""


class ReviewError(MCPEvalError):
    """The redaction check or the share export refused or failed."""
