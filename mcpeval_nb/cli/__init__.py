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

The click group lives in ``cli/group.py`` (its names are reachable here too).  This module imports
neither click nor any command: ``run`` gives a plain ``mcpeval-nb shim`` line to ``cli/shim_fast.py``,
which starts the server without loading click (the shim is in front of every server start), with the
same UTF-8 check, escaped streams and error lines as every other command.
"""

from __future__ import annotations

import importlib
import sys

from . import shim_fast
from .terminal import check_utf8, escaped_streams

TYPE_CHECKING = False  # typing's, without importing typing: the shim starts its server first
if TYPE_CHECKING:
    from typing import Any

__all__ = ["COMMAND_HOMES", "COMMAND_MODULES", "SCHEMA_HOMES", "cli", "load_commands", "main", "run"]


def run(argv: list[str] | None = None) -> None:
    """Entry point: exit with the command's return code (an int) or 0."""
    args = sys.argv[1:] if argv is None else argv
    params = shim_fast.parse(args)
    if params is None:
        from .group import main

        code = main(argv)
    else:
        code = _run_shim(args, params)
    sys.exit(code if isinstance(code, int) else 0)


def _run_shim(args: list[str], params: dict[str, Any]) -> int:
    """``shim_fast.run`` with what ``group.main`` gives every command: escaped streams, the UTF-8
    check, one line and an exit code for any error."""
    with escaped_streams():
        try:
            check_utf8(args)
            return shim_fast.run(params)
        except KeyboardInterrupt:
            from .group import aborted

            aborted()
        except Exception as exc:
            from .group import exit_for

            exit_for(exc)
    raise AssertionError("unreachable: aborted and exit_for exit")


def __getattr__(name: str) -> Any:
    """The click group's names (``cli``, ``main``, ``load_commands``, ...), loaded on first use."""
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    group = importlib.import_module(f"{__name__}.group")
    return group if name == "group" else getattr(group, name)
