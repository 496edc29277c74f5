"""``mcpeval-nb conformance``: the official conformance suite's results and baseline as one CI report."""

from __future__ import annotations

import click

import mcpeval_nb

from . import options as opt

__all__ = ["COMMANDS", "conformance_cmd"]


@click.command("conformance",
               epilog=opt.example("mcpeval-nb conformance results/ --expected-failures baseline.yml "
                                  "--format junit > conformance.xml"))
@click.argument("results", type=click.Path(file_okay=False))
@click.option("--expected-failures", "baseline", default=None, type=click.Path(dir_okay=False),
              help="The suite's baseline of expected failures (YAML).")
@opt.output_format("text", "json", "junit", "sarif")
def conformance_cmd(results: str, baseline: str | None, fmt: str) -> int:
    """Judge the conformance suite's saved results (its -o directory) against its baseline.

    Exit 0 when nothing failed unexpectedly and no baseline entry is stale, 1 otherwise (the suite's
    rule), 2 for unreadable results or an invalid baseline.
    """
    scenarios = mcpeval_nb.read_conformance_results(results)
    expected = None if baseline is None else mcpeval_nb.load_conformance_baseline(baseline)
    judged = mcpeval_nb.judge_conformance(scenarios, expected)
    click.echo(mcpeval_nb.render(judged, fmt), nl=False)
    return int(judged.exit_code)


COMMANDS = (conformance_cmd,)
