"""The process entry point: run the command, then leave without a native thread pool's teardown race.

Arrow's and DuckDB's C++ thread pools can still hold a joinable ``std::thread`` while the interpreter
tears down its modules; the process then aborts with "terminate called without an active exception"
(SIGABRT, exit -6) *after* the command finished and printed its result (apache/arrow#34314 and its
relatives; measured here once in 2,740 CI tests, on ``export-parquet`` under load).  A CLI process has
nothing left to do at that point, so ``entry`` does what an orderly exit does for it
(``threading._shutdown``: the thread atexit hooks, then the joins of non-daemon threads; logging's
shutdown; flushing the standard streams) and ends with ``os._exit`` when such a library was loaded.
``run`` keeps raising ``SystemExit`` for callers that run a command in their own process (tests,
embedding).
"""

from __future__ import annotations

import contextlib
import os
import sys

#: Modules whose native thread pools race the interpreter's teardown.
NATIVE_POOLS = ("pyarrow", "duckdb")


def exit_code(code: object) -> int:
    """The status ``sys.exit(code)`` gives: ``None`` is 0, an int itself, anything else is printed
    to stderr and gives 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    with contextlib.suppress(OSError, ValueError):
        print(code, file=sys.stderr)
    return 1


def leave(code: object) -> None:
    """Exit with ``code``; once a native pool was loaded, flush and skip the interpreter's teardown."""
    status = exit_code(code)
    if not any(name in sys.modules for name in NATIVE_POOLS):
        sys.exit(status)
    threading = sys.modules.get("threading")
    if threading is not None:  # the interpreter's own first exit step: its thread atexit hooks (an
        threading._shutdown()  # executor never shut down wakes its idle workers), then the joins
    if "logging" in sys.modules:
        sys.modules["logging"].shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe: the status tells, as an orderly exit's 120 does
            status = status or 120
    os._exit(status)


def entry() -> None:
    """``mcpeval-nb`` and ``python -m mcpeval_nb``: ``cli.run``, then ``leave``."""
    from . import run

    try:
        run()
    except SystemExit as done:
        leave(done.code)
    leave(0)
