"""SHA-256 of a journal's consumed prefix, fed in order from one background thread; and of a byte range.

Incremental readers remember the digest of the complete-line prefix they consumed (SPEC 6.2), so that a
later refresh can tell an appended journal from a rewritten one.  ``hashlib`` releases the interpreter
lock on large buffers, so hashing a chunk on a helper thread overlaps the conversion of the next one.
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["PrefixDigests", "range_sha256"]

_BLOCK = 1 << 24


def range_sha256(fd: int, start: int, end: int) -> str:
    """SHA-256 (hex) of the bytes ``[start, end)`` of the open file ``fd`` (fewer if it ends first), read
    in 16 MiB blocks with ``pread`` (the descriptor's offset is not moved)."""
    digest, pos = hashlib.sha256(), start
    while pos < end:
        block = os.pread(fd, min(_BLOCK, end - pos), pos)
        if not block:
            break
        digest.update(block)
        pos += len(block)
    return digest.hexdigest()


class PrefixDigests:
    """Feeds prefix digests in order from one background thread; small updates run inline.

    The thread starts on the first large update; ``close`` waits for the last update and stops it.
    """

    _ASYNC = 1 << 20

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._last: Future[None] | None = None

    def update(self, digest: hashlib._Hash, data: memoryview | bytes) -> None:
        """Feed ``data`` to ``digest`` after every earlier update (``data`` must stay unchanged)."""
        if len(data) < self._ASYNC:
            self.sync()
            digest.update(data)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcpeval-digest")
        self._last = self._pool.submit(digest.update, data)

    def sync(self) -> None:
        """Wait until every update so far has been applied."""
        if self._last is not None:
            self._last.result()
            self._last = None

    def close(self) -> None:
        """Wait for the last update and stop the thread."""
        try:
            self.sync()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
