"""``python -m bench [name ...]``: run every ``bench_*`` module (or the named ones) in turn."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    """Run the selected benchmark modules; returns the number that failed."""
    found = pkgutil.iter_modules([str(Path(__file__).parent)])
    names = sorted(m.name for m in found if m.name.startswith("bench_"))
    wanted = [n if n.startswith("bench_") else f"bench_{n}" for n in argv] or names
    failed = 0
    for name in wanted:
        print(f"== {name}", file=sys.stderr, flush=True)
        module = importlib.import_module(f"bench.{name}")
        try:
            failed += bool(module.main())  # a main that returns its exit code (1: a goal missed)
        except SystemExit as exc:
            failed += bool(exc.code)
        except Exception as exc:  # keep going: one broken benchmark must not hide the others
            print(f"{name} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            failed += 1
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
