"""The capture root: where it is, how the store is laid out, and the fingerprint salt (SPEC 1)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import JournalError, SaltError, UsageError

__all__ = [
    "SALT_BYTES",
    "annotations_path",
    "calls_path",
    "config_path",
    "config_value",
    "entry_exists",
    "history_path",
    "list_dir",
    "load_salt",
    "read_json_file",
    "resolve_root",
    "salt_path",
    "store_dir",
]

SALT_BYTES = 32


def resolve_root(root: str | os.PathLike[str] | None = None) -> Path:
    """Resolve the capture root: ``root`` if given, else ``$MCPEVAL_HOME``, else ``$HOME/.mcp-eval``.

    Nothing is created.  With ``HOME`` unset the relative path ``.mcp-eval`` is used, as the Rust tool does.

    Raises:
        JournalError: the operating system refuses the path itself (a component longer than the file
            system allows, a directory that cannot be searched, a loop of symlinks); a root that does
            not exist yet is fine (it is created on the first write).
    """
    if root is not None:
        path = Path(root)
    elif os.environ.get("MCPEVAL_HOME"):
        path = Path(os.environ["MCPEVAL_HOME"])
    else:
        path = Path(os.environ.get("HOME", "")) / ".mcp-eval"
    _check_usable(path)
    return path


def _check_usable(path: Path) -> None:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise JournalError(f"cannot use capture root {path}: {exc.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise JournalError(f"cannot use capture root {path}: it is a file, not a directory")


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


#: The Parquet dataset the scale engines export a capture root to (``<root>/calls.parquet``): derived
#: data, refreshed on every engine use, dropped by ``erase`` and ``retention`` (docs/governance.md).
ENGINE_DATASET = "calls.parquet"


def drop_engine_dataset(root: Path) -> bool:
    """Remove ``<root>/calls.parquet`` (a symlink is unlinked, never followed); True when one was there.

    After an erase or a retention pass the dataset still holds what was removed; the engines export it
    again on their next use, so dropping it loses nothing.

    Raises:
        JournalError: it exists but cannot be removed.
    """
    path = root / ENGINE_DATASET
    try:
        if path.is_symlink() or not path.is_dir():
            path.unlink()
        else:
            shutil.rmtree(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise JournalError(f"cannot remove the derived dataset {path}: {exc.strerror}") from None
    return True


def store_dir(root: Path) -> Path:
    """``<root>/store``: the share-safe capture tree."""
    return root / "store"


def calls_path(root: Path, day: str) -> Path:
    """``<root>/store/calls-<day>.jsonl``."""
    return store_dir(root) / f"calls-{day}.jsonl"


def annotations_path(root: Path, day: str) -> Path:
    """``<root>/store/annotations-<day>.jsonl``."""
    return store_dir(root) / f"annotations-{day}.jsonl"


def history_path(root: Path) -> Path:
    """``<root>/store/probes/history.jsonl``: readiness trend points."""
    return store_dir(root) / "probes" / "history.jsonl"


def config_path(root: Path) -> Path:
    """``<root>/config.json``: the user's settings (``promotion_threshold``, ``retention_days``)."""
    return root / "config.json"


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


def config_value(root: Path, key: str) -> object | None:
    """The value of ``key`` in ``<root>/config.json`` (other keys ignored), or None when the file or
    the key is absent.  The one reader of the file: each caller checks its own key's type.

    Raises:
        UsageError: the file cannot be read or is not a JSON object (named by path, never quoted).
    """
    path = config_path(root)
    document = read_json_file(path, error=UsageError, invalid="is not a JSON object")
    if document is None:
        return None
    if not isinstance(document, dict):
        raise UsageError(f"{path} is not a JSON object")
    return document.get(key)


def salt_path(root: Path) -> Path:
    """``<root>/.salt``: beside the store, never inside it; never shared."""
    return root / ".salt"


def _read_salt(path: Path) -> bytes | None:
    """The salt's bytes, or None when there is none; a FIFO or device there is refused at once (opened
    non-blocking, then checked to be a regular file), and a symlink is not followed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SaltError(f"cannot read salt file at {path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SaltError(f"salt file at {path} is not a regular file")
        data = os.read(fd, SALT_BYTES + 1)
    except OSError as exc:
        raise SaltError(f"cannot read salt file at {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) != SALT_BYTES:
        size = len(data) if len(data) <= SALT_BYTES else st.st_size
        raise SaltError(f"salt file at {path} has {size} bytes, expected {SALT_BYTES}")
    return data


def load_salt(root: Path | str, *, create: bool = True) -> bytes:
    """Return the capture root's 32-byte salt, creating it race-free if absent (SPEC 1).

    Creation writes a 0600 temp file, fsyncs it and hard-links it into place; a process that loses
    the race reads the winner's salt, so every process ends up with the on-disk bytes.

    Raises:
        SaltError: the salt has the wrong size or cannot be read or created (it is never overwritten).
    """
    root = Path(root)
    path = salt_path(root)
    existing = _read_salt(path)
    if existing is not None or not create:
        if existing is None:
            raise SaltError(f"no salt file at {path}")
        return existing
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SaltError(f"cannot create capture root {root}: {exc.strerror}") from None
    secret = uuid.uuid4().bytes + uuid.uuid4().bytes
    tmp = root / f".salt.tmp-{uuid.uuid4()}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, secret)
            os.fsync(fd)
        finally:
            os.close(fd)
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            raise SaltError(f"cannot create salt file at {path}: {exc.strerror}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    salt = _read_salt(path)
    if salt is None:
        raise SaltError(f"salt file at {path} vanished during creation")
    return salt
