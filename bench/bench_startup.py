"""Benchmark: how soon each ``mcpeval-nb`` command reaches its first useful work, against ``python -c pass``.

Run ``python -m bench.bench_startup [--rounds N] [--only CMD ...]``.  Each command runs as a fresh
process (the real CLI, ``mcpeval_nb.cli.run``) with an audit hook (PEP 578) installed first, which
writes the wall-clock time of the command's *first useful work* to a file and lets the command go on:

* a command that starts a server (``probe``, ``score``, ``init``, ``shim``): the ``subprocess.Popen``
  of the server command (a stub ``sh -c 'exit 0'``: the command then ends on a closed transport);
* ``compare``: its first connection to the first endpoint (a refused loopback port);
* ``shim-http``: binding its listening socket (the process is then stopped);
* commands that read the capture root (``summary``, ``export-parquet``, ``gate``, ``doctor``,
  ``share``, ``trends``) or write it (``annotate``): opening the first journal file;
* ``report``, ``diff``, ``explain``, ``schema``: the whole run, start to exit (their work is printing);
* ``import widgets``, ``import charts``: ``python -c "import mcpeval_nb.widgets"`` (and ``.charts``),
  start to exit: a notebook's first import, which loads neither matplotlib nor pandas (goal 0.5 s);
  ``ExplorerPanel``: ``from mcpeval_nb.widgets import ExplorerPanel`` (ipywidgets, pyarrow and pandas;
  no goal, shown for scale).

``shim`` is the one that matters most: it sits in front of every server start a client makes.  ``bare
Popen`` (no goal) is its floor: ``python -c`` that imports ``subprocess`` and starts the same stub, the
least any Python shim can do before its server runs.

The baseline is ``python -c pass`` (start to exit) measured in the same run, rounds interleaved with
the commands so machine load falls on all alike.  The package's bytecode is compiled first, as ``pip``
does when it installs a wheel: with ``PYTHONDONTWRITEBYTECODE`` set (as on CI) every run would
otherwise compile every module it imports, which is not what a user's start-up costs.  Printed per
command: the median time to first useful work (s) and its ratio to the baseline's wall time; the median
CPU time the process spent up to that work (``time.process_time`` at the event, so a loaded machine's
waiting is not counted) and its ratio to the baseline's (``process_time`` at the end of ``python -c``);
the median time to exit; and whether it met the goal (issue 20: first useful work within 0.5 s).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_S = 0.5

# The audit hook: record the first matching event's time in $BENCH_MARK, once.  It is written to be
# cheap (no imports beyond sys/time/os, a string test per event) so it costs the command nothing.
_HOOK = r"""
import os, sys, time
_mark, _want, _done, _pid = os.environ["BENCH_MARK"], os.environ["BENCH_EVENT"], [False], os.getpid()
def _hook(event, args):
    if _done[0] or os.getpid() != _pid:  # the command's own process only (not a forked recorder)
        return
    hit = False
    if _want == "spawn" and event == "subprocess.Popen":
        hit = True
    elif _want == "connect" and event == "socket.connect":
        hit = True
    elif _want == "bind" and event == "socket.bind":
        hit = True
    elif _want == "journal" and event == "open" and isinstance(args[0], str) and args[0].endswith(".jsonl"):
        hit = True
    if hit:
        _done[0] = True
        with open(_mark, "w") as fh:
            fh.write(f"{time.time()!r} {time.process_time()!r}")
