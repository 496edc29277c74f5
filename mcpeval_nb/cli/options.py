"""Options shared by several commands, declared once, and the help epilog every command ends with.

A command module decorates with these instead of re-declaring ``--root`` or the target options, so a
flag's name, type and help text are the same everywhere (docs/cli.md documents each once).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import click

import mcpeval_nb

__all__ = [
    "LABEL_HELP",
    "allow_mutation",
    "allow_open_world",
    "allow_remote_http",
    "command_argument",
    "confirm_read_only",
    "errors",
    "example",
    "finish_interrupted_erase",
    "output_format",
    "price_per_mtok",
    "protocol",
    "report_skipped",
    "root",
    "server",
    "skip_tool",
    "target_of",
    "url",
]

F = TypeVar("F", bound=Callable[..., Any])


def _doc(decorator: F, text: str) -> F:
    decorator.__doc__ = text
    return decorator


LABEL_HELP = "Server label: 1-128 of ASCII letters, digits, '.', '_', '-', ':'."

def finish_interrupted_erase(root: str | None) -> None:
    """The first step of every writer that reads the journals back (``erase``, ``retention``, ``index``,
    ``promote``, ``share``, ``export-parquet``): finish an erase a SIGKILL interrupted, and say so on
    stderr (docs/governance.md).  Never run while arguments are parsed: a read-only command changes
    nothing under the root.

    Raises:
        GovernanceError: the interrupted erase cannot be finished (the command fails with it).
    """
    if mcpeval_nb.recover(root):
        click.echo("mcpeval-nb: finished an interrupted erase first", err=True)


root = _doc(click.option("--root", type=click.Path(), default=None,
                         help="Capture root (default $MCPEVAL_HOME)."),
            "``--root DIR``: the capture root (default ``$MCPEVAL_HOME``, else ``~/.mcp-eval``).")
url = _doc(click.option("--url", default=None, help="Streamable HTTP endpoint (instead of a stdio command)."),
           "``--url URL``: a Streamable HTTP endpoint instead of a stdio command.")
allow_remote_http = _doc(click.option("--allow-remote-http", is_flag=True,
                                      help="Permit a non-loopback HTTPS endpoint."),
                         "``--allow-remote-http``: permit a non-loopback HTTPS endpoint.")
confirm_read_only = _doc(click.option("--confirm-read-only", is_flag=True,
                                      help="Attest that unannotated tools are read-only."),
                         "``--confirm-read-only``: the operator attests unannotated tools are read-only.")
allow_open_world = _doc(click.option("--allow-open-world", is_flag=True,
                                     help="Also call tools annotated openWorldHint (they may reach the "
                                          "internet)."),
                        "``--allow-open-world``: the battery and init may call ``openWorldHint`` tools.")
skip_tool = _doc(click.option("--skip-tool", "skip_tools", multiple=True,
                              help="A tool the battery must not call."),
                 "``--skip-tool NAME`` (repeatable): a tool the readiness battery must not call.")
no_catalog = _doc(click.option("--no-catalog", is_flag=True,
                               help="Do not record catalog records of tools/list listings."),
                  "``--no-catalog``: record calls only, no catalog records (docs/catalog.md).")
#: ``transport.era.PROTOCOL_CHOICES`` and ``MODERN_VERSION``, written out: importing ``transport`` at CLI
#: start loads its HTTP stack (tests/test_cli_eras_sdk.py checks they agree).
PROTOCOL_CHOICES = ("auto", "legacy", "2026-07-28")
MODERN_VERSION = "2026-07-28"


class _ProtocolChoice(click.Choice):  # type: ignore[type-arg]
    """``--protocol``'s choices; a dated revision that is not one says which choice speaks it."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            choices = ", ".join(f"'{c}'" for c in PROTOCOL_CHOICES)
            self.fail(f"{value!r} is not one of {choices}{_protocol_hint(str(value))}", param, ctx)


