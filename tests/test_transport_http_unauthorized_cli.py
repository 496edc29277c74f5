"""A 401/403 endpoint is named in every command that takes ``--url`` (the real CLI, a real fixture server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import waiting
from tests.transport_helpers import http_fixture

SECRET = "CANARY-authorization-value-3c1f"
VAR = "MCPEVAL_HTTP_AUTHORIZATION"


def _cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "MCPEVAL_HTTP_AUTHORIZATION"}
    return waiting.run([sys.executable, "-m", "mcpeval_nb", *args], capture_output=True, text=True,
                       stall_s=120, cwd=cwd, env={**base, **(env or {})})


@pytest.mark.usefixtures("root")
def test_init_probe_score_and_compare_name_a_401_and_a_403(tmp_path: Path) -> None:
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"version": 1, "probes": [
        {"id": "c", "probe": "degradation-over-n", "access": "read_only", "tool": "ok", "arguments": {},
         "max_attempts": 2}]}))
    with http_fixture("forbidden") as forbidden, \
            http_fixture("auth", {"FIXTURE_EXPECTED_AUTHORIZATION": "x"}) as auth:
        init = _cli("init", "--url", forbidden, cwd=tmp_path)
        probe = _cli("probe", "--server", "x", "--manifest", str(manifest), "--url", auth, cwd=tmp_path)
        score = _cli("score", "--server", "x", "--url", auth, cwd=tmp_path)
        compare = _cli("compare", "--endpoint", f"a={auth}", "--endpoint", f"b={forbidden}", cwd=tmp_path)
        wrong = _cli("init", "--url", auth, cwd=tmp_path, env={"MCPEVAL_HTTP_AUTHORIZATION": SECRET})
    assert init.returncode == 3
    assert init.stderr.strip() == f"mcpeval-nb: HTTP endpoint answered 403 (forbidden): set {VAR}"
    assert probe.returncode == 3
    assert f"HTTP endpoint answered 401 (authorization required): set {VAR}" in probe.stdout + probe.stderr
    assert "reason=transport-unauthorized" in probe.stdout
    assert score.returncode == 3 and "readiness error reason=transport-unauthorized" in score.stdout
    assert (f"readiness transport-unauthorized: HTTP endpoint answered 401 (authorization required): "
            f"set {VAR}") in score.stderr
    assert compare.returncode == 3
    said = "readiness transport-unauthorized: HTTP endpoint answered"
    assert f"{said} 401 (authorization required): set {VAR}" in compare.stderr
    assert f"{said} 403 (forbidden): set {VAR}" in compare.stderr
    assert "check MCPEVAL_HTTP_AUTHORIZATION" in wrong.stderr and SECRET not in wrong.stdout + wrong.stderr
