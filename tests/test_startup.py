"""Start-up: commands load what they need when they need it (issue 20: first useful work within 0.5 s).

Timing lives in ``bench/bench_startup.py``; these tests pin the cause instead, without a clock: when a
``probe``, ``score`` or ``init`` starts its server, and when ``report``, ``diff``, ``explain`` or
``schema`` finish, none of the slow imports (jsonschema's format grammars, pandas, pyarrow) was made.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SLOW = ("jsonschema", "pandas", "pyarrow", "matplotlib")
# Run the real CLI with an audit hook: at the first subprocess spawn (or at exit) write which of the
# slow top-level packages are loaded.
_RUN = r"""
import atexit, json, sys
out = sys.argv.pop(1)
slow = set(sys.argv.pop(1).split(","))
def dump():
    with open(out, "w") as fh:
        json.dump(sorted(m for m in sys.modules if m.split(".")[0] in slow), fh)
def hook(event, args):
    if event == "subprocess.Popen":
        dump()
        sys.addaudithook(lambda e, a: None)
sys.addaudithook(hook)
atexit.register(lambda: None if __import__("os").path.exists(out) else dump())
from mcpeval_nb.cli import run
run()
"""


def loaded(tmp_path: Path, *argv: str) -> list[str]:
    mark = tmp_path / "loaded.json"
    mark.unlink(missing_ok=True)
    subprocess.run(
        [sys.executable, "-c", _RUN, str(mark), ",".join(SLOW), *argv],
        capture_output=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    return list(json.loads(mark.read_text()))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    manifest = tmp_path / "m.json"
    manifest.write_text(
        json.dumps(
            {
                "version": 1,
                "probes": [
                    {
                        "id": "surface",
                        "probe": "discovery-cost",
                        "access": "read_only",
                        "max_tools": 9,
                        "max_schema_bytes": 9999,
                    }
                ],
            }
        )
    )
    report = tmp_path / "r.json"
    report.write_text(
        json.dumps(
            {
                "cases": [],
                "gate": None,
                "generator": {"name": "mcpeval-nb", "version": "0"},
                "manifest_sha256": None,
                "passed": True,
                "readiness": None,
                "readiness_error": None,
                "schema": "mcpeval.probe-report/v2",
                "server": "b",
            }
        )
    )
    return {"manifest": str(manifest), "report": str(report)}


@pytest.mark.parametrize(
    "argv",
    [
        [
            "probe",
            "--server",
            "b",
            "--manifest",
            "{manifest}",
            "--no-journal",
            "--no-history",
            "--",
            "sh",
            "-c",
            "exit 0",
        ],
        ["score", "--server", "b", "--no-history", "--", "sh", "-c", "exit 0"],
        ["init", "--dry-run", "--", "sh", "-c", "exit 0"],
        ["report", "{report}", "--format", "junit"],
        ["diff", "{report}", "{report}", "--format", "markdown"],
        ["explain"],
        ["schema", "budgets"],
        ["schema", "manifest"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_a_command_reaches_its_first_work_without_the_slow_imports(
    tmp_path: Path, files: dict[str, str], argv: list[str]
) -> None:
    args = [a.format(**files) for a in argv]
    assert loaded(tmp_path, *args) == []
