"""The ``mcpeval-nb`` command: parse, one library call, format, exit code (SPEC 9.4).

Each command lives in its own module and imports only what ``mcpeval_nb`` exports.  Errors raised on
purpose (``MCPEvalError``) print one ``mcpeval-nb: <message>`` line on stderr and exit with the error's
code: 2 usage, 3 could not complete; verdicts (1) are returned by the commands themselves.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

import mcpeval_nb

__all__ = ["cli", "main"]

#: Command modules, one per command family.
COMMAND_MODULES = ("annotate", "capture", "probe", "readiness", "review", "tables")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(mcpeval_nb.__version__, prog_name="mcpeval-nb", message="%(prog)s %(version)s")
def cli() -> None:
    """Privacy-preserving capture and probing for MCP servers."""


def _register() -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            continue
        for command in getattr(module, "COMMANDS", ()):
            cli.add_command(command)


_register()


def main(argv: list[str] | None = None) -> Any:
    """Run the CLI and map errors to exit codes; never prints a traceback for expected errors."""
    try:
        return cli.main(args=argv, prog_name="mcpeval-nb", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("mcpeval-nb: aborted", err=True)
        sys.exit(3)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2)
    except mcpeval_nb.MCPEvalError as exc:
        click.echo(f"mcpeval-nb: {exc}", err=True)
        sys.exit(exc.exit_code)


def run(argv: list[str] | None = None) -> None:
    """Entry point: exit with the command's return code (an int) or 0."""
    code = main(argv)
    sys.exit(code if isinstance(code, int) else 0)
