"""Readiness commands: ``score``, ``init``, ``report``, ``diff``, ``compare``, ``trends``, ``schema report``
and ``schema diff``.

Each command parses its options, makes one library call and formats the result (SPEC 7.3, 8.6, 9.4, 15).
Exit codes: 0 success, 1 a verdict or gate, 2 usage, 3 could not complete.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

import mcpeval_nb

from . import options as opt

__all__ = ["COMMANDS", "SCHEMA_COMMANDS"]


def _progress(line: str) -> None:
    click.echo(line, err=True)


def _read_doc(path: str) -> tuple[bytes, str]:
    if path == "-":
        return sys.stdin.buffer.read(), "stdin"
    try:
        return Path(path).read_bytes(), path
    except OSError as exc:
        raise mcpeval_nb.DocumentError(f"cannot read {path}: {exc.strerror}") from None


def _load_report(path: str) -> Any:
    data, source = _read_doc(path)
    return mcpeval_nb.parse_report(data, source=source)


@click.command("score", epilog=opt.example("mcpeval-nb score --server time -- python -m mcp_server_time"))
@click.option("--server", required=True, help="Server label for the report and the trend history.")
@opt.output_format("text", "json", "markdown", "junit")
@click.option("--brief", is_flag=True, help="Only the readiness and surface lines.")
@click.option("--no-history", is_flag=True, help="Do not append a trend point.")
@opt.root
@opt.confirm_read_only
@opt.allow_open_world
@opt.skip_tool
@opt.protocol
@opt.allow_remote_http
@opt.url
@opt.command_argument
def score_cmd(server: str, fmt: str, brief: bool, no_history: bool, root: str | None, confirm_read_only: bool,
              allow_open_world: bool, skip_tools: tuple[str, ...], protocol: str, allow_remote_http: bool,
              url: str | None, command: tuple[str, ...]) -> int:
    """Run the standard readiness battery alone: `score --server L -- CMD...` or `--url URL`.

    Exit 0 when scored, 2 on a usage error, 3 when the battery could not complete.
    """
    options = mcpeval_nb.BatteryOptions(confirm_read_only=confirm_read_only, skip_tools=skip_tools,
                                        allow_open_world=allow_open_world, progress=_progress,
                                        history=not no_history, root=root, protocol=protocol)
    target = opt.target_of(url, command, allow_remote_http=allow_remote_http)
    report = mcpeval_nb.score_server(target, server=server, options=options)
    click.echo(mcpeval_nb.render(report, fmt, brief=brief, corpus=mcpeval_nb.load_corpus(root)), nl=False)
    return int(report.exit_code)


@click.command("init",
               epilog=opt.example(
                   "mcpeval-nb init --output mcp-eval.manifest.json -- python -m mcp_server_time"))
@click.option("--output", default="mcp-eval.manifest.json", show_default=True,
              type=click.Path(dir_okay=False), help="Where to write the manifest.")
@click.option("--force", is_flag=True, help="Overwrite an existing manifest.")
@click.option("--dry-run", is_flag=True, help="Print the per-tool decisions only.")
@click.option("--tool", "tools", multiple=True, help="Scaffold cases only for these tools.")
@click.option("--server", default=None, help="The server's label (as probe takes it), named in the summary.")
@opt.confirm_read_only
@opt.allow_open_world
@opt.protocol
@opt.allow_remote_http
@opt.url
@opt.command_argument
def init_cmd(output: str, force: bool, dry_run: bool, tools: tuple[str, ...], server: str | None,
             confirm_read_only: bool, allow_open_world: bool, protocol: str, allow_remote_http: bool,
             url: str | None, command: tuple[str, ...]) -> int:
    """Scaffold a read-only probe manifest from a live server."""
    if not dry_run and not force and Path(output).exists():
        raise mcpeval_nb.UsageError(f"{output} exists; pass --force to overwrite it")
    target = opt.target_of(url, command, allow_remote_http=allow_remote_http)
    scaffold = mcpeval_nb.scaffold_manifest(target, tools=tools or None, confirm_read_only=confirm_read_only,
                                            dry_run=dry_run, allow_open_world=allow_open_world,
                                            server=server, protocol=protocol)
    click.echo(scaffold.decision_lines(), nl=False)
    if dry_run:
        return 0
    path = mcpeval_nb.write_manifest(scaffold, output, force=force)
    click.echo(scaffold.summary_line(path), nl=False)
    return 0


@click.command("report", epilog=opt.example("mcpeval-nb report report.json --format markdown"))
@click.argument("doc")
@opt.output_format("text", "markdown", "sarif", "json", "junit")
@click.option("--manifest", default=None, type=click.Path(dir_okay=False),
              help="The manifest the cases came from (locates SARIF results).")
@click.option("--brief", is_flag=True, help="Text and markdown without hints or the per-area breakdown.")
@opt.price_per_mtok
@opt.root
def report_cmd(doc: str, fmt: str, manifest: str | None, brief: bool, price_per_mtok: float | None,
               root: str | None) -> int:
    """Re-render a saved v1 or v2 probe report (DOC or - for stdin).

    Exit 0 when the document passed, 1 when a case failed, 2 for an invalid document, 3 when it
    records a case or battery that could not complete.
    """
    report = _load_report(doc)
    click.echo(mcpeval_nb.render(report, fmt, brief=brief, manifest=manifest, price_per_mtok=price_per_mtok,
                                 corpus=mcpeval_nb.load_corpus(root)), nl=False)
    return int(report.exit_code)


@click.command("diff", epilog=opt.example("mcpeval-nb diff before.json after.json --fail-on-regression"))
@click.argument("base")
@click.argument("current")
@opt.output_format("text", "json", "markdown", "junit")
@click.option("--fail-on-regression", is_flag=True, help="Exit 1 when a case regressed or readiness dropped.")
@click.option("--fail-on-change", is_flag=True, help="Exit 1 when anything changed.")
def diff_cmd(base: str, current: str, fmt: str, fail_on_regression: bool, fail_on_change: bool) -> int:
    """Compare two probe reports of the same server (mcpeval.probe-diff/v2)."""
    diff = mcpeval_nb.diff_reports(_load_report(base), _load_report(current))
    click.echo(mcpeval_nb.render(diff, fmt, fail_on_change=fail_on_change), nl=False)
    if (fail_on_regression and diff.regressed) or (fail_on_change and diff.changed):
        return 1
    return 0


@click.command("compare",
               epilog=opt.example(
                   "mcpeval-nb compare --endpoint a=http://127.0.0.1:3001/mcp --endpoint b=http://127.0.0.1:3002/mcp"))
@click.option("--endpoint", "endpoints", multiple=True, help="LABEL=URL of a Streamable HTTP target.")
@click.option("--eras", is_flag=True,
              help="Probe one target as legacy, auto and 2026-07-28: the protocol era matrix.")
@opt.output_format("text", "markdown", "json", "junit")
@click.option("--manifest", default=None, type=click.Path(dir_okay=False),
              help="Also run this manifest's cases against every target.")
@click.option("--gate-only", is_flag=True, help="Run the manifest only, not the readiness battery.")
@opt.allow_mutation
@opt.confirm_read_only
@opt.allow_open_world
@opt.skip_tool
@opt.protocol
@opt.allow_remote_http
@opt.command_argument
def compare_cmd(endpoints: tuple[str, ...], eras: bool, fmt: str, manifest: str | None, gate_only: bool,
                allow_mutation: bool, confirm_read_only: bool, allow_open_world: bool,
                skip_tools: tuple[str, ...], protocol: str, allow_remote_http: bool,
                command: tuple[str, ...]) -> int:
    """Score two or more targets side by side (`--endpoint L=URL`..., and `-- CMD` as column `stdio`).

    With ``--manifest`` every target runs its cases too (``--gate-only``: the cases alone).  With
    ``--eras`` one target is scored as legacy, auto and 2026-07-28 (the protocol era matrix).  Never
    gates: exit 0, or 3 when a target could not be scored or a case could not complete.
    """
    targets: list[tuple[str, Any]] = []
    for i, spec in enumerate(endpoints, start=1):
        label, sep, url = spec.partition("=")
        if not sep or not url:
            raise mcpeval_nb.UsageError(f"--endpoint #{i} must be LABEL=URL")
        targets.append((label, mcpeval_nb.make_target(url, allow_remote_http=allow_remote_http)))
    if command:
        targets.append(("stdio", mcpeval_nb.make_target(list(command))))
    options = mcpeval_nb.BatteryOptions(confirm_read_only=confirm_read_only, skip_tools=skip_tools,
                                        allow_open_world=allow_open_world, progress=_progress,
                                        protocol=protocol)
    if eras:
        if len(targets) != 1 or manifest is not None:
            raise mcpeval_nb.UsageError("--eras takes exactly one target (--endpoint L=URL or -- CMD) and no "
                                        "--manifest")
        matrix = mcpeval_nb.era_matrix(targets[0][1], server=targets[0][0], options=options)
        click.echo(mcpeval_nb.render(matrix, fmt), nl=False)
        return int(matrix.exit_code)
    if fmt == "junit":
        raise mcpeval_nb.UsageError("--format junit needs --eras")
    comparison = mcpeval_nb.compare_servers(targets, options=options, manifest=manifest, gate_only=gate_only,
                                            allow_mutation=allow_mutation)
    click.echo(mcpeval_nb.render(comparison, fmt), nl=False)
    return int(comparison.exit_code)


@click.command("guidance",
               epilog=opt.example("mcpeval-nb guidance --server time -- python -m mcp_server_time"))
@click.option("--server", required=True, help="Server label for the output.")
@opt.output_format("text", "markdown", "json", "junit")
@opt.protocol
@opt.allow_remote_http
@opt.url
@opt.command_argument
def guidance_cmd(server: str, fmt: str, protocol: str, allow_remote_http: bool, url: str | None,
                 command: tuple[str, ...]) -> int:
    """Discovery against behaviour: instructions, capabilities and catalog, as content-free findings.

    Exit 0 without findings, 1 with, 2 on a usage error, 3 when the server could not be reached.
    """
    target = opt.target_of(url, command, allow_remote_http=allow_remote_http)
    found = mcpeval_nb.guidance(target, server=server, protocol=protocol)
    click.echo(mcpeval_nb.render(found, fmt), nl=False)
    return int(found.exit_code)


@click.command("trends", epilog=opt.example("mcpeval-nb trends --last 5"))
@click.option("--last", type=click.IntRange(min=0), default=10, show_default=True,
              help="Newest points to show per server.")
@opt.root
def trends_cmd(last: int, root: str | None) -> int:
    """Show readiness trend history per server, oldest first, with deltas."""
    click.echo(mcpeval_nb.trends_text(root=root, last=last), nl=False)
    return 0


@click.command("report", epilog=opt.example("mcpeval-nb schema report > probe-report.schema.json"))
def schema_report_cmd() -> int:
    """Print the mcpeval.probe-report/v2 JSON Schema."""
    click.echo(mcpeval_nb.report_schema_text(), nl=False)
    return 0


@click.command("diff", epilog=opt.example("mcpeval-nb schema diff > probe-diff.schema.json"))
def schema_diff_cmd() -> int:
    """Print the mcpeval.probe-diff/v2 JSON Schema."""
    click.echo(mcpeval_nb.diff_schema_text(), nl=False)
    return 0


SCHEMA_COMMANDS: tuple[Any, ...] = (schema_report_cmd, schema_diff_cmd)
COMMANDS = (score_cmd, init_cmd, report_cmd, diff_cmd, compare_cmd, guidance_cmd, trends_cmd)
