"""``mcpeval-nb sizes``, ``capture-phases``, ``phases`` and ``schema calls|capture|result-sizes``
(docs/sizes.md): safe calls from other tools' manifests, on the bounded client and the mutation gate."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

import mcpeval_nb

from . import options as opt

__all__ = ["COMMANDS", "SCHEMA_COMMANDS", "capture_phases_cmd", "phases_cmd", "sizes_cmd"]

F = TypeVar("F", bound=Callable[..., Any])


def _call_progress(index: int, total: int, row: mcpeval_nb.CallSize) -> None:
    verdict = row.outcome if row.reason is None else f"{row.outcome}:{row.reason}"
    click.echo(f"sizes [{index}/{total}] {row.tool} {verdict}", err=True)


def _phase_progress(index: int, total: int, name: str, snapshot: dict[str, Any]) -> None:
    click.echo(f"capture [{index}/{total}] {name} tools={snapshot['tool_count']}", err=True)


def _calling(f: F) -> F:
    """The options of a command that makes listed calls: the mutation flag, the target, the journal."""
    for decorate in (opt.command_argument, opt.url, opt.root,
                     click.option("--no-journal", is_flag=True, help="Do not journal the calls as synthetic "
                                  "records."), opt.allow_remote_http, opt.allow_mutation, opt.protocol):
        f = decorate(f)
    return f


def _run_of(server: str, calling: dict[str, Any], **extra: Any) -> tuple[Any, Any]:
    """The options and target from ``_calling``'s parameters."""
    remote = calling["allow_remote_http"]
    options = mcpeval_nb.SizesOptions(server=server, allow_mutation=calling["allow_mutation"],
                                      allow_remote_http=remote, root=calling["root"],
                                      journal=not calling["no_journal"], protocol=calling["protocol"],
                                      **extra)
    return options, opt.target_of(calling["url"], calling["command"], allow_remote_http=remote)


@click.command(
    "sizes",
    epilog=opt.example(
        "mcpeval-nb sizes --call-manifest safe.yaml --server time -- python -m mcp_server_time"
    ),
)
@click.option(
    "--call-manifest",
    "call_manifest",
    required=True,
    type=click.Path(dir_okay=False),
    help="The calls to make, each once, in order (YAML or JSON, mcp-xray's calls shape).",
)
@opt.server("Server label for the report, the journal and the sizes history.")
@opt.output_format("text", "markdown", "json")
@click.option("--no-history", is_flag=True, help="Do not append the run to store/probes/sizes.jsonl.")
@_calling
def sizes_cmd(call_manifest: str, server: str, fmt: str, no_history: bool, **calling: Any) -> int:
    """Measure what each listed call returns: characters, bytes, tokens, content items, latency.

    Informational: exit 0 when the server was reached (an erroring call is a row), 2 on a usage error
    (nothing was called), 3 when the server could not be reached.
    """
    options, target = _run_of(server, calling, history=not no_history)
    sizes = mcpeval_nb.probe_result_sizes(target, call_manifest=call_manifest, options=options,
                                          progress=_call_progress)
    if sizes.unreached is not None:
        click.echo(f"sizes: the server could not be reached: {sizes.unreached}", err=True)
    click.echo(mcpeval_nb.render(sizes, fmt), nl=False)
    return sizes.exit_code


@click.command(
    "capture-phases",
    epilog=opt.example(
        "mcpeval-nb capture-phases --capture capture.yaml --server demo --out-dir dumps/phases "
        "--allow-mutation -- python -m my_server"
    ),
)
@click.option(
    "--capture",
    "capture",
    required=True,
    type=click.Path(dir_okay=False),
    help="The phases and their advance calls (YAML or JSON, mcp-xray's phases shape).",
)
@opt.server("Server label for the capture index and the journal.")
@click.option(
    "--out-dir",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False),
    help="Output directory: absent, empty, or an earlier capture (replaced atomically).",
)
@_calling
def capture_phases_cmd(capture: str, server: str, out_dir: str, **calling: Any) -> int:
    """Snapshot each phase of a phase-swapped server (content-free) into OUT-DIR."""
    options, target = _run_of(server, calling)
    result = mcpeval_nb.capture_phases(
        target, capture_manifest=capture, out_dir=out_dir, options=options, progress=_phase_progress
    )
    click.echo(f"captured {len(result.phases)} phases in {result.dest}")
    return 0


@click.command("phases", epilog=opt.example("mcpeval-nb phases dumps/phases --format json"))
@click.argument("directory", type=click.Path(file_okay=False))
@opt.output_format("text", "json")
def phases_cmd(directory: str, fmt: str) -> int:
    """What changed between the phases of a capture: tools added, removed, changed; tokens per phase."""
    click.echo(mcpeval_nb.render(mcpeval_nb.load_phases(directory), fmt), nl=False)
    return 0


def _schema_command(name: str, what: str) -> click.Command:
    @click.command(
        name,
        help=f"Print the {what} JSON Schema.",
        epilog=opt.example(f"mcpeval-nb schema {name} > {name}.schema.json"),
    )
    def show() -> int:
        click.echo(mcpeval_nb.sizes_schema_text(name), nl=False)
        return 0

    return show


SCHEMA_COMMANDS: tuple[Any, ...] = (
    _schema_command("calls", "call-manifest (sizes --call-manifest)"),
    _schema_command("capture", "capture-manifest (capture-phases --capture)"),
    _schema_command("result-sizes", "mcpeval-nb.result-sizes/v1 document"),
)
COMMANDS = (sizes_cmd, capture_phases_cmd, phases_cmd)