def _protocol_hint(value: str) -> str:
    if len(value) == 10 and value[4] == value[7] == "-" and value.replace("-", "").isdigit():
        if value < MODERN_VERSION:
            return (f"; {value} is a legacy revision: --protocol legacy (or auto) speaks it, the initialize "
                    "handshake negotiating the version")
        return f"; the only stateless revision this version speaks is {MODERN_VERSION}"
    if value.strip().lower() in ("modern", "stateless", "new", "latest"):
        return f"; the stateless revision is --protocol {MODERN_VERSION}"
    return ""


protocol = _doc(click.option("--protocol", type=_ProtocolChoice(PROTOCOL_CHOICES),
                             default="auto", show_default=True,
                             help="Protocol era: auto (server/discover, falling back to the initialize "
                                  "handshake), legacy (initialize only) or 2026-07-28 (stateless only)."),
                "``--protocol auto|legacy|2026-07-28``: the protocol era (docs/protocol.md).")


def _positive_price(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise click.BadParameter("must be a positive number of USD", ctx=ctx, param=param)
    return value


price_per_mtok = _doc(click.option("--price-per-mtok", type=float, default=None, metavar="USD",
                                   callback=_positive_price,
                                   help="USD per million tokens: text and markdown add the session cost."),
                      "``--price-per-mtok USD``: price the catalog's tokens per session (text, markdown).")
allow_mutation = _doc(click.option("--allow-mutation", is_flag=True,
                                   help="Authorise mutating cases that name a declared sandbox."),
                      "``--allow-mutation``: the operator's half of the mutation double gate.")
command_argument = _doc(click.argument("command", nargs=-1, type=click.UNPROCESSED),
                        "``-- CMD...``: the stdio server command (everything after ``--``).")


errors = _doc(click.option("--errors", type=click.Choice(["report", "raise"]), default="report",
                           show_default=True,
                           help="Skip a journal line that is not a usable record and name it, or stop "
                                "at it."),
              "``--errors report|raise``: skip (and name) a journal line that is not a usable record "
              "(the default), or stop at the first one.")
#: Skipped lines named one per line before the rest are only counted.
_SKIPPED_SHOWN = 10


def report_skipped(lines: Any) -> None:
    """Name on stderr the journal lines a command went past (``SkippedLine``s): count, then where."""
    lines = tuple(lines)
    if not lines:
        return
    click.echo(f"mcpeval-nb: skipped {len(lines)} journal line(s) that are not usable records:", err=True)
    for skipped in lines[:_SKIPPED_SHOWN]:
        click.echo(f"  {skipped.text()}", err=True)
    if len(lines) > _SKIPPED_SHOWN:
        click.echo(f"  ... and {len(lines) - _SKIPPED_SHOWN} more (mcpeval-nb summary lists them)", err=True)


def server(help: str = LABEL_HELP) -> Callable[[F], F]:
    """``--server LABEL`` (required), with a command-specific help text."""
    return click.option("--server", required=True, help=help)


def target_of(url: str | None, command: tuple[str, ...], *, allow_remote_http: bool = False) -> Any:
    """The probe target chosen by ``--url`` or ``-- CMD``: exactly one of them.

    Raises:
        UsageError: both or neither were given, or the URL is not HTTP(S).
    """
    if url is not None and command:
        raise mcpeval_nb.UsageError("select an HTTP endpoint or a stdio command, not both")
    if url is None and not command:
        raise mcpeval_nb.UsageError("an HTTP endpoint or stdio command is required")
    return mcpeval_nb.make_target(url if url is not None else list(command),
                                  allow_remote_http=allow_remote_http)


def output_format(*choices: str) -> Callable[[F], F]:
    """``--format`` with these choices, the first the default (every command names the same option)."""
    return click.option("--format", "fmt", type=click.Choice(list(choices)), default=choices[0],
                        show_default=True, help="Output format.")


def example(*lines: str) -> str:
    """A ``--help`` epilog: ``Example:`` and the given command lines, kept unwrapped."""
    return "\b\nExample:\n" + "\n".join(f"  {line}" for line in lines)
