"""Advisory whole-file locks on the journal file itself (SPEC 6.2).

``flock`` locks belong to the open file description, interoperate with the Rust tool (which locks the
same files) and survive other descriptors of the same file being closed.  Waits have a deadline.
"""

from __future__ import annotations

import fcntl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import LockTimeout
from ..limits import LOCK_TIMEOUT_S

__all__ = ["flocked"]


@contextmanager
def flocked(fd: int, path: Path | str, *, exclusive: bool, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold a shared or exclusive ``flock`` on ``fd`` for the ``with`` block.

    Args:
        fd: an open descriptor of the journal file.
        path: the file's path, for the timeout message.
        exclusive: True for writers, False for readers.
        timeout: seconds to wait before raising.

    Raises:
        LockTimeout: the lock was not acquired before the deadline.
    """
    op = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    deadline = time.monotonic() + timeout
    delay = 0.0005
    while True:
        try:
            fcntl.flock(fd, op | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockTimeout(path, "exclusive" if exclusive else "shared", timeout) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.02)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
