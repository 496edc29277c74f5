"""The ``mcpeval-nb`` command: parse, one library call, format, exit code (SPEC 9.4).

Each command lives in its own module and imports only what ``mcpeval_nb`` exports; options shared by
several commands are declared once in ``cli/options.py``.  A command's module is imported when the
command runs (``COMMAND_HOMES``), so ``mcpeval-nb shim`` pays for its own module only, never for pandas
a reporting command needs; ``--help`` and the docs test load them all.  Every error ends as one ``mcpeval-nb:
<message>`` line on stderr, never a traceback: an ``MCPEvalError`` exits with its own code (2 usage, 3
could not complete, 1 for a share refusal), and any other exception exits 3 with
``mcpeval_nb.describe(exc)``, which withholds its details (a foreign message may quote anything).
``--debug`` (or ``MCPEVAL_NB_DEBUG=1``) also prints the traceback, for bug reports.  Verdicts (1) are
returned by the commands themselves.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import traceback
from typing import Any

import click

import mcpeval_nb

from .terminal import escaped_streams

__all__ = ["COMMAND_HOMES", "COMMAND_MODULES", "SCHEMA_HOMES", "cli", "load_commands", "main"]

#: Command modules, one per command family.
COMMAND_MODULES = ("annotate", "capture", "catalog", "conformance", "findings", "gates", "governance",
                   "mock", "probe", "readiness", "review", "scale", "serve", "sizes", "tables")
#: Command name -> the module of ``COMMAND_MODULES`` that declares it (tests/test_cli_docs.py checks the
#: table against the modules).  A command missing here still runs: every module is loaded to find it.
COMMAND_HOMES = {
    "annotate": "annotate", "shim": "capture", "shim-http": "capture", "catalog": "catalog",
    "usage": "catalog", "conformance": "conformance", "mock": "mock", "replay": "mock",
    "index": "findings", "promote": "findings", "findings": "findings", "verify": "findings",
    "generate": "findings", "export-issues": "findings", "gate": "gates",
    "retention": "governance", "erase": "governance", "audit": "governance", "config": "governance",
    "probe": "probe", "explain": "probe", "schema": "probe", "score": "readiness", "init": "readiness",
    "report": "readiness", "diff": "readiness", "compare": "readiness", "guidance": "readiness",
    "trends": "readiness", "doctor": "review", "share": "review", "export-otlp": "scale", "serve": "serve",
    "sizes": "sizes", "capture-phases": "sizes", "phases": "sizes", "summary": "tables",
    "export-parquet": "tables",
}
#: ``mcpeval-nb schema NAME`` -> the module whose ``SCHEMA_COMMANDS`` declares it (checked the same way).
SCHEMA_HOMES = {"manifest": "probe", "budgets": "gates", "report": "readiness", "diff": "readiness",
                "calls": "sizes", "capture": "sizes", "result-sizes": "sizes"}
DEBUG_ENV = "MCPEVAL_NB_DEBUG"
_debug = [False]
_loaded: set[str] = set()


def _set_debug(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        _debug[0] = True


def load_commands(*modules: str) -> None:
    """Import command modules (default: all of ``COMMAND_MODULES``) and add their commands to ``cli``."""
    for name in modules or COMMAND_MODULES:
        if name in _loaded:
            continue
        _loaded.add(name)
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            continue
        for command in getattr(module, "COMMANDS", ()):
            cli.add_command(command)


class _Commands(click.Group):
    """The top-level group: a command's module is imported when the command is looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        load_commands()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            home = COMMAND_HOMES.get(cmd_name)
            load_commands(*(() if home is None else (home,)))
        return super().get_command(ctx, cmd_name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="\b\nExample:\n  mcpeval-nb summary\n  mcpeval-nb probe --help")
@click.version_option(mcpeval_nb.__version__, prog_name="mcpeval-nb", message="%(prog)s %(version)s")
@click.option("--debug", is_flag=True, expose_value=False, is_eager=True, callback=_set_debug,
              help=f"Print the traceback of an unexpected error (also ${DEBUG_ENV}=1).")
def cli() -> None:
    """Privacy-preserving capture and probing for MCP servers."""


def _check_utf8(argv: list[str]) -> None:
    """Names, labels, paths and notes must be UTF-8 text (they end up in JSON, SQLite and terminals);
    the server command after ``--`` is passed to the server exactly as given."""
    for position, arg in enumerate(argv, start=1):
        if arg == "--":
            return
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            flag = argv[position - 2] if position > 1 else ""
            where = f"the value of {flag}" if flag.startswith("--") and flag.isascii() else \
                f"argument {position}"
            raise mcpeval_nb.UsageError(f"{where} is not valid UTF-8 text (a file name or note with "
                                        "undecodable bytes); only the server command after -- may "
                                        "be") from None


def main(argv: list[str] | None = None) -> Any:
    """Run the CLI and map errors to exit codes; never prints a traceback for expected errors.

    Every text the command prints has its terminal controls escaped (``cli.terminal``)."""
    with escaped_streams():
        return _main(argv)


def _main(argv: list[str] | None) -> Any:
    try:
        _check_utf8(sys.argv[1:] if argv is None else argv)
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
        _fail(exc, exc.exit_code)
    except Exception as exc:  # outside the error tree: a bug or an environment failure
        _fail(exc, 3)


def _fail(exc: BaseException, code: int) -> None:
    """Print the one safe line for ``exc`` (and the traceback when debugging), then exit with ``code``."""
    if _debug[0] or os.environ.get(DEBUG_ENV) == "1":
        traceback.print_exception(exc)
    with contextlib.suppress(Exception):  # stderr itself may be unusable: the exit code still tells
        click.echo(f"mcpeval-nb: {mcpeval_nb.describe(exc)}", err=True)
    sys.exit(code)


def run(argv: list[str] | None = None) -> None:
    """Entry point: exit with the command's return code (an int) or 0."""
    code = main(argv)
    sys.exit(code if isinstance(code, int) else 0)
