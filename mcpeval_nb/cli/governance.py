"""``retention``, ``erase``, ``audit`` and ``config``: data governance for the capture root.

Outputs are counts, labels, tokens and paths, never records.  A failed audit write is one warning line
on stderr (printed by the library) and a line in the command's output; it never changes the exit code.
"""

from __future__ import annotations

import click

import mcpeval_nb

from . import options as opt

__all__ = ["COMMANDS", "audit_cmd", "config_cmd", "erase_cmd", "retention_cmd"]


@click.command("retention", epilog=opt.example("mcpeval-nb retention --days 30 --dry-run"))
@click.option("--days", type=int, default=None,
              help="Remove journals older than this many days (default config.json retention_days).")
@click.option("--dry-run", is_flag=True, help="Print what would be removed; delete nothing.")
@click.option("--include-probe-history", is_flag=True, help="Also drop older trend points.")
@opt.root
def retention_cmd(days: int | None, dry_run: bool, include_probe_history: bool, root: str | None) -> int:
    """Remove call and annotation journals older than N days (UTC, by the day in the file name)."""
    opt.finish_interrupted_erase(root)
    if days is None:
        days = mcpeval_nb.Root.of(root).config.retention_days
    if days is None:
        click.echo("no retention configured (--days or config.json retention_days): nothing removed")
        return 0
    result = mcpeval_nb.apply_retention(root, days=days, dry_run=dry_run,
                                        include_probe_history=include_probe_history)
    for line in result.lines():
        click.echo(line)
    return 0


@click.command("erase", epilog=opt.example("mcpeval-nb erase --session my-session --dry-run",
                                           "mcpeval-nb erase --server demo --before 2026-08-01"))
@click.option("--session", default=None, help="Raw session value or stored session:<hex> token.")
@click.option("--server", default=None, help="A server label (instead of --session).")
@click.option("--before", default=None, metavar="DAY", help="Only records of days before DAY (YYYY-MM-DD).")
@click.option("--dry-run", is_flag=True, help="Print what would be removed; change nothing.")
@opt.root
def erase_cmd(session: str | None, server: str | None, before: str | None, dry_run: bool,
              root: str | None) -> int:
    """Remove every call and annotation record of one session or one server from every journal."""
    opt.finish_interrupted_erase(root)
    result = mcpeval_nb.erase(root, session=session, server=server, before=before, dry_run=dry_run)
    for line in result.lines():
        click.echo(line)
    return 0


@click.command("audit", epilog=opt.example("mcpeval-nb audit --last 20"))
@click.option("--last", type=click.IntRange(min=0), default=None, help="Only the newest N records.")
@opt.output_format("text", "json")
@opt.root
def audit_cmd(last: int | None, fmt: str, root: str | None) -> int:
    """Print the audit log: exports, erasures, retention passes and verifies, oldest first."""
    log = mcpeval_nb.AuditLog(mcpeval_nb.read_audit(root)).last(last)
    if not log.entries and fmt == "text":
        click.echo("no audit records yet", err=True)
    click.echo(log.render(fmt), nl=False)
    return 0


@click.command("config", epilog=opt.example("mcpeval-nb config --format json"))
@opt.output_format("text", "json")
@opt.root
def config_cmd(fmt: str, root: str | None) -> int:
    """Print the configuration commands resolve to (root, salt, journals, retention, threshold, limits)."""
    click.echo(mcpeval_nb.resolve_config(root).render(fmt), nl=False)
    return 0


COMMANDS = (retention_cmd, erase_cmd, audit_cmd, config_cmd)
