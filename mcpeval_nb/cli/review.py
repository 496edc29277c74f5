"""``mcpeval-nb doctor`` and ``mcpeval-nb share``: the redaction check and the share envelope (SPEC 10, 11).

Output names locations (``<path>:<line>``), counts and paths, never matched text.  Exit codes: 0 clean,
1 flagged (doctor findings, share refusal), 2 unusable output, 3 the check or export could not complete.
"""

from __future__ import annotations

import click

import mcpeval_nb

from . import options as opt

__all__ = ["COMMANDS", "doctor_cmd", "share_cmd"]

_PROGRESS_MIN_BYTES = 64 * 1024 * 1024


def _bar(label: str) -> mcpeval_nb.Progress:
    """The one progress bar on stderr, for scans over 64 MiB."""
    return mcpeval_nb.byte_progress(label, notebook=False, min_bytes=_PROGRESS_MIN_BYTES)


@click.command("doctor", epilog=opt.example("mcpeval-nb doctor --root ~/.mcp-eval"))
@click.option("--check-redaction", is_flag=True, help="Run the redaction check (it always runs).")
@opt.root
def doctor_cmd(check_redaction: bool, root: str | None) -> int:
    """Scan the store for lines that look like payload; print their locations."""
    del check_redaction  # the check always runs (SPEC 10)
    report = mcpeval_nb.check_redaction(root, progress=_bar("doctor"))
    for line in report.lines():
        click.echo(line)
    return 0 if report.clean else 1


@click.command("share", epilog=opt.example("mcpeval-nb share --dir build/envelope"))
@click.option("--dir", "dest", required=True, type=click.Path(), help="Envelope directory to write.")
@click.option("--include-probe-history", is_flag=True, help="Also export store/probes/.")
@click.option("--include-annotation-notes", is_flag=True, help="Keep annotation note prose.")
@click.option("--force", is_flag=True, help="Replace a non-empty envelope directory.")
@opt.root
def share_cmd(dest: str, include_probe_history: bool, include_annotation_notes: bool, force: bool,
              root: str | None) -> int:
    """Export a checked, normalised envelope of the store, published atomically."""
    opt.finish_interrupted_erase(root)
    options = mcpeval_nb.ShareOptions(include_probe_history=include_probe_history,
                                      include_annotation_notes=include_annotation_notes, force=force)
    if include_annotation_notes:
        click.echo("warning: annotation notes are included; review them before sharing", err=True)
    try:
        result = mcpeval_nb.export_share(root, dest=dest, options=options, progress=_bar("share"))
    except mcpeval_nb.ShareRefused as refused:
        for flag in refused.flagged:
            click.echo(str(flag), err=True)
        raise
    click.echo(f"wrote share envelope to {result.dest} ({len(result.files)} JSONL files, "
               f"{result.records} records)")
    if result.rewritten:
        click.echo(f"re-sanitised {result.rewritten} hand-edited record(s) with the store's read rules "
                   "(counted in SHARE.md)", err=True)
    if result.notes_included:
        click.echo(f"{result.notes_included} annotation note(s) included; review before sharing", err=True)
    if not result.audit_written:
        click.echo("audit: 1 record could not be written")
    return 0


COMMANDS = (doctor_cmd, share_cmd)
