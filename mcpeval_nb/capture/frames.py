"""Bounded newline-delimited frames on raw file descriptors (SPEC 2.6, 14).

``FrameReader`` returns one frame at a time, newline included, and never holds more than the bound of
one frame: a line that reaches 4 MiB (newline included) without ending is refused with
``FrameTooLarge`` before any further byte of it is read; ``rest`` then streams the remainder of that
frame in chunks, for a caller that forwards it rather than refusing it.  Reads wait in ``poll`` on the
data descriptor and a wake-up pipe, so another thread can stop a reader that is blocked on an idle peer.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import struct
import termios
from collections.abc import Iterator

from ..limits import MAX_FRAME_BYTES

TYPE_CHECKING = False  # typing's, without importing typing: the shim starts its server first
if TYPE_CHECKING:
    from typing import IO

__all__ = ["FrameReader", "FrameTooLarge", "WakePipe", "grow_pipe", "pending_bytes", "write_all"]

_CHUNK = 1024 * 1024
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)


def grow_pipe(fd: int, size: int = _CHUNK) -> None:
    """Ask for a larger pipe buffer (fewer wake-ups per large frame); ignored where not possible."""
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, _F_SETPIPE_SZ, size)


def pending_bytes(stream: IO[bytes]) -> int:
    """Bytes waiting in a pipe to be read (0 once the stream is closed or where not known)."""
    try:
        return int(struct.unpack("i", fcntl.ioctl(stream.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0])
    except (OSError, ValueError):
        return 0


class FrameTooLarge(Exception):
    """A frame reached the bound before its newline; nothing of it was returned or forwarded."""


class WakePipe:
    """A self-pipe that makes every ``FrameReader`` sharing it return None from a blocked read."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.write_fd, False)

    def wake(self) -> None:
        """Wake every reader waiting on this pipe (idempotent)."""
        with contextlib.suppress(OSError):
            os.write(self.write_fd, b"x")

    def drain(self) -> None:
        """Consume pending wake-ups (for a pipe polled repeatedly rather than once)."""
        os.set_blocking(self.read_fd, False)
        with contextlib.suppress(OSError):
            while os.read(self.read_fd, 4096):
                pass

    def close(self) -> None:
        """Close both ends."""
        for fd in (self.read_fd, self.write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


class FrameReader:
    """Read newline-delimited frames from ``fd`` with an exact per-frame bound.

    Args:
        fd: the descriptor to read (a pipe, a file or a terminal).
        wake: a wake-up pipe; once woken, ``read`` returns None.
        limit: the largest frame in bytes, newline included.
    """

    def __init__(self, fd: int, *, wake: WakePipe | None = None, limit: int = MAX_FRAME_BYTES) -> None:
        self.fd = fd
        self.limit = limit
        self._buf = bytearray()
        self._chunk_buf = bytearray(_CHUNK)
        self._chunk = memoryview(self._chunk_buf)
        self._scan = 0
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN | select.POLLPRI)
        self._wake_fd = None if wake is None else wake.read_fd
        if self._wake_fd is not None:
            self._poll.register(self._wake_fd, select.POLLIN)

    def _readable(self) -> bool:
        while True:
            events = self._poll.poll()
            if any(fd == self._wake_fd for fd, _ in events):
                return False
            if events:
                return True

    def rest(self) -> Iterator[bytes | bytearray]:
        """After ``FrameTooLarge``: the bytes of the frame read so far, then the rest of it in chunks.

        The last chunk ends with the frame's newline (or the input ended first); bytes after the newline
        stay for the next ``read``.  Memory stays within the bound plus one read chunk.

        Yields:
            The frame's bytes in order.

        Raises:
            OSError: the descriptor failed.
        """
        head, self._buf, self._scan = self._buf, bytearray(), 0  # handed over, not copied
        yield head
        while self._readable():
            count = os.readv(self.fd, [self._chunk])
            if not count:
                return
            view = self._chunk[:count]
            end = self._chunk_buf.find(b"\n", 0, count)
            if end >= 0:
                self._buf += view[end + 1:]
                yield bytes(view[:end + 1])
                return
            yield bytes(view)

    def read(self) -> bytes | None:
        """Return the next frame (newline included; a final unterminated line as is), or None.

        Returns:
            The frame bytes, or None at end of input or after a wake-up.

        Raises:
            FrameTooLarge: the current line reached ``limit`` bytes without a newline.
            OSError: the descriptor failed.
        """
        while True:
            end = self._buf.find(b"\n", self._scan)
            if end >= 0:
                with memoryview(self._buf) as view:
                    frame = bytes(view[: end + 1])
                del self._buf[: end + 1]
                self._scan = 0
                return frame
            self._scan = len(self._buf)
            if len(self._buf) >= self.limit:
                raise FrameTooLarge()
            if not self._readable():
                return None
            count = os.readv(self.fd, [self._chunk[: min(_CHUNK, self.limit - len(self._buf))]])
            if not count:
                if not self._buf:
                    return None
                frame = bytes(self._buf)
                self._buf.clear()
                self._scan = 0
                return frame
            self._buf += self._chunk[:count]


def write_all(fd: int, data: bytes | bytearray) -> None:
    """Write every byte of ``data`` to a blocking descriptor.

    Raises:
        OSError: the peer is gone (``BrokenPipeError``) or the write failed.
    """
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
