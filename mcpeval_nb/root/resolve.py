"""``Root.of``: the one resolution of a capture root, and what hangs off it (SPEC 1).

A root is given as text, a path, a ``Root`` or nothing; ``Root.of`` resolves it once: the argument if
given, else ``$MCPEVAL_HOME``, else ``$HOME/.mcp-eval`` (the relative ``.mcp-eval`` with ``HOME`` unset, as
the Rust tool does).  Nothing is created.  The resolved ``Root`` remembers where it came from, loads its
salt lazily (once) and reads its typed ``config.json`` on demand; it is path-like, so it goes wherever a
path does.  Every public function that takes a root accepts ``RootLike`` and resolves it here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .layout import config_path
from .salt import SALT_BYTES, read_salt
from .where import ROOT_SOURCES, check_usable, locate

if TYPE_CHECKING:
    from .config import Config
    from .where import Source

__all__ = ["ROOT_SOURCES", "SALT_BYTES", "Root", "RootLike", "load_salt", "resolve_root"]

@dataclass(frozen=True)
class Root(os.PathLike[str]):
    """A resolved capture root (make one with ``Root.of``).

    Attributes:
        path: the root directory (it may not exist yet: the first write creates it).
        source: where it came from (``ROOT_SOURCES``).
    """

    path: Path
    source: Source = "flag"
    _salt: list[bytes] = field(default_factory=list, compare=False, repr=False)

    @classmethod
    def of(cls, root: RootLike = None, *, check: bool = True) -> Root:
        """Resolve ``root`` once: a ``Root`` as it is, else the argument, ``$MCPEVAL_HOME`` or the default.

        Args:
            root: the root as given (None: from the environment).
            check: ask the operating system about the path now (False: the caller's own first open
                reports a refused path, as the journal writer and the salt do, naming the file).

        Raises:
            JournalError: the operating system refuses the path itself (a component longer than the
                file system allows, a directory that cannot be searched, a loop of symlinks); a root
                that does not exist yet is fine.
        """
        if isinstance(root, Root):
            return root
        resolved = cls(*locate(root))
        if check:
            check_usable(resolved.path)
        return resolved

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return str(self.path)

    def salt(self, *, create: bool = True) -> bytes:
        """The root's 32-byte salt, read once (created race-free if absent, unless ``create`` is False).

        Raises:
            SaltError: the salt has the wrong size, or cannot be read or created (never overwritten).
        """
        if not self._salt:
            self._salt.append(read_salt(self.path, create=create))
        return self._salt[0]

    @property
    def config(self) -> Config:
        """``config.json``, typed (read now; absent: no settings).

        Raises:
            UsageError: the file cannot be read or is not a JSON object.
        """
        from .config import Config  # loaded on first use (the shim's start never reads settings)

        return Config.read(config_path(self.path))


RootLike = str | os.PathLike[str] | Root | None


def resolve_root(root: RootLike = None) -> Path:
    """The capture root's directory: ``Root.of(root).path`` (``root`` if given, else ``$MCPEVAL_HOME``,
    else ``$HOME/.mcp-eval``).  Nothing is created.

    Raises:
        JournalError: the operating system refuses the path itself (see ``Root.of``).
    """
    return Root.of(root).path


def load_salt(root: RootLike = None, *, create: bool = True) -> bytes:
    """The capture root's 32-byte salt, created race-free if absent (SPEC 1): ``Root.of(root).salt()``.

    Raises:
        SaltError: the salt has the wrong size or cannot be read or created (it is never overwritten).
    """
    return Root.of(root, check=False).salt(create=create)
