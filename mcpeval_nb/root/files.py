"""Small file operations under a capture root: look up, list, read a small JSON file, drop derived data.

Each tells "absent" from "cannot be looked at", so an unreadable store never reads as an empty one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import JournalError
from .layout import engine_dataset_path

__all__ = ["drop_engine_dataset", "entry_exists", "list_dir", "read_json_file"]


def entry_exists(path: Path) -> bool:
    """Whether ``path`` exists (a symlink is not followed), telling "absent" from "cannot be looked at".

    ``os.path.lexists`` answers False for both, so an unreadable store would read as an empty one.

    Raises:
        JournalError: the operating system refuses to say (a directory on the way that cannot be
            searched, a component too long), naming the directory.
    """
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise JournalError(f"cannot look up {path}: {exc.strerror} (check the permissions of the "
                           "directories above it)") from None
    return True


def list_dir(path: Path) -> list[str]:
    """The sorted entry names of a store directory; empty when it does not exist.

    Raises:
        JournalError: it exists but cannot be listed (permissions), or is not a directory.
    """
    try:
        return sorted(os.listdir(path))
    except FileNotFoundError:
        return []
    except NotADirectoryError:
        raise JournalError(f"{path} is not a directory") from None
    except OSError as exc:
        raise JournalError(f"cannot read {path}: {exc.strerror}") from None


def read_json_file(path: Path, *, error: Callable[[str], Exception], invalid: str) -> Any | None:
    """A small JSON file of the capture root (``config.json``, the erase intent), or None when absent.

    Raises:
        Exception: from ``error``: the file cannot be read (``cannot read <path>: <Type>``) or is not
            JSON (``<path> <invalid>``); never quoted.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        raise error(f"cannot read {path}: {why}") from None
    try:
        return json.loads(text)
    except ValueError:
        raise error(f"{path} {invalid}") from None


def drop_engine_dataset(root: Path) -> bool:
    """Remove ``<root>/calls.parquet`` (a symlink is unlinked, never followed); True when one was there.

    After an erase or a retention pass the dataset still holds what was removed; the engines export it
    again on their next use, so dropping it loses nothing.

    Raises:
        JournalError: it exists but cannot be removed.
    """
    path = engine_dataset_path(root)
    try:
        if path.is_symlink() or not path.is_dir():
            path.unlink()
        else:
            import shutil  # only here: the shim's start-up does not load it

            shutil.rmtree(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise JournalError(f"cannot remove the derived dataset {path}: {exc.strerror}") from None
    return True
