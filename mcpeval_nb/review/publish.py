"""Where a share envelope goes: output validation, owner-only staging, atomic publish (SPEC 11).

The output is resolved without following a symlink at its own path (the nearest existing ancestor is
canonicalised and the missing components re-appended) and must not overlap the capture root.  Staging
happens beside the output in ``.mcpeval-share-<uuid4>`` (mode 0700), created non-recursively and held
under an exclusive ``flock`` for the whole export, so that a later export can tell a stale staging
directory (left by a killed export: the lock died with it) from a live one and remove only the stale
ones; they are never published.  Publishing swaps the staging directory and an existing output in one
``renameat2(RENAME_EXCHANGE)`` (a fresh output uses ``RENAME_NOREPLACE``), so at every instant the output
is either the complete previous envelope or the complete new one.  Where the kernel or filesystem lacks
``renameat2`` the SPEC's backup-rename-restore sequence is used.
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
from pathlib import Path

from ..errors import ReviewError, ShareOutputError

__all__ = ["Staging", "publish", "remove_stale_staging", "resolve_output"]

STAGE_PREFIX = ".mcpeval-share-"
_STAGE_RE = re.compile(r"\.mcpeval-share-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100




def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def resolve_output(dest: str | os.PathLike[str], *, root: Path, force: bool, what: str = "share") -> Path:
    """Resolve and validate the output directory (SPEC 11 steps 2-3); nothing is created.

    The output may not be inside the store, and the capture root may not be inside the output.
    ``what`` names the command in messages (``share``, ``export-issues``).

    Returns:
        The absolute output path with its existing part canonicalised.

    Raises:
        ShareOutputError: a symlinked output, an overlap with the capture root, an output that is not a
            directory, or a non-empty one without ``force``.
    """
    out = Path(os.path.abspath(os.fspath(dest)))
    if out.is_symlink():
        raise ShareOutputError(f"{what} refuses a symlinked output: {out}")
    missing: list[str] = []
    anchor = out
    while not os.path.lexists(anchor) and anchor != anchor.parent:
        missing.append(anchor.name)
        anchor = anchor.parent
    resolved = Path(os.path.realpath(anchor)).joinpath(*reversed(missing))
    canon_root = Path(os.path.realpath(root))
    canon_store = Path(os.path.realpath(root / "store"))
    if _inside(resolved, canon_store) or _inside(canon_root, resolved):
        raise ShareOutputError(f"{what} output overlaps the capture store: {out}")
    check_output(resolved, force=force, what=what)
    return resolved


def check_output(out: Path, *, force: bool, what: str = "share") -> None:
    """Re-validate the output right before publishing (SPEC 11 step 3 and 8).

    Args:
        out: the resolved output path.
        force: a non-empty existing output may be replaced.
        what: the command named in messages.

    Raises:
        ShareOutputError: the output is not a directory (a symlink included) or, without ``force``,
            not empty.
    """
    try:
        st = os.lstat(out)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        raise ShareOutputError(f"{what} output must be a directory, not a symlink: {out}")
    if not force and os.listdir(out):
        raise ShareOutputError(f"{what} output is not empty; pass --force to replace it: {out}")


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


def remove_stale_staging(parent: Path) -> int:
    """Remove staging directories in ``parent`` whose export died (their lock is free).

    Args:
        parent: the output's parent directory.

    Returns:
        How many were removed (live exports hold their lock and are left alone).
    """
    removed = 0
    try:
        names = os.listdir(parent)
    except OSError:
        return 0
    for name in names:
        if not _STAGE_RE.fullmatch(name):
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
        parent: the directory to create ``.mcpeval-share-<uuid4>`` in.

    Raises:
        ReviewError: the directory cannot be created or locked.
    """

    def __init__(self, parent: Path) -> None:
        self.path = parent / f"{STAGE_PREFIX}{uuid.uuid4()}"
        try:
            os.mkdir(self.path, 0o700)
        except OSError as exc:
            raise ReviewError(f"cannot create staging directory in {parent}: {exc.strerror}") from None
        os.chmod(self.path, 0o700)
        fd = _lock_dir(self.path)
        if fd is None:
            raise ReviewError(f"cannot lock staging directory in {parent}")
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


def _renameat2(src: Path, dst: Path, flags: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    func = libc.renameat2  # AttributeError where libc lacks it
    func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if func(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _publish_fallback(stage: Path, out: Path) -> Path | None:
    backup = None
    if os.path.lexists(out):
        backup = out.parent / f"{STAGE_PREFIX}backup-{uuid.uuid4()}"
        os.rename(out, backup)
    try:
        os.rename(stage, out)
    except OSError:
        if backup is not None:
            os.rename(backup, out)
        raise
    return backup


def publish(stage: Path, out: Path) -> Path | None:
    """Move the staged envelope to ``out`` atomically.

    Args:
        stage: the complete staging directory.
        out: the output path (absent, or a directory to replace).

    Returns:
        Where the previous envelope now lives (to delete), or None when there was none.

    Raises:
        ReviewError: the rename failed; the previous envelope is untouched.
    """
    exists = os.path.lexists(out)
    try:
        _renameat2(stage, out, _RENAME_EXCHANGE if exists else _RENAME_NOREPLACE)
        return stage if exists else None
    except AttributeError:
        pass
    except OSError as exc:
        if exc.errno not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
            raise ReviewError(f"cannot publish the share envelope at {out}: {exc.strerror}") from None
    try:
        return _publish_fallback(stage, out)
    except OSError as exc:
        raise ReviewError(f"cannot publish the share envelope at {out}: {exc.strerror}") from None


def discard(path: Path | None) -> None:
    """Delete a replaced envelope after a successful publish (errors ignored: it is never published).

    Args:
        path: what ``publish`` returned.
    """
    if path is not None:
        with contextlib.suppress(OSError):
            shutil.rmtree(path)