sys.addaudithook(_hook)
"""
_CLI = _HOOK + "from mcpeval_nb.cli import run\nrun()\n"
#: The floor of any Python shim: an interpreter that imports subprocess and starts the server.
_BARE = _HOOK + "import subprocess, sys\nsys.exit(subprocess.Popen(sys.argv[1:]).wait())\n"


def _scenarios(work: Path) -> dict[str, tuple[str, list[str]]]:
    """command name -> (event, argv after ``mcpeval-nb``), over small fixture files in ``work``."""
    stub = ["sh", "-c", "exit 0"]
    root = str(work / "root")
    files = _fixtures(work)
    return {
        "probe": ("spawn", ["probe", "--server", "b", "--manifest", files["manifest"], "--no-journal",
                            "--no-history", "--root", root, "--", *stub]),
        "score": ("spawn", ["score", "--server", "b", "--no-history", "--root", root, "--", *stub]),
        "init": ("spawn", ["init", "--dry-run", "--", *stub]),
        "compare": ("connect", ["compare", "--endpoint", "a=http://127.0.0.1:1/mcp", "--", *stub]),
        "shim": ("spawn", ["shim", "--server", "b", "--root", root, "--", *stub]),
        "bare Popen": ("spawn", ["<bare>", *stub]),
        "shim-http": ("bind", ["shim-http", "--server", "b", "--listen", "127.0.0.1:0", "--upstream",
                               "http://127.0.0.1:1/mcp", "--root", root]),
        "annotate": ("journal", ["annotate", "--session", files["session"], "--seq", "1", "--kind",
                                 "workaround", "--note", "bench", "--root", root]),
        "summary": ("journal", ["summary", "--root", root]),
        "export-parquet": ("journal", ["export-parquet", "--root", root, "--dest", str(work / "pq")]),
        "gate": ("journal", ["gate", "--budgets", files["budgets"], "--root", root]),
        "doctor": ("journal", ["doctor", "--root", root]),
        "share": ("journal", ["share", "--root", root, "--dir", str(work / "share"), "--force"]),
        "trends": ("journal", ["trends", "--root", root]),
        "report": ("exit", ["report", files["report"]]),
        "diff": ("exit", ["diff", files["report"], files["report"], "--format", "markdown"]),
        "explain": ("exit", ["explain"]),
        "schema": ("exit", ["schema", "budgets"]),
        "import widgets": ("import", ["mcpeval_nb.widgets"]),
        "import charts": ("import", ["mcpeval_nb.charts"]),
        "ExplorerPanel": ("import", ["mcpeval_nb.widgets", "ExplorerPanel"]),
    }

#: Scenarios shown for scale only (no goal).
NO_GOAL = ("ExplorerPanel", "bare Popen")


def _fixtures(work: Path) -> dict[str, str]:
    from mcpeval_nb.testing import synthetic_store

    synthetic_store(work / "root", calls=300, servers=1, tools=3, days=2, seed=7)
    first_call = next(iter(sorted((work / "root" / "store").glob("calls-*.jsonl")))).open().readline()
    manifest = work / "m.json"
    manifest.write_text(json.dumps({"version": 1, "probes": [
        {"id": "surface", "probe": "discovery-cost", "access": "read_only", "max_tools": 10,
         "max_schema_bytes": 10000}]}))
    report = work / "r.json"
    report.write_text(json.dumps({
        "cases": [{"attempts": 1, "detail": None, "first_failure": None, "hint": None, "id": "surface",
                   "measurements": {"tool_count": 3}, "passed": True, "probe": "discovery-cost",
                   "reason": None, "tool": None}],
        "gate": {"passed": 1, "total": 1}, "generator": {"name": "mcpeval-nb", "version": "0"},
        "manifest_sha256": "ab" * 32, "passed": True, "readiness": None, "readiness_error": None,
        "schema": "mcpeval.probe-report/v2", "server": "b"}))
    budgets = work / "budgets.json"
    budgets.write_text(json.dumps({"version": 1, "budgets": [{"server": "*", "tool": "*", "p95_ms": 5000}]}))
    return {"manifest": str(manifest), "report": str(report), "budgets": str(budgets),
            "session": json.loads(first_call)["session"]}  # annotate names a recorded call (seq 1)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _once(event: str, argv: list[str], mark: Path) -> tuple[float, float, float]:
    """(seconds to first useful work, seconds to exit, CPU seconds to first useful work) of one run.

    The CPU time is the process's own (``time.process_time`` at the event: a forked recorder and the
    server are not counted); for ``exit`` and ``import`` scenarios, the whole run's.
    """
    mark.unlink(missing_ok=True)
    env = {**os.environ, "BENCH_MARK": str(mark), "BENCH_EVENT": event, "MPLBACKEND": "Agg"}
    cpu0 = _children_cpu()
    if event == "import":
        code = f"import {argv[0]}" if len(argv) == 1 else f"from {argv[0]} import {argv[1]}"
        start = time.time()
        subprocess.run([sys.executable, "-c", code], env=env, check=True, stdin=subprocess.DEVNULL)
        took = time.time() - start
        return took, took, _children_cpu() - cpu0
    start = time.time()
    code, argv = (_BARE, argv[1:]) if argv[:1] == ["<bare>"] else (_CLI, argv)
    proc = subprocess.Popen([sys.executable, "-c", code, *argv], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if event == "bind":  # a server: stop it once it listens
        deadline = start + 20
        while not mark.exists() and time.time() < deadline and proc.poll() is None:
            time.sleep(0.002)
        proc.terminate()
    proc.wait(timeout=60)
    end = time.time()
    if event == "exit":
        return end - start, end - start, _children_cpu() - cpu0
    if not mark.exists():
        raise RuntimeError(f"no first-useful-work event ({event}) from: mcpeval-nb {' '.join(argv[:1])}")
    when, cpu = (float(x) for x in mark.read_text().split())
    return when - start, end - start, cpu


def _compile_package() -> None:
    """Write the package's bytecode caches (an installed wheel has them; an editable checkout may not)."""
    import compileall

    import mcpeval_nb

    compileall.compile_dir(str(Path(mcpeval_nb.__file__).parent), quiet=1)


