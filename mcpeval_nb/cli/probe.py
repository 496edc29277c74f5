"""``mcpeval-nb probe``, ``explain`` and ``schema manifest`` (SPEC 8.2, 9.4, 9.5).

``schema`` is a group other command modules extend: a module in ``COMMAND_MODULES`` that exports
``SCHEMA_COMMANDS = (...)`` gets those commands added under ``mcpeval-nb schema`` (``SCHEMA_HOMES``
names each one's module, loaded when it runs).
"""

from __future__ import annotations

import sys
from typing import Any

import click

import mcpeval_nb

from . import options as opt

__all__ = ["COMMANDS", "SCHEMA_COMMANDS", "explain_cmd", "probe_cmd", "schema_group"]


def _progress(event: mcpeval_nb.ProgressEvent) -> None:
    if event.diagnostic is not None:
        click.echo(event.diagnostic, err=True)
    elif event.phase == "done":
        click.echo(f"probe [{event.index + 1}/{event.total}] {event.case_id} {event.verdict}", err=True)
    elif event.phase == "cancelled":
        click.echo("probe cancelled", err=True)


@click.command("probe", context_settings={"ignore_unknown_options": False},
               epilog=opt.example("mcpeval-nb probe --server time --manifest mcp-eval.manifest.json "
                                  "-- python -m mcp_server_time"))
@click.option("--server", required=True, help="Server label for the report and the journal.")
@click.option("--manifest", "manifest_path", default=None, type=click.Path(dir_okay=False),
              help="Manifest file (default mcp-eval.manifest.json).")
@click.option("--probe", "kind", default=None, help="Run only the cases of this probe kind.")
@click.option("--case", "case_id", default=None, help="Run only the case with this id.")
@opt.output_format("text", "json", "markdown", "sarif", "junit")
@click.option("--brief", is_flag=True, help="Text and markdown without hints or the per-area breakdown.")
@opt.price_per_mtok
@opt.allow_mutation
@opt.allow_remote_http
@click.option("--gate-only", is_flag=True, help="Run the manifest only, not the readiness battery.")
@opt.confirm_read_only
@opt.allow_open_world
@opt.skip_tool
@opt.protocol
@click.option("--no-journal", is_flag=True, help="Do not journal the cases' tool calls.")
@click.option("--no-history", is_flag=True, help="Do not append the full run's readiness trend point.")
@opt.root
@opt.url
@opt.command_argument
def probe_cmd(server: str, manifest_path: str | None, kind: str | None, case_id: str | None, fmt: str,
              brief: bool, price_per_mtok: float | None, allow_mutation: bool, allow_remote_http: bool,
              gate_only: bool,
              confirm_read_only: bool, allow_open_world: bool, skip_tools: tuple[str, ...],
              protocol: str, no_journal: bool, no_history: bool,
              root: str | None, url: str | None, command: tuple[str, ...]) -> int:
    """Run a probe manifest against a server: `probe --server L [opts] -- CMD...` or `--url URL`.

    A full run (manifest, then the standard battery) appends one readiness trend point unless
    ``--no-history``.  Exit 0 when every case passed, 1 when a case failed, 2 on a usage error, 3 when a
    case or the battery could not complete (the report is still printed).
    """
    options = mcpeval_nb.ProbeOptions(
        server=server, probe=kind, case_id=case_id, allow_mutation=allow_mutation,
        allow_remote_http=allow_remote_http, root=root, journal=not no_journal,
        battery=None if gate_only else "standard", history=not no_history,
        confirm_read_only=confirm_read_only, allow_open_world=allow_open_world, skip_tools=skip_tools,
        protocol=protocol)
    target = opt.target_of(url, command, allow_remote_http=allow_remote_http)
    manifest = manifest_path or "mcp-eval.manifest.json"
    report = mcpeval_nb.run_probes(target, manifest=manifest, options=options, progress=_progress)
    click.echo(mcpeval_nb.render(report, fmt, brief=brief, manifest=manifest, price_per_mtok=price_per_mtok,
                                 corpus=mcpeval_nb.load_corpus(root)), nl=False)
    return report.exit_code


@click.command("explain", epilog=opt.example("mcpeval-nb explain unexpected-outcome"))
@click.argument("reason", required=False)
def explain_cmd(reason: str | None) -> int:
    """List the failure reasons with remediation hints, or explain one REASON."""
    hints = dict(mcpeval_nb.reason_hints())
    if reason is None:
        for label, text in mcpeval_nb.reason_hints():
            click.echo(f"{label}\n  {text}")
        return 0
    if reason not in hints:
        raise mcpeval_nb.UsageError("unknown reason label; run `mcpeval-nb explain` for the list")
    click.echo(f"{reason}\n  {hints[reason]}")
    return 0


class _SchemaGroup(click.Group):
    """``schema``: subcommands from this module plus every loaded command module's ``SCHEMA_COMMANDS``."""

    def _extra(self, name: str | None = None) -> dict[str, click.Command]:
        """The other modules' schema commands: ``name``'s module alone, or every module for a listing."""
        from . import SCHEMA_HOMES, load_commands  # command modules load when needed

        home = SCHEMA_HOMES.get(name or "")
        load_commands(*(() if home is None else (home,)))
        found: dict[str, click.Command] = {}
        for name, module in list(sys.modules.items()):
            if name.startswith(f"{__package__}.") and module is not None:
                for command in getattr(module, "SCHEMA_COMMANDS", ()):
                    if command.name is not None:
                        found.setdefault(command.name, command)
        return found

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self._extra()))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, cmd_name) or self._extra(cmd_name).get(cmd_name)


@click.group("schema", cls=_SchemaGroup,
             epilog=opt.example("mcpeval-nb schema manifest > manifest.schema.json"))
def schema_group() -> None:
    """Print a published JSON Schema."""


@click.command("manifest", epilog=opt.example("mcpeval-nb schema manifest > manifest.schema.json"))
def schema_manifest_cmd() -> int:
    """Print the strict probe-manifest JSON Schema."""
    click.echo(mcpeval_nb.manifest_schema_text(), nl=False)
    return 0


SCHEMA_COMMANDS: tuple[Any, ...] = (schema_manifest_cmd,)
COMMANDS = (probe_cmd, explain_cmd, schema_group)
