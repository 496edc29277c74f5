"""The protocol layer over stdio: newline-delimited JSON-RPC on a pair of byte streams, both eras.

The same ``rpc.handle_body`` answers each line as it answers an HTTP body, with no headers to check
(``headers=None``): a request gets one answer line, a notification none, a line that is not JSON a
-32700 parse error.  Lines are bounded like every stdio frame of the package (4 MiB including the
newline): a longer line is read to its end, dropped and answered with -32600, never buffered whole.
Requests are answered one after another, in arrival order.  Nothing is logged.
"""

from __future__ import annotations

from typing import BinaryIO

from ..limits import MAX_FRAME_BYTES
from .rpc import Backend, handle_body

__all__ = ["OVERSIZED", "serve_stdio"]

#: The answer to a line past the frame bound (its id cannot be read without buffering it).
OVERSIZED = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"frame exceeds 4 MiB"}}'


def _lines(stream: BinaryIO) -> tuple[bytes | None, bool]:
    """The next line without its newline (None at the end) and whether it was past the bound."""
    line = stream.readline(MAX_FRAME_BYTES)
    if not line:
        return None, False
    if line.endswith(b"\n") or len(line) < MAX_FRAME_BYTES:
        return line.rstrip(b"\r\n"), False
    while (rest := stream.readline(MAX_FRAME_BYTES)) and not rest.endswith(b"\n"):
        pass  # drain the oversized line without keeping it
    return b"", True


def serve_stdio(backend: Backend, *, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Answer JSON-RPC lines from ``stdin`` on ``stdout`` until ``stdin`` ends.

    Args:
        backend: what answers ``tools/list`` and ``tools/call``.
        stdin / stdout: binary streams (a process's standard streams, or pipes in tests).

    Returns:
        0 when ``stdin`` ended (or ``stdout`` closed).
    """
    while True:
        line, oversized = _lines(stdin)
        if line is None:
            return 0
        if oversized:
            answer: bytes | None = OVERSIZED
        elif not line.strip():
            continue
        else:
            status, body = handle_body(line, backend, headers=None)
            answer = None if status == 202 else body
        if answer is not None:
            try:
                stdout.write(answer + b"\n")
                stdout.flush()
            except (BrokenPipeError, ValueError):
                return 0
