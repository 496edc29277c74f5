"""Where an export may go, and how it gets there: the one output rule, owner-only staging, atomic publish.

**The rule** (SPEC 11 steps 2-3, for every export: ``share``, ``export-issues``, ``capture-phases``,
``export-parquet`` and the engines' dataset).  An output is resolved without following a symlink at its
own path (the nearest existing ancestor is canonicalised and the missing components re-appended), and the
nearest existing ancestor must be a directory.  It may never overlap the capture store (inside it, or
holding the root), and unless its ``Destination`` says otherwise it must be outside the capture root
altogether (an envelope beside ``.salt`` invites sharing the whole root).  An existing output must be a
directory; without ``force`` (or ``replace``) an empty one; with ``deep``, one holding no symlink anywhere
(the incremental Parquet export hard-links files out of it).  Each export kind is one ``Destination``:
the rule's variations are data, its messages one set of texts.

**Staging.** An export is written into ``.mcpeval-<kind>-<uuid4>`` beside its output (mode 0700), created
non-recursively and held under an exclusive ``flock`` for the whole export, so a later export can tell a
stale staging directory (left by a killed export: the lock died with it) from a live one and remove only
the stale ones; they are never published.

**Publishing** swaps the staging directory and an existing output in one ``renameat2(RENAME_EXCHANGE)``
(a fresh output uses ``RENAME_NOREPLACE``), so at every instant the output is either the complete previous
export or the complete new one; a failed or refused export never replaces it.  Where the kernel or
filesystem lacks ``renameat2`` the backup-rename-restore sequence of SPEC 11 is used.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import re
import shutil
import stat
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import (
    FindingsError,
    JournalError,
    MCPEvalError,
    ProbeError,
    ReviewError,
    ShareOutputError,
    UsageError,
)
from .layout import store_dir

__all__ = [
    "ISSUES",
    "PARQUET",
    "PHASES",
    "SHARE",
    "Destination",
    "Staging",
    "build_and_publish",
    "discard",
    "exchange",
    "publish",
    "remove_stale_staging",
    "stage_prefix",
    "write_new_file",
]


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


@dataclass(frozen=True)
class Destination:
    """Where one kind of export may go (the module's rule), and how its staging is named and reported.

    Attributes:
        what: the command named in refusals (``share``, ``export-issues`` ...).
        kind: the staging prefix (``.mcpeval-<kind>-``).
        title: the export in failure messages (``the share envelope``).
        failure: the error class of staging and publishing failures.
        refusal: the error class of refusals (``ShareOutputError``; ``UsageError`` for datasets).
        noun: how refusals call the output (``output``, ``destination``).
        inside_root: the output may be inside the capture root (never inside its store).
        replace: an existing non-empty output is replaced without ``force``.
        deep: refuse an existing output that holds a symlink anywhere inside.
    """

    what: str
    kind: str
    title: str
    failure: type[MCPEvalError]
    refusal: type[MCPEvalError] = ShareOutputError
    noun: str = "output"
    inside_root: bool = False
    replace: bool = False
    deep: bool = False

    def _refuse(self, text: str) -> MCPEvalError:
        return self.refusal(text)

    def resolve(self, dest: str | os.PathLike[str], *, root: Path | None, force: bool = False) -> Path:
        """Resolve and check the output (nothing is created).

        Args:
            dest: the output as given.
            root: the capture root (None: an export that knows none, such as ``to_parquet``).
            force: an existing non-empty output may be replaced.

        Returns:
            The absolute output path with its existing part canonicalised.

        Raises:
            MCPEvalError: (``refusal``) a symlinked output, a parent that is not a directory, an overlap
                with the capture store (or the root, unless ``inside_root``), or what ``check`` refuses.
        """
        out = Path(os.path.abspath(os.fspath(dest)))
        if out.is_symlink():
            raise self._refuse(f"{self.what} refuses a symlinked {self.noun}: {out}")
        missing: list[str] = []
        anchor = out
        while not os.path.lexists(anchor) and anchor != anchor.parent:
            missing.append(anchor.name)
            anchor = anchor.parent
        if missing and not os.path.isdir(anchor):
            raise self._refuse(f"{self.what} {self.noun}'s parent {anchor} is not a directory: {out}")
        resolved = Path(os.path.realpath(anchor)).joinpath(*reversed(missing))
        if root is not None:
            self._check_root(resolved, out, root)
        self.check(resolved, force=force)
        return resolved

    def _check_root(self, resolved: Path, out: Path, root: Path) -> None:
        canon_root = Path(os.path.realpath(root))
        canon_store = Path(os.path.realpath(store_dir(root)))
        if _inside(resolved, canon_store) or _inside(canon_root, resolved):
            raise self._refuse(f"{self.what} {self.noun} overlaps the capture store: {out}")
        if not self.inside_root and _inside(resolved, canon_root):
            raise self._refuse(f"{self.what} {self.noun} must be outside the capture root (beside the salt "
                               f"it invites sharing the whole root): {out}")

    def check(self, out: Path, *, force: bool = False) -> None:
        """Check the output again right before publishing (SPEC 11 steps 3 and 8).

        Raises:
            MCPEvalError: (``refusal``) it is not a directory (a symlink included), is not empty without
                ``force`` or ``replace``, or (``deep``) holds a symlink.
        """
        try:
            st = os.lstat(out)
        except FileNotFoundError:
            return
        if stat.S_ISLNK(st.st_mode):
            raise self._refuse(f"{self.what} refuses a symlinked {self.noun}: {out}")
        if not stat.S_ISDIR(st.st_mode):
            raise self._refuse(f"{self.what} {self.noun} must be a directory: {out}")
        if not (force or self.replace) and os.listdir(out):
            raise self._refuse(f"{self.what} {self.noun} is not empty; pass --force to replace it: {out}")
        if self.deep:
            for top, dirs, files in os.walk(out, followlinks=False):
                for name in (*dirs, *files):
                    if os.path.islink(os.path.join(top, name)):
                        raise self._refuse(f"{self.what} refuses a {self.noun} that holds a symlink: "
                                           f"{os.path.join(top, name)}")

    def build(self, out: Path, *, fill: Callable[[Path], None], force: bool = False) -> None:
        """Build the export privately and publish it at the resolved ``out`` (``build_and_publish``),
        checking the output once more just before the swap.

        Raises:
            MCPEvalError: (``refusal``) the output changed into one the rule refuses; (``failure``)
                staging or publishing failed.  A previous output is untouched either way.
        """
        build_and_publish(out, kind=self.kind, what=self.title, error=self.failure, fill=fill,
                          check=lambda: self.check(out, force=force))


#: ``share``: an envelope, outside the root, empty unless ``--force``.
SHARE = Destination("share", "share", "the share envelope", ReviewError)
#: ``export-issues``: one Markdown file per finding, outside the root, empty unless ``--force``.
ISSUES = Destination("export-issues", "issues", "the issues directory", FindingsError)
#: ``capture-phases``: OUT-DIR, outside the root, replaced (it checks for an earlier capture itself).
PHASES = Destination("capture-phases", "phases", "the phase capture", ProbeError, replace=True)
#: ``export-parquet`` and the engines' ``<root>/calls.parquet``: derived data, replaced on every export,
#: allowed inside the root (outside the store), never holding a symlink.
PARQUET = Destination("export-parquet", "parquet", "the Parquet dataset", JournalError, refusal=UsageError,
                      noun="destination", inside_root=True, replace=True, deep=True)


_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def stage_prefix(kind: str) -> str:
    """The staging name prefix of one export kind: ``.mcpeval-<kind>-``."""
    return f".mcpeval-{kind}-"


def _lock_dir(path: Path) -> int | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def remove_stale_staging(parent: Path, *, kind: str = "share") -> int:
    """Remove staging directories of ``kind`` in ``parent`` whose export died (their lock is free).

    Args:
        parent: the output's parent directory.
        kind: the export kind (``share``, ``parquet``, ...).

    Returns:
        How many were removed (live exports hold their lock and are left alone).
    """
    removed = 0
    try:
        names = os.listdir(parent)
    except OSError:
        return 0
    pattern = re.compile(re.escape(stage_prefix(kind)) + _UUID)
    for name in names:
        if not pattern.fullmatch(name):
            continue
        path = parent / name
        fd = _lock_dir(path)
        if fd is None:
            continue
        try:
            shutil.rmtree(path, ignore_errors=True)
            removed += 1
        finally:
            os.close(fd)
    return removed


class Staging:
    """An owner-only staging directory beside the output, locked while it lives.

    Args:
        parent: the directory to create ``.mcpeval-<kind>-<uuid4>`` in.
        kind: the export kind (names the directory; ``remove_stale_staging`` matches it).
        error: the error class raised (the exporting phase's, e.g. ``ReviewError``).

    Raises:
        MCPEvalError: (``error``) the directory cannot be created or locked.
    """

    def __init__(self, parent: Path, *, kind: str = "share",
                 error: type[MCPEvalError] = MCPEvalError) -> None:
        self.path = parent / f"{stage_prefix(kind)}{uuid.uuid4()}"
        self.kind = kind
        try:
            os.mkdir(self.path, 0o700)
        except OSError as exc:
            raise error(f"cannot create staging directory in {parent}: {exc.strerror}") from None
        os.chmod(self.path, 0o700)
        fd = _lock_dir(self.path)
        if fd is None:
            raise error(f"cannot lock staging directory in {parent}")
        self._fd = fd

    def remove(self) -> None:
        """Delete the staging directory (whatever it holds now) and release its lock."""
        shutil.rmtree(self.path, ignore_errors=True)
        self.release()

    def release(self) -> None:
        """Release the lock (idempotent)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


_UNSUPPORTED = (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP)  # renameat2 or its flag is not available


def _renameat2(src: Path, dst: Path, flags: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    func = libc.renameat2  # AttributeError where libc lacks it
    func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if func(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def exchange(a: Path, b: Path) -> bool:
    """Swap two existing directory entries in one step (``renameat2(RENAME_EXCHANGE)``).

    Returns:
        True when swapped; False where the C library or the filesystem cannot (nothing changed: the
        caller falls back to a rename).

    Raises:
        OSError: any other failure (nothing changed).
    """
    try:
        _renameat2(a, b, _RENAME_EXCHANGE)
    except AttributeError:
        return False
    except OSError as exc:
        if exc.errno in _UNSUPPORTED:
            return False
        raise
    return True


def _publish_fallback(stage: Path, out: Path) -> Path | None:
    backup = None
    if os.path.lexists(out):
        backup = out.parent / f"{stage.name.rsplit('-', 5)[0]}-backup-{uuid.uuid4()}"
        os.rename(out, backup)
    try:
        os.rename(stage, out)
    except OSError:
        if backup is not None:
            os.rename(backup, out)
        raise
    return backup


def publish(stage: Path, out: Path, *, what: str = "the share envelope",
            error: type[MCPEvalError] = MCPEvalError) -> Path | None:
    """Move the staged export to ``out`` atomically.

    Args:
        stage: the complete staging directory.
        out: the output path (absent, or a directory to replace).
        what: how messages name the export. error: the error class raised.

    Returns:
        Where the previous export now lives (to delete), or None when there was none.

    Raises:
        MCPEvalError: (``error``) the rename failed; the previous export is untouched.
    """
    exists = os.path.lexists(out)
    try:
        _renameat2(stage, out, _RENAME_EXCHANGE if exists else _RENAME_NOREPLACE)
        return stage if exists else None
    except AttributeError:
        pass
    except OSError as exc:
        if exc.errno not in _UNSUPPORTED:
            raise error(f"cannot publish {what} at {out}: {exc.strerror}") from None
    try:
        return _publish_fallback(stage, out)
    except OSError as exc:
        raise error(f"cannot publish {what} at {out}: {exc.strerror}") from None


def discard(path: Path | None) -> None:
    """Delete a replaced export after a successful publish (errors ignored: it is never published).

    Args:
        path: what ``publish`` returned.
    """
    if path is not None:
        with contextlib.suppress(OSError):
            shutil.rmtree(path)


def build_and_publish(out: Path, *, kind: str, what: str, error: type[MCPEvalError],
                      fill: Callable[[Path], None], check: Callable[[], None]) -> None:
    """Build a directory privately and publish it at ``out``: the whole cycle of an export.

    Stale staging of ``kind`` beside ``out`` is removed, ``fill(stage)`` writes the files, ``check()``
    re-validates the output just before the swap, and ``publish`` swaps it into place.  Any failure
    (or a refusal raised by ``fill`` or ``check``) removes the staging directory; a previous ``out`` is
    untouched.

    Args:
        out: the output directory.
        kind: the staging prefix (``.mcpeval-<kind>-``).
        what: the output's name in messages.
        error: the error class raised for staging and publishing failures.
        fill: writes the export into the staging directory it is given.
        check: re-validates ``out`` (raises to refuse).

    Raises:
        MCPEvalError: (``error``) the parent cannot be created, staging or publishing failed; whatever
            ``fill`` or ``check`` raise.
    """
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise error(f"cannot create {out.parent}: {exc.strerror}") from None
    remove_stale_staging(out.parent, kind=kind)
    stage = Staging(out.parent, kind=kind, error=error)
    try:
        fill(stage.path)
        check()
        replaced = publish(stage.path, out, what=what, error=error)
    except BaseException:
        stage.remove()
        raise
    stage.release()
    discard(replaced)


def write_new_file(path: Path, text: str, *, force: bool) -> None:
    """Write one generated file (a manifest): created new (``O_EXCL``) unless ``force`` replaces it.

    Raises:
        UsageError: the file exists without ``force``, or cannot be written (path and reason named).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | (os.O_TRUNC if force else os.O_EXCL)
    try:
        fd = os.open(path, flags, 0o644)
    except FileExistsError:
        raise UsageError(f"{path} exists; pass --force to replace it") from None
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
