"""Where a capture root is, and whether the operating system lets us use it (SPEC 1).

The argument if given, else ``$MCPEVAL_HOME``, else ``$HOME/.mcp-eval`` (the relative ``.mcp-eval`` with
``HOME`` unset, as the Rust tool does).  ``Root.of`` resolves every root through here; the stdio shim
calls it directly, so the start of its server costs no more than these few system calls
(docs/performance.md).  Nothing is created.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import JournalError

TYPE_CHECKING = False  # typing's, without importing typing: the shim starts its server first
if TYPE_CHECKING:
    from typing import Literal

    Source = Literal["flag", "MCPEVAL_HOME", "default"]

__all__ = ["ROOT_SOURCES", "check_usable", "locate"]

#: Where a root came from: ``flag`` (an argument: ``--root`` or a function's ``root=``), ``MCPEVAL_HOME``
#: or ``default`` (``$HOME/.mcp-eval``).
ROOT_SOURCES = ("flag", "MCPEVAL_HOME", "default")


def locate(root: str | os.PathLike[str] | None) -> tuple[Path, Source]:
    """The root's directory and where it came from: ``root`` if given, else the environment's."""
    if root is not None:
        return Path(root), "flag"
    if os.environ.get("MCPEVAL_HOME"):
        return Path(os.environ["MCPEVAL_HOME"]), "MCPEVAL_HOME"
    return Path(os.environ.get("HOME", "")) / ".mcp-eval", "default"


def check_usable(path: Path) -> None:
    """Ask the operating system about ``path``; a root that does not exist yet is fine.

    Raises:
        JournalError: it refuses the path itself (a component longer than the file system allows, a
            directory that cannot be searched, a loop of symlinks), or the path is a file.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise JournalError(f"cannot use capture root {path}: {exc.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise JournalError(f"cannot use capture root {path}: it is a file, not a directory")
