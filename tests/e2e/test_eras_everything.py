"""The npm legacy peer (server-everything, 2025-11-25) and the conformance suite's reference server on both
eras: the era matrix says which eras each serves, and auto finds the right one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import mcpeval_nb as me
from mcpeval_nb.transport import HttpTarget, StdioTarget
from tests import waiting
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
    init = waiting.run([sys.executable, "-m", "mcpeval_nb", "init", "--dry-run", "--",
                           *everything_command("stdio")], capture_output=True, text=True, stall_s=300)
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


def test_the_commands_speak_each_era_to_the_reference_server(tmp_path: Path) -> None:
    """init, score and probe as processes, with each --protocol value, on the suite's reference server."""
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        env = {"MCPEVAL_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
        done = waiting.run([sys.executable, "-m", "mcpeval_nb", *args, "--url", url], capture_output=True,
                           text=True, stall_s=600, env=env)
        assert "Traceback" not in done.stderr and "Traceback" not in done.stdout
        return done

    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"version": 1, "probes": [
        {"id": "pages", "probe": "pagination", "access": "read_only", "max_pages": 3}]}))
    with reference_server("everything-server") as url:
        for protocol in ("legacy", "auto", "2026-07-28"):
            assert cli("init", "--dry-run", "--protocol", protocol).returncode == 0, protocol
            score = cli("score", "--server", "reference", "--format", "json", "--no-history", "--protocol",
                        protocol)
            assert score.returncode in (0, 1), score.stderr
            probe = cli("probe", "--server", "reference", "--manifest", str(manifest), "--format", "json",
                        "--no-history", "--protocol", protocol)
            assert probe.returncode == 0, probe.stderr
            for doc in (json.loads(score.stdout), json.loads(probe.stdout)):
                modern = protocol != "legacy"  # auto finds the modern era on a server of both
                assert doc.get("protocol") == ({"era": "modern", "version": "2026-07-28"} if modern else None)
