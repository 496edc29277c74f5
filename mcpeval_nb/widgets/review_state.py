"""The review panel's state: the redaction sweep, share options, the review checklist and the export.

The export is allowed only when the last sweep was clean and every checklist item is ticked; a new
sweep, or a change of share options, clears the confirmation so the user confirms what will be shared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpeval_nb import RedactionReport, ShareOptions, ShareResult

__all__ = ["CHECKLIST", "ReviewState"]

#: The review checklist: (key, label).  Every item must be ticked before the export is enabled.
CHECKLIST: tuple[tuple[str, str], ...] = (
    ("scope", "I know what goes in: call and annotation journals, plus probe history if included"),
    ("notes", "I understand annotation notes are excluded unless I include them, and reviewed them if I do"),
    ("salt", "The envelope will not travel with the capture root's .salt file"),
    ("heuristic", "I understand the sweep is heuristic and does not prove metadata is non-sensitive"),
)


@dataclass
class ReviewState:
    """Everything the review panel shows.

    Attributes:
        root: the capture root (None: ``$MCPEVAL_HOME``).
        sweep: the last redaction report, or None. sweeping / exporting: work in progress.
        done / total: bytes processed / to process by the current work.
        include_probe_history / include_annotation_notes / force: the share options.
        dest: the envelope directory.
        checks: the checklist keys ticked.
        confirmed: the user confirmed the review.
        result: the last published envelope, or None. share_md: its SHARE.md text.
        status: one short line for the user (labels, counts and paths only).
        exports: the last share records of the audit log (newest last; counts, labels, paths).
    """

    root: Path | None = None
    sweep: RedactionReport | None = field(default=None, repr=False)
    sweeping: bool = False
    exporting: bool = False
    done: int = 0
    total: int = 0
    include_probe_history: bool = False
    include_annotation_notes: bool = False
    force: bool = False
    dest: str = ""
    checks: set[str] = field(default_factory=set)
    confirmed: bool = False
    result: ShareResult | None = None
    share_md: str = ""
    status: str = "run the redaction check first"
    exports: list[dict[str, Any]] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """A sweep ran over at least one journal and flagged nothing."""
        return self.sweep is not None and self.sweep.clean and self.sweep.files_scanned > 0

    @property
    def flagged(self) -> list[str]:
        """Flagged locations as ``store/<relative path>:<line> [detectors]`` (never matched text)."""
        if self.sweep is None:
            return []
        out = []
        for flag in self.sweep.flagged:
            try:
                where = flag.path.relative_to(self.sweep.root)
            except ValueError:
                where = flag.path
            out.append(f"{where}:{flag.line} [{', '.join(flag.detectors)}]")
        return out

    @property
    def notes(self) -> int:
        """Annotation notes the user should review (0 before a sweep)."""
        return 0 if self.sweep is None else self.sweep.notes_requiring_review

    @property
    def checklist_complete(self) -> bool:
        """Every checklist item is ticked."""
        return all(key in self.checks for key, _ in CHECKLIST)

    @property
    def can_export(self) -> bool:
        """Clean sweep, full checklist, confirmation, a destination, and no work in progress."""
        return (self.clean and self.checklist_complete and self.confirmed and bool(self.dest.strip())
                and not (self.sweeping or self.exporting))

    def options(self) -> ShareOptions:
        """The share options chosen."""
        return ShareOptions(include_probe_history=self.include_probe_history,
                            include_annotation_notes=self.include_annotation_notes, force=self.force)

    def set_option(self, name: str, value: bool) -> None:
        """Change a share option; the confirmation must be given again."""
        setattr(self, name, bool(value))
        self.confirmed = False

    def start_sweep(self) -> None:
        """A new sweep begins: forget the last one and the confirmation."""
        self.sweep, self.sweeping, self.confirmed, self.done, self.total = None, True, False, 0, 0
        self.status = "checking the store..."

    def finish_sweep(self, report: RedactionReport) -> None:
        """Keep the report and say what it found."""
        self.sweep, self.sweeping = report, False
        if report.files_scanned == 0:
            self.status = "nothing to share: the store has no journals yet"
        elif report.clean:
            self.status = f"clean: {report.files_scanned} file(s) scanned, nothing flagged"
        else:
            self.status = (f"{len(report.flagged)} flagged line(s) in {report.files_scanned} file(s): "
                           "export is disabled")

    def start_export(self) -> None:
        """An export begins."""
        self.exporting, self.done, self.total, self.result = True, 0, 0, None
        self.status = "exporting..."

    def finish_export(self, result: ShareResult, share_md: str) -> None:
        """Keep the published envelope and its SHARE.md."""
        self.exporting, self.result, self.share_md = False, result, share_md
        self.confirmed = False
        self.status = f"envelope published: {len(result.files)} file(s), {result.records} record(s)"

    def set_exports(self, entries: list[dict[str, Any]], *, last: int = 5) -> None:
        """Keep the last ``last`` share records of the audit log (``read_audit``)."""
        self.exports = [e for e in entries if e.get("action") == "share"][-last:]

    def fail(self, message: str) -> None:
        """End the current work with a content-free message."""
        self.sweeping = self.exporting = False
        self.status = message
