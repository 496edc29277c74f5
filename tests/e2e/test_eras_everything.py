"""The npm legacy peer (server-everything, 2025-11-25) and the conformance suite's reference server on both
eras: the era matrix says which eras each serves, and auto finds the right one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import mcpeval_nb as me
from mcpeval_nb.transport import HttpTarget, StdioTarget
from tests.e2e.conformance_support import reference_server
from tests.e2e.conftest import everything_command

OPTIONS = me.BatteryOptions(history=False)


def test_server_everything_is_a_legacy_only_server_under_every_command(tmp_path: Path) -> None:
    target = StdioTarget(tuple(everything_command("stdio")))
    matrix = me.era_matrix(target, server="everything", options=OPTIONS)
    assert matrix.serves == {"legacy": True, "modern": False} and matrix.exit_code == 0
    auto = matrix.column("auto")
    assert auto.era == "legacy" and auto.report is not None and auto.report.readiness is not None
    assert auto.report.readiness.standard == "mcpeval-standard/2"
    init = subprocess.run([sys.executable, "-m", "mcpeval_nb", "init", "--dry-run", "--",
                           *everything_command("stdio")], capture_output=True, text=True, timeout=300)
    assert init.returncode == 0 and "Traceback" not in init.stderr
    found = me.guidance(target, server="everything")
    assert found.protocol is not None and found.protocol.era == "legacy"


def test_the_reference_server_serves_both_eras() -> None:
    with reference_server("everything-server") as url:
        matrix = me.era_matrix(HttpTarget(url), server="reference", options=OPTIONS)
    doc = json.loads(me.render(matrix, "json"))
    assert doc["serves"] == {"legacy": True, "modern": True}
    assert [c["standard"] for c in doc["columns"]] == ["mcpeval-standard/2", "mcpeval-modern/1",
                                                      "mcpeval-modern/1"]
