"""A bare store-and-forward relay for ``bench_shim``: the shim's frame path without any recording.

``python bench/_relay.py CMD [ARGS...]`` starts CMD and moves newline-delimited frames both ways with the
shim's own ``FrameReader`` and ``write_all`` (same 4 MiB bound, same pipe sizes), one thread per
direction.  The difference between it and the shim is the cost of recording.
"""

from __future__ import annotations

import subprocess
import sys
import threading

from mcpeval_nb.capture.frames import FrameReader, grow_pipe, write_all


def _pump(src: int, dst: int) -> None:
    grow_pipe(src)
    grow_pipe(dst)
    reader = FrameReader(src)
    while (frame := reader.read()) is not None:
        write_all(dst, frame)


def main(argv: list[str]) -> int:
    """Relay between this process's stdin/stdout and the command's; returns its exit code."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert proc.stdin is not None and proc.stdout is not None
    out = threading.Thread(target=_pump, args=(0, proc.stdin.fileno()), daemon=True)
    back = threading.Thread(target=_pump, args=(proc.stdout.fileno(), 1), daemon=True)
    out.start()
    back.start()
    out.join()
    proc.stdin.close()
    back.join()
    return proc.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
