"""The catalog helper process ``CatalogWorker`` starts (``python -m mcpeval_nb.capture.catalog_helper``):
it reads completed listings from stdin, one JSON line each, builds their catalog records exactly as the
stdio shim's recorder does (``CatalogWatcher.build``) and appends them with the journal writer.

Apart from ``catalog_worker`` (the parent's side, which ``catalog`` uses), so that no module of the two
imports the other back.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

from ..errors import MCPEvalError
from ..journal import append_record
from ..root import load_salt
from .catalog import CatalogWatcher, recorded_names

__all__ = ["main"]


def _warn(message: str) -> None:
    with contextlib.suppress(OSError):
        os.write(2, f"mcpeval-nb capture: {message}\n".encode())


_ACK_FD = [1]


def _ack(mark: bytes) -> None:
    with contextlib.suppress(OSError):
        os.write(_ACK_FD[0], mark)


def main(argv: list[str]) -> int:
    """The helper: read listings from stdin, append one catalog record each and acknowledge it on stdout
    (``+`` journaled, ``-`` lost, ``s`` once ready); exit 1 if one was lost.

    Not niced: a helper starved by a loaded machine would fall behind the shim it records for (the
    recorder fork is not niced for the same reason); the parent waits for it while it makes progress.
    """
    root, server, session, capture_id = Path(argv[0]), argv[1], argv[2], argv[3]
    watcher = CatalogWatcher(server=server, session=session, salt=load_salt(root),
                             known_names=lambda: recorded_names(root), capture_id=capture_id)
    lost = 0
    # The acknowledgements own the real stdout; anything else printed to stdout goes to stderr.
    _ACK_FD[0] = os.dup(1)
    os.dup2(2, 1)
    _ack(b"s")
    for line in sys.stdin.buffer:
        try:
            listing = json.loads(line)
            record = watcher.build(listing["seq"], listing["complete"], listing["entries"], ts=listing["ts"])
            append_record(root, record)
        except (MCPEvalError, ValueError, KeyError, TypeError) as exc:
            lost += 1
            reason = str(exc) if isinstance(exc, MCPEvalError) else type(exc).__name__
            _warn(f"a tool listing was not journaled: {reason}")
            _ack(b"-")
        else:
            _ack(b"+")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
