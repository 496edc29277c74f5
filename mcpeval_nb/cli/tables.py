"""``mcpeval-nb summary`` and ``mcpeval-nb export-parquet``: the store's tables from a terminal."""

from __future__ import annotations

from typing import Any

import click

import mcpeval_nb

from . import options as opt

_ERRORS = opt.errors


@click.command("summary", epilog=opt.example("mcpeval-nb summary --top 5"))
@opt.root
@_ERRORS
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True,
              help="Rows per section.")
def summary_cmd(root: str | None, errors: str, top: int) -> int:
    """Per-tool latency percentiles, outcome rates and the most frequent error templates."""
    where = mcpeval_nb.resolve_root(root)
    if not where.exists():
        raise mcpeval_nb.UsageError(f"no capture root at {where}: nothing has been recorded there "
                                    "(check --root or MCPEVAL_HOME)")
    store = mcpeval_nb.open_store(root, errors=errors, progress=True)
    calls = store.calls
    servers = len(set(calls.column("server").to_pylist()))
    click.echo(f"calls: {calls.num_rows} across {servers} server(s); annotations: "
               f"{store.annotations.num_rows}; trend points: {store.trends.num_rows}")
    click.echo("slowest tools (ms; <1: under a millisecond):")
    for row in mcpeval_nb.slowest_tools(calls, n=top).to_pylist():
        ms = mcpeval_nb.format_ms
        click.echo(f"  {row['server']} {row['tool']} n={row['count']} p50={ms(row['p50'])} "
                   f"p95={ms(row['p95'])} p99={ms(row['p99'])} max={ms(row['max'])}")
    click.echo("outcomes per server:")
    for row in mcpeval_nb.outcome_rates(calls, by=("server",)).to_pylist():
        click.echo(f"  {row['server']} n={row['count']} ok={row['ok_rate']:.1%} "
                   f"error={row['error_rate']:.1%} (95% CI {row['error_low']:.1%}-{row['error_high']:.1%})")
    click.echo("top error templates:")
    for row in mcpeval_nb.error_templates(calls).slice(0, top).to_pylist():
        click.echo(f"  {row['template_id']} count={row['count']} sessions={row['sessions']} "
                   f"tools={','.join(row['tools']) or '-'}")
    _operations(calls, top)
    report = store.report.to_pylist()
    if report:
        click.echo(f"skipped {len(report)} bad line(s):")
        for row in report[:top]:
            click.echo(f"  {row['file']}:{row['line']}: {row['reason']}")
    return 0


def _operations(calls: Any, top: int) -> None:
    """The era mix and the operations over several requests (nothing for a store of legacy traffic)."""
    mix = mcpeval_nb.era_mix(calls, by=()).to_pylist()
    if not any(row["era"] == "modern" for row in mix):
        return
    click.echo("eras: " + ", ".join(f"{row['era']}{' ' + row['protocol'] if row['protocol'] else ''} "
                                    f"{row['calls']} ({row['share']:.1%})" for row in mix))
    rows = mcpeval_nb.operation_summary(calls).slice(0, top).to_pylist()
    if not rows:
        return
    ms = mcpeval_nb.format_ms
    click.echo("operations over several requests (latency: first request to final answer; server: less "
               "the client's wait):")
    for row in rows:
        wait = "-" if row["wait_share"] is None else f"{row['wait_share']:.0%}"
        click.echo(f"  {row['server']} {row['tool'] or row['method']} n={row['operations']} "
                   f"rounds p50={row['rounds_p50']:g} latency p50={ms(row['latency_p50'])} "
                   f"server p50={ms(row['server_p50'])} wait={wait} tasks={row['tasks']} "
                   f"abandoned={row['abandoned']} flagged={row['flagged']}")


@click.command("export-parquet", epilog=opt.example("mcpeval-nb export-parquet --dest build/parquet"))
@opt.root
@_ERRORS
@click.option("--dest", required=True, type=click.Path(file_okay=False),
              help="Dataset directory (hive partitions day=/server=).")
def export_parquet_cmd(root: str | None, errors: str, dest: str) -> int:
    """Write the calls as a hive-partitioned (day, server) Parquet dataset (only changed journals re-read)."""
    opt.finish_interrupted_erase(root)  # never export what an interrupted erase was removing
    store = mcpeval_nb.open_store(root, errors=errors, progress=True)
    export = store.to_parquet(dest)
    click.echo(f"wrote {export.files} Parquet file(s) ({export.rows} calls) under {export.dest}; "
               f"{export.rewrote} journal(s) read, {export.kept} unchanged")
    opt.report_skipped(export.skipped)
    return 0


COMMANDS = (summary_cmd, export_parquet_cmd)
