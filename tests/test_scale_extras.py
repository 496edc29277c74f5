"""Without an optional extra, its entry points say which extra to install (one line, exit 2 at the CLI).

The modules are hidden by a meta-path finder in a child interpreter, not uninstalled."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mcpeval_nb.testing.synthetic import synthetic_store
from tests import waiting

_BLOCK = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {hidden!r}:
            raise ImportError("hidden for the test: " + name)
        return None
sys.meta_path.insert(0, Block())
"""


def run(hidden: set[str], code: str) -> subprocess.CompletedProcess[str]:
    return waiting.run([sys.executable, "-c", _BLOCK.format(hidden=hidden) + code], capture_output=True,
                       text=True, stall_s=120)


@pytest.mark.parametrize(("hidden", "call", "extra"), [
    ({"duckdb"}, "mcpeval_nb.duckdb_engine(root)", "scale"),
    ({"dask", "distributed"}, "mcpeval_nb.dask_engine(root)", "scale"),
    ({"opentelemetry"}, "mcpeval_nb.export_otlp(root, endpoint='http://127.0.0.1:9')", "otel"),
])
def test_a_missing_extra_is_a_usage_error_naming_it(root: Path, hidden: set[str], call: str,
                                                     extra: str) -> None:
    synthetic_store(root, calls=20, days=1)
    proc = run(hidden, f"""
import mcpeval_nb
root = {str(root)!r}
try:
    {call}
except mcpeval_nb.MissingExtra as exc:
    print(exc.extra, exc.exit_code, exc)
""")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[:2] == [extra, "2"]
    assert f"pip install 'mcpeval-nb[{extra}]'" in proc.stdout


def test_the_cli_without_the_otel_extra_prints_one_line_and_exits_2(root: Path) -> None:
    synthetic_store(root, calls=20, days=1)
    proc = run({"opentelemetry"}, f"""
import sys
from mcpeval_nb.cli import run
sys.argv = ["mcpeval-nb", "export-otlp", "--root", {str(root)!r}, "--endpoint", "http://127.0.0.1:9"]
run()
""")
    assert proc.returncode == 2
    assert proc.stderr == ("mcpeval-nb: OTLP export needs the optional 'otel' extra: "
                           "pip install 'mcpeval-nb[otel]'\n")


def test_the_package_and_its_other_commands_import_without_the_extras(root: Path) -> None:
    proc = run({"duckdb", "dask", "distributed", "opentelemetry"}, f"""
import mcpeval_nb
from mcpeval_nb.cli import main
print(mcpeval_nb.open_store({str(root)!r}).calls.num_rows)
import mcpeval_nb.scale
""")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0"
