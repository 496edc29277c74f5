"""The fingerprint salt: ``<root>/.salt``, 32 bytes, created race-free once and never overwritten (SPEC 1)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from ..errors import SaltError
from .layout import SALT, salt_path

__all__ = ["SALT_BYTES", "read_salt"]

SALT_BYTES = 32


def _read(path: Path) -> bytes | None:
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


def _create(root: Path, path: Path) -> None:
    """Write a 0600 temp file, fsync it and hard-link it into place (losing a race is fine)."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SaltError(f"cannot create capture root {root}: {exc.strerror}") from None
    import uuid  # here: creating a salt is rare, and the shim reads one before its server starts

    secret = uuid.uuid4().bytes + uuid.uuid4().bytes  # SPEC 1: two uuid4s, version nibbles fixed
    tmp = root / f"{SALT}.tmp-{uuid.uuid4()}"
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


def read_salt(root: Path, *, create: bool = True) -> bytes:
    """The root's 32-byte salt, created race-free if absent: a process that loses the race reads the
    winner's salt, so every process ends up with the on-disk bytes.

    Raises:
        SaltError: the salt has the wrong size or cannot be read or created (it is never overwritten).
    """
    path = salt_path(root)
    existing = _read(path)
    if existing is not None or not create:
        if existing is None:
            raise SaltError(f"no salt file at {path}")
        return existing
    _create(root, path)
    salt = _read(path)
    if salt is None:
        raise SaltError(f"salt file at {path} vanished during creation")
    return salt
