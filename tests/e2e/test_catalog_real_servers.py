"""Catalog records of real servers through both shims: npm server-everything (stdio and Streamable HTTP)
and server-filesystem, and the official SDK's server in the 2026-07-28 era (stdio and HTTP)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import mcpeval_nb as me
from tests import waiting
from tests.e2e.capture_helpers import CANARY, run_http, run_stdio, shim_cli, store_text
from tests.e2e.conftest import FILESYSTEM, node_command
from tests.eras_support import eras_argv, run_calls
from tests.processes import first_line
from tests.shim_helpers import journal

pytestmark = pytest.mark.e2e


def _listed(transcript_tools: list[dict[str, Any]]) -> list[str]:
    return [t["name"] for t in transcript_tools]


def _records(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for p in sorted((root / "store").glob("catalogs-*.jsonl"))
            for line in p.read_text().splitlines()]


def test_server_everything_through_the_stdio_shim_is_one_clean_complete_listing(
        root: Path, everything_stdio: list[str]) -> None:
    seen = run_stdio(shim_cli("everything", everything_stdio), [("echo", {"message": CANARY})],
                     env={"MCPEVAL_SESSION": CANARY})
    [record] = _records(root)
    assert record["complete"] is True and record["server"] == "everything"
    assert [t["name"] for t in record["tools"]] == _listed(seen.results[1])
    assert all(t["flags"] == [] for t in record["tools"])
    tools = {t["name"]: t for t in record["tools"]}
    assert tools["echo"]["hints"]["readOnlyHint"] is True
    assert tools["get-sum"]["skeleton"]["required"] == ["a", "b"]
    lists = [r for r in journal(root) if r["method"] == "tools/list"]
    assert record["seq"] == lists[0]["seq"] and record["session"] == lists[0]["session"]
    assert CANARY not in store_text(root)


def test_server_filesystem_flags_its_honest_cross_reference_and_nothing_else(
        root: Path, tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    seen = run_stdio(shim_cli("filesystem", node_command(FILESYSTEM, str(allowed))), [], env={})
    [record] = _records(root)
    flagged = {t["name"]: t["flags"] for t in record["tools"] if t["flags"]}
    assert flagged == {"read_file": ["cross-tool-reference"]}  # "DEPRECATED: Use read_text_file instead."
    assert len(record["tools"]) == len(seen.results[1]) >= 13
    sort_by = next(t for t in record["tools"] if t["name"] == "list_directory_with_sizes")
    assert sort_by["skeleton"]["properties"]["sortBy"]["enum"] == ["name", "size"]
    assert str(allowed) not in store_text(root)


def test_server_everything_through_shim_http_lists_the_same_definitions(
        root: Path, everything_http: str, everything_stdio: list[str]) -> None:
    shim = subprocess.Popen([sys.executable, "-m", "mcpeval_nb", "shim-http", "--server", "everything",
                             "--listen", "127.0.0.1:0", "--upstream", everything_http],
                            stderr=subprocess.PIPE, env={**os.environ, "MCPEVAL_SESSION": CANARY})
    try:
        assert shim.stderr is not None
        url = first_line(shim.stderr).rsplit(" ", 1)[1]
        run_http(url, [("get-sum", {"a": 1, "b": 2})])
        shim.send_signal(signal.SIGINT)
        assert waiting.exited(shim, stall_s=60) == 0
    finally:
        shim.kill()
        shim.wait()
    run_stdio(shim_cli("everything", everything_stdio), [], env={})
    http, stdio = _records(root)
    assert http["complete"] and stdio["complete"]
    assert [(t["name"], t["def_digest"]) for t in http["tools"]] == [
        (t["name"], t["def_digest"]) for t in stdio["tools"]]
    assert me.catalog_drift(root).num_rows == 0  # the same catalog over both transports: no drift


def test_the_2026_era_listing_is_recorded_through_the_stdio_shim(root: Path) -> None:
    calls = [("navigate", {"url": f"https://{CANARY}.example/", "waitUntil": "load"})]
    seen = run_calls(shim_cli("eras", eras_argv("--era", "modern")), calls, mode="2026-07-28",
                     env={"MCPEVAL_HOME": str(root)})
    assert seen.version == "2026-07-28"
    [record] = _records(root)
    assert record["complete"] and sorted(t["name"] for t in record["tools"]) == seen.results[0]
    navigate = next(t for t in record["tools"] if t["name"] == "navigate")
    assert "waitUntil" in navigate["skeleton"]["properties"]
    assert CANARY not in store_text(root)
