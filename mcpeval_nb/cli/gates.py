"""``mcpeval-nb gate`` and ``schema budgets``: budgets judged on captured traffic (docs/ci.md)."""

from __future__ import annotations

from typing import Any

import click

import mcpeval_nb

from . import options as opt

__all__ = ["COMMANDS", "SCHEMA_COMMANDS"]


@click.command("gate", epilog=opt.example("mcpeval-nb gate --budgets budgets.json --since 2026-08-01",
                                          "mcpeval-nb gate --budgets budgets.json --baseline envelope/ "
                                          "--format junit > gate.xml"))
@click.option("--budgets", "budgets_path", required=True, type=click.Path(dir_okay=False),
              help="Budgets file (schema: mcpeval-nb schema budgets).")
@click.option("--since", default=None, metavar="DAY", help="Judge only calls from this UTC day (YYYY-MM-DD).")
@click.option("--baseline", default=None, type=click.Path(file_okay=False),
              help="Share envelope or Parquet export whose error templates are known.")
@opt.output_format("text", "markdown", "json", "junit")
@opt.root
def gate_cmd(budgets_path: str, since: str | None, baseline: str | None, fmt: str, root: str | None) -> int:
    """Judge the real captured traffic against latency, error-rate and template budgets.

    Exit 0 when no check failed (warnings and not-judged checks pass), 1 when one failed, 2 for a bad
    budgets file, --since or --baseline, 3 when the store could not be read.
    """
    report = mcpeval_nb.gate(root, budgets_path, since=since, baseline=baseline)
    click.echo(mcpeval_nb.render(report, fmt), nl=False)
    opt.report_skipped(report.skipped_lines)
    return int(report.exit_code)


@click.command("budgets", epilog=opt.example("mcpeval-nb schema budgets > budgets.schema.json"))
def schema_budgets_cmd() -> int:
    """Print the budgets-file JSON Schema that `gate --budgets` checks."""
    click.echo(mcpeval_nb.budgets_schema_text(), nl=False)
    return 0


SCHEMA_COMMANDS: tuple[Any, ...] = (schema_budgets_cmd,)
COMMANDS = (gate_cmd,)
