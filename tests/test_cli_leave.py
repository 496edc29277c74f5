"""The process entry point leaves without the interpreter's teardown once Arrow or DuckDB is loaded
(their C++ pools can abort a finished command with SIGABRT there), and still does what an orderly exit
does: every byte printed reaches the pipe, non-daemon threads finish, logging is flushed, the exit code
is the command's."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .governance_support import seed

#: Runs the real entry point with an atexit hook that says whether the interpreter's teardown ran.
_RUN = """
{preload}
import atexit, sys
atexit.register(lambda: print("TEARDOWN-RAN", file=sys.stderr))
sys.argv = ["mcpeval-nb", *{argv!r}]
from mcpeval_nb.cli.leave import entry
entry()
"""


def _entry(argv: list[str], preload: str = "") -> subprocess.CompletedProcess[str]:
    script = _RUN.format(argv=argv, preload=preload)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)


def test_a_command_that_loaded_arrow_skips_the_teardown_and_prints_everything(tmp_path: Path) -> None:
    root = tmp_path / "root"
    seed(root, {"s-1": "alpha", "s-2": "beta"}, 40)
    done = _entry(["export-parquet", "--root", str(root), "--dest", str(tmp_path / "pq")])
    assert done.returncode == 0, done.stderr
    assert "TEARDOWN-RAN" not in done.stderr
    assert done.stdout.startswith("wrote ") and "(80 calls)" in done.stdout and done.stdout.endswith("\n")


def test_an_error_after_arrow_loaded_keeps_its_exit_code_and_its_line(tmp_path: Path) -> None:
    done = _entry(["summary", "--root", str(tmp_path / "missing")], preload="import pyarrow")
    assert done.returncode == 2
    missing = tmp_path / "missing"
    assert done.stderr == (f"mcpeval-nb: no capture root at {missing}: nothing has been recorded there "
                           "(check --root or MCPEVAL_HOME)\n")


def test_a_command_without_native_pools_exits_the_orderly_way() -> None:
    done = _entry(["--version"])
    assert done.returncode == 0
    assert done.stdout.startswith("mcpeval-nb ")
    assert "TEARDOWN-RAN" in done.stderr


@pytest.mark.parametrize(("code", "status", "stderr"), [(None, 0, ""), (4, 4, ""), ("bye", 1, "bye\n")])
def test_leave_flushes_joins_threads_wakes_idle_executors_and_keeps_the_status(
        tmp_path: Path, code: object, status: int, stderr: str) -> None:
    marker = tmp_path / "thread-finished"
    script = textwrap.dedent(f"""
        import logging, sys, threading
        import pyarrow
        from mcpeval_nb.cli.leave import leave
        go = threading.Event()
        def late():
            go.wait()
            open({str(marker)!r}, "w").write("done")
        threading.Thread(target=late).start()
        from concurrent.futures import ThreadPoolExecutor
        pool = ThreadPoolExecutor(max_workers=1)  # held and never shut down: its worker idles
        pool.submit(int).result()
        handler = logging.StreamHandler(sys.stdout)
        logging.getLogger("t").addHandler(handler)
        logging.getLogger("t").warning("logged")
        sys.stdout.write("x" * 1_000_000)  # more than any pipe buffer: written at the flush
        go.set()
        leave({code!r})
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == status
    assert done.stderr == stderr
    assert done.stdout == "logged\n" + "x" * 1_000_000
    assert marker.read_text() == "done"
