"""``mcpeval-nb catalog`` (report, ``pin``, ``check``) and ``mcpeval-nb usage`` (docs/catalog.md)."""

from __future__ import annotations

import click

import mcpeval_nb

from . import options as opt

__all__ = ["COMMANDS"]

_SERVER_HELP = "Only this server label."


@click.group("catalog", invoke_without_command=True,
             epilog=opt.example("mcpeval-nb catalog --format md > catalogs.md",
                                "mcpeval-nb catalog pin --server docs",
                                "mcpeval-nb catalog check --fail-on any --format sarif > catalog.sarif"))
@click.option("--server", default=None, help=_SERVER_HELP)
@opt.output_format("text", "json", "md")  # literal: the tables load pyarrow (tests/test_render.py checks)
@opt.root
@click.pass_context
def catalog_cmd(ctx: click.Context, server: str | None, fmt: str, root: str | None) -> int:
    """The current tool catalog per server (names, flags, skeleton sizes, last change), then drift and
    dead tools; `pin` approves catalogs, `check` is the CI gate against them.

    Built from the catalog records the shims write: labels, digests and counts, never a description.
    """
    if ctx.invoked_subcommand is not None:
        return 0
    report = mcpeval_nb.catalog_report(root, server=server)
    click.echo(report.render(fmt), nl=False)
    return 0


@catalog_cmd.command("pin", epilog=opt.example("mcpeval-nb catalog pin --server docs"))
@click.option("--server", default=None, help="Pin only this server (default: every recorded server).")
@opt.root
def pin_cmd(server: str | None, root: str | None) -> int:
    """Approve the latest complete catalog of each server: write <root>/catalog-pins.json (owner-only,
    audited; never shared)."""
    result = mcpeval_nb.pin_catalogs(root, server=server)
    for line in result.lines():
        click.echo(line)
    return 0


@catalog_cmd.command("check", epilog=opt.example("mcpeval-nb catalog check --fail-on drift --format junit "
                                                 "> catalog.xml"))
@click.option("--server", default=None, help=_SERVER_HELP)
@click.option("--fail-on", type=click.Choice(["drift", "flags", "any"]), default="any", show_default=True,
              help="What fails the check: a change since the pin (or no pin), a new signal flag, or either.")
@opt.output_format("text", "json", "junit", "sarif")
@opt.root
def check_cmd(server: str | None, fail_on: str, fmt: str, root: str | None) -> int:
    """Judge every recorded catalog against its pin: exit 1 on an unapproved change or a new flag."""
    check = mcpeval_nb.check_catalogs(root, server=server, fail_on=fail_on)
    click.echo(check.render(fmt), nl=False)
    return check.exit_code


@click.command("usage", epilog=opt.example("mcpeval-nb usage --server docs --since 2026-08-01"))
@click.option("--server", default=None, help=_SERVER_HELP)
@click.option("--since", default=None, metavar="DAY", help="Only listings and calls from this UTC day on.")
@click.option("--until", default=None, metavar="DAY", help="Only listings and calls up to this UTC day.")
@opt.output_format("text", "json", "md")
@opt.root
def usage_cmd(server: str | None, since: str | None, until: str | None, fmt: str, root: str | None) -> int:
    """Listed versus called per tool (dead, rare and used tools, with their token cost), and the tools
    called together (clusters)."""
    report = mcpeval_nb.usage_report(root, server=server, since=since, until=until)
    click.echo(report.render(fmt), nl=False)
    return 0


COMMANDS = (catalog_cmd, usage_cmd)
