"""``export-issues``: one Markdown file per finding, published atomically like the share envelope.

Each file is built from ``index.db`` and ``lifecycle.db`` rows only (labels, counts, scores, the template
id, the shaped arguments, lifecycle state and probe history), so no payload can be in it.  Files are
written into an owner-only staging directory beside the output and swapped in with one rename
(``mcpeval_nb.root.outputs``: the one output rule, ``ISSUES``): a refused or failed export leaves
the previous directory as it was.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..clock import format_ms
from ..journal.audit import audited
from ..root import Root, RootLike
from ..root.outputs import ISSUES
from .findings import list_findings
from .lifecycle import lifecycle
from .rows import Finding

__all__ = ["ExportResult", "export_issues", "issue_markdown"]


@dataclass(frozen=True)
class ExportResult:
    """Where the files went and how many were written."""

    dest: Path
    files: int


def issue_markdown(f: Finding, history: list[tuple[int, str, bool, int]]) -> str:
    """The Markdown of one finding (everything in it is a label, a number or a shape token)."""
    lines = [
        f"# {f.finding_id}: {f.server}/{f.tool or 'unlisted'} ({f.klass})",
        "",
        f"- severity: {f.severity} (score {f.score:.6f}, threshold {f.threshold:.6f})",
        f"- lifecycle: {f.state}, probe {f.probe_id or 'none'}, consecutive passes {f.consecutive_passes}",
        f"- failures: {f.failures} of {f.calls} calls ({f.rate:.2%}) in {f.sessions} sessions",
        f"- last seen: {f.last_seen or 'unknown'}",
        f"- error: code {f.err_code or 'null'}, template id `{f.err_template_id or 'none'}`, "
        f"codes {f.err_codes}",
        f"- cost {f.cost:.1f} (median window calls), blast {f.blast} (tools touched)",
        "",
        "## Shaped reproduction",
        "",
        "```json",
        f.repro or "{}",
        "```",
        "",
        f"Hint: {f.hint}.",
        "",
        "## Probe history",
        "",
    ]
    if history:
        lines += ["| when (UTC) | probe | result |", "| --- | --- | --- |"]
        lines += [f"| {format_ms(ts)} | {probe} | {'pass' if ok else 'fail'} |"
                  for _, probe, ok, ts in history]
    else:
        lines.append("No verify run yet.")
    return "\n".join(lines) + "\n"


def export_issues(
    root: RootLike, dest: Path | str, *, include_closed: bool = False, force: bool = False
) -> ExportResult:
    """Write ``<finding_id>.md`` for every promoted finding (closed ones only with ``include_closed``).

    Args:
        root: the capture root. dest: the output directory (replaced whole, atomically).
        include_closed: also export closed findings. force: replace a non-empty output directory.

    Returns:
        An ``ExportResult``.

    Raises:
        ShareOutputError: an unusable output (symlinked, inside the store, not empty without ``force``).
        FindingsError: no usable index or lifecycle, or staging or publishing failed.
    """
    base = Root.of(root).path
    with audited(base, "export-issues") as entry:
        entry.paths.append(dest)
        result = _export(base, dest, include_closed=include_closed, force=force)
        entry.counts["files"] = result.files
    return result


def _export(base: Path, dest: Path | str, *, include_closed: bool, force: bool) -> ExportResult:
    out = ISSUES.resolve(dest, root=base, force=force)
    found = [f for f in list_findings(base) if include_closed or f.state != "closed"]
    with lifecycle(base) as life:
        histories = {f.finding_id: life.history(f.finding_id) for f in found}

    def fill(stage: Path) -> None:
        for f in found:
            fd = os.open(stage / f"{f.finding_id}.md", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                         0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(issue_markdown(f, histories[f.finding_id]))
        os.chmod(stage, 0o755)

    ISSUES.build(out, fill=fill, force=force)
    return ExportResult(dest=out, files=len(found))
