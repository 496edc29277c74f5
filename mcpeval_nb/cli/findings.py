"""``index``, ``promote``, ``findings``, ``verify``, ``generate`` and ``export-issues`` (SPEC 12, 8.5).

Exit codes (SPEC 9.4): 0 success (and a green verify), 1 a red verify, 2 a usage error (nothing
evaluated), 3 the index, the lifecycle or the server could not be used.
"""

from __future__ import annotations

from pathlib import Path

import click

import mcpeval_nb

from . import options as opt

__all__ = ["COMMANDS"]

_SINCE = click.option(
    "--since", default=None, help="Only from this day or time (YYYY-MM-DD or RFC 3339; an extension)."
)
_UNTIL = click.option("--until", default=None, help="Only before this day or time (an extension).")


@click.command("index", epilog=opt.example("mcpeval-nb index", "mcpeval-nb index --full"))
@opt.root
@click.option("--full", is_flag=True, help="Rebuild from scratch instead of reading appended bytes only.")
@opt.errors
def index_cmd(root: str | None, full: bool, errors: str) -> int:
    """Build or refresh <root>/index.db from the store (incremental when it can be)."""
    opt.finish_interrupted_erase(root)
    progress = mcpeval_nb.byte_progress("indexing", notebook=False)
    result = mcpeval_nb.build_index(root, full=full, errors=errors, progress=progress)
    if result.full and result.reason not in ("missing", "requested"):
        click.echo(f"index.db {result.reason}: rebuilt", err=True)
    click.echo(result.line())
    opt.report_skipped(result.skipped_lines)
    return 0


@click.command("promote", epilog=opt.example("mcpeval-nb promote", "mcpeval-nb promote --threshold 0"))
@opt.root
@click.option(
    "--threshold",
    type=float,
    default=None,
    help="Promotion threshold (default config.json promotion_threshold, else the seed).",
)
@_SINCE
@_UNTIL
def promote_cmd(root: str | None, threshold: float | None, since: str | None, until: str | None) -> int:
    """Score every recurring failure and promote the ones that matter (refreshes the index first)."""
    opt.finish_interrupted_erase(root)
    result = mcpeval_nb.promote(root, threshold=threshold, since=since, until=until)
    click.echo(result.line())
    opt.report_skipped(result.skipped_lines)
    return 0


@click.command(
    "findings", epilog=opt.example("mcpeval-nb findings", "mcpeval-nb findings --format json --state open")
)
@opt.root
@click.option(
    "--format", "fmt", type=click.Choice(["agent", "md", "json"]), default="agent", show_default=True
)
@click.option(
    "--state",
    type=click.Choice(["open", "fix-claimed", "verifying", "closed"]),
    default=None,
    help="Only findings in this lifecycle state.",
)
@_SINCE
@_UNTIL
def findings_cmd(root: str | None, fmt: str, state: str | None, since: str | None, until: str | None) -> int:
    """The promoted findings, best first (SPEC 12.5)."""
    view = mcpeval_nb.findings_view(root, state=state, since=since, until=until)
    if not view.findings:
        click.echo(view.EMPTY_NOTICE, err=True)
    click.echo(mcpeval_nb.render(view, fmt), nl=False)
    return 0


@click.command(
    "verify",
    epilog=opt.example(
        "mcpeval-nb verify --finding finding-b082100ba107f8ab --case "
        "repro --manifest repro.json -- python -m my_server"
    ),
)
@click.option("--finding", "finding_id", required=True, help="The promoted finding to verify.")
@click.option("--case", "case_id", required=True, help="The manifest case that reproduces it.")
@click.option("--manifest", required=True, type=click.Path(dir_okay=False), help="The manifest file.")
@click.option(
    "--allow-mutation", is_flag=True, help="Authorise a mutating case that names a declared sandbox."
)
@opt.allow_remote_http
@opt.protocol
@opt.root
@opt.url
@opt.command_argument
def verify_cmd(
    finding_id: str,
    case_id: str,
    manifest: str,
    allow_mutation: bool,
    allow_remote_http: bool,
    protocol: str,
    root: str | None,
    url: str | None,
    command: tuple[str, ...],
) -> int:
    """Run one case against the fixed server and move the finding's lifecycle (three passes close it)."""
    target = opt.target_of(url, command, allow_remote_http=allow_remote_http)
    result = mcpeval_nb.verify_finding(
        root,
        finding_id,
        case=case_id,
        manifest=manifest,
        target=target,
        allow_mutation=allow_mutation,
        allow_remote_http=allow_remote_http,
        protocol=protocol,
    )
    first, *rest = result.lines()
    click.echo(first)
    for line in rest:
        click.echo(line, err=result.errored)
    return result.exit_code


@click.command(
    "generate",
    epilog=opt.example(
        "mcpeval-nb generate --finding finding-b082100ba107f8ab --output repro.json --confirm-read-only"
    ),
)
@click.option("--finding", "finding_id", required=True, help="The finding to reproduce.")
@click.option("--output", required=True, type=click.Path(dir_okay=False), help="Manifest file to write.")
@opt.confirm_read_only
@click.option("--force", is_flag=True, help="Replace an existing output file.")
@click.option(
    "--expect",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="An Expectation JSON file (at most 64 KiB): makes an instruction-fidelity case.",
)
@opt.root
def generate_cmd(
    finding_id: str, output: str, confirm_read_only: bool, force: bool, expect: str | None, root: str | None
) -> int:
    """Write a read-only manifest that reproduces a finding from its recorded argument shape."""
    data = None
    if expect is not None:
        with Path(expect).open("rb") as handle:
            data = handle.read(64 * 1024 + 1)  # one byte past the bound: generate refuses it
    generated = mcpeval_nb.generate_manifest(
        root, finding_id, confirm_read_only=confirm_read_only, output=output, force=force, expect=data
    )
    for line in generated.stdout_lines(output):
        click.echo(line)
    return 0


@click.command("export-issues", epilog=opt.example("mcpeval-nb export-issues --dir build/issues"))
@click.option(
    "--dir", "dest", required=True, type=click.Path(), help="Output directory (replaced atomically)."
)
@click.option("--include-closed", is_flag=True, help="Also export closed findings.")
@click.option("--force", is_flag=True, help="Replace a non-empty output directory.")
@opt.root
def export_issues_cmd(dest: str, include_closed: bool, force: bool, root: str | None) -> int:
    """One Markdown file per promoted finding, for an issue tracker."""
    result = mcpeval_nb.export_issues(root, dest, include_closed=include_closed, force=force)
    click.echo(f"exported {result.files} finding(s) to {result.dest}")
    return 0


COMMANDS = (index_cmd, promote_cmd, findings_cmd, verify_cmd, generate_cmd, export_issues_cmd)
