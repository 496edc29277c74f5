"""``mcpeval-nb shim`` in its plain form, parsed without click.

The shim sits in front of every server start a client makes, and importing click costs about as much
as starting the interpreter (bench/bench_startup.py, docs/performance.md).  ``parse`` accepts only the
plain form: ``shim``, then ``--server``, ``--root`` (as ``--opt VALUE`` or ``--opt=VALUE``),
``--strict-frames`` and ``--no-catalog``, each at most once, then ``--`` or the server command.  For
anything else (``--help``, a missing ``--server``, an unknown or repeated option, a value that looks like
an option) it returns None and the click command (``cli/capture.py``) parses the line, so its messages
and help stay the only ones.  ``tests/test_cli_shim_fast.py`` checks that both parse every line alike
and that every option of the click command is known here.
"""

from __future__ import annotations

from collections.abc import Sequence

import mcpeval_nb

TYPE_CHECKING = False  # typing's, without importing typing: the shim starts its server first
if TYPE_CHECKING:
    from typing import Any

__all__ = ["FLAGS", "VALUED", "parse", "run", "shim_options"]

#: Options that take a value -> their parameter name (as the click command names it).
VALUED = {"--server": "server", "--root": "root"}
#: Flags -> their parameter name.
FLAGS = {"--strict-frames": "strict_frames", "--no-catalog": "no_catalog"}


def parse(argv: Sequence[str]) -> dict[str, Any] | None:
    """The click command's parameters for a plain ``shim`` line, or None to let click parse it."""
    if not argv or argv[0] != "shim":
        return None
    params: dict[str, Any] = {"server": None, "root": None, "strict_frames": False, "no_catalog": False}
    seen: set[str] = set()
    i = 1
    while i < len(argv) and argv[i] != "--" and argv[i].startswith("-"):
        step = _option(argv, i)
        if step is None or step[0] in seen:
            return None
        seen.add(step[0])
        params[step[0]], i = step[1], step[2]
    command = tuple(argv[i + 1:] if i < len(argv) and argv[i] == "--" else argv[i:])
    return None if params["server"] is None or not command else {**params, "command": command}


def _option(argv: Sequence[str], i: int) -> tuple[str, Any, int] | None:
    """(parameter, value, next index) for the option at ``argv[i]``, or None when it is not plain."""
    if argv[i] in FLAGS:
        return FLAGS[argv[i]], True, i + 1
    name, eq, value = argv[i].partition("=")
    if name not in VALUED:
        return None
    if not eq:
        if i + 1 >= len(argv):
            return None
        i, value = i + 1, argv[i + 1]
    return None if not value or value.startswith("-") else (VALUED[name], value, i + 1)


def shim_options(*, server: str, root: str | None, strict_frames: bool, no_catalog: bool,
                 command: tuple[str, ...]) -> mcpeval_nb.ShimOptions:
    """The shim's options from the command's parameters (the click command and ``run`` both use it)."""
    return mcpeval_nb.ShimOptions(server=server, command=command, root=root, strict_frames=strict_frames,
                                  catalog=not no_catalog)


def run(params: dict[str, Any]) -> int:
    """Run the shim with parameters from ``parse``; returns the server's exit code."""
    return mcpeval_nb.run_shim(shim_options(**params))