def _baseline() -> tuple[float, float]:
    """(wall seconds of ``python -c pass``, CPU seconds of its start: ``time.process_time`` at its end,
    measured the way the commands' first work is)."""
    start = time.time()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    wall = time.time() - start
    out = subprocess.run([sys.executable, "-c", "import time; print(repr(time.process_time()))"], check=True,
                         capture_output=True, text=True).stdout
    return wall, float(out)


def main(argv: list[str] | None = None) -> None:
    """Measure every command (or ``--only`` ones) ``--rounds`` times and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args(argv)
    _compile_package()
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        work = Path(tmp)
        scenarios = _scenarios(work)
        names = [n for n in scenarios if args.only is None or n in args.only]
        base: list[tuple[float, float]] = []
        runs: dict[str, list[tuple[float, float, float]]] = {n: [] for n in names}
        for done_rounds in range(args.rounds):
            base.append(_baseline())
            for name in names:
                event, cmd = scenarios[name]
                runs[name].append(_once(event, cmd, work / "mark"))
            print(f"round {done_rounds + 1} of {args.rounds} done", file=sys.stderr, flush=True)
        b, bcpu = (statistics.median(x[i] for x in base) for i in (0, 1))
        print(f"python -c pass: {b:.3f} s, CPU {bcpu * 1000:.1f} ms (medians of {args.rounds})")
        print(f"{'command':<16}{'first work s':>13}{'x pass':>8}{'CPU ms':>8}{'x pass':>8}{'exit s':>8}"
              f"  goal {GOAL_S} s")
        failed = 0
        for name in names:
            f, t, c = (statistics.median(x[i] for x in runs[name]) for i in (0, 1, 2))
            ok = f <= GOAL_S or name in NO_GOAL
            failed += not ok
            verdict = "-" if name in NO_GOAL else ("met" if ok else "MISSED")
            print(f"{name:<16}{f:>13.3f}{f / b:>8.1f}{c * 1000:>8.1f}{c / bcpu:>8.1f}{t:>8.3f}  {verdict}")
        if failed:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
