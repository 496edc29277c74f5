"""What an index run did: ``IndexResult`` (a build or refresh that finished) and ``Rebuild`` (why an
incremental refresh gave way to a full build)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...tables.load import SkippedLine

__all__ = ["IndexResult", "Rebuild"]


@dataclass(frozen=True)
class IndexResult:
    """What ``build_index`` did.

    Attributes:
        path: the index file. calls / failures / annotations: totals now indexed.
        replayed_events: records dropped as replays of an indexed event (total).
        full: a full build ran; reason: why (``requested``, ``missing``, ``a journal was rewritten`` ...),
            empty for an incremental refresh. added: call rows added by this run. skipped: bad lines
            skipped under ``errors="report"`` (the default) by this run; skipped_lines: which (file,
            line, reason), in the order met.
    """

    path: Path
    calls: int
    failures: int
    annotations: int
    replayed_events: int
    full: bool
    reason: str
    added: int
    skipped: int = 0
    skipped_lines: tuple[SkippedLine, ...] = ()

    def line(self) -> str:
        """SPEC 12.1's output line."""
        return f"indexed {self.calls} calls, {self.failures} failures, {self.annotations} annotations"


@dataclass(frozen=True)
class Rebuild:
    """An incremental refresh that could not prove its work (nothing was changed): a full build is due.

    Attributes:
        reason: why, as ``index`` prints it (``a journal was removed``, ``a journal was rewritten``,
            ``conflicting records``, ``an appended call goes back in sequence`` ...).
    """

    reason: str
