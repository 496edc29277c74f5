"""npm server-filesystem answers read_text_file with the text twice: a 3.2 MB file is a ~6.4 MB frame.

Directly, the official SDK client reads it; through ``mcpeval-nb shim`` it must too (issue 15, item 1).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import waiting
from tests.e2e.capture_helpers import CANARY, run_stdio, shim_cli, store_text
from tests.e2e.conftest import FILESYSTEM, node_command
from tests.shim_helpers import journal

pytestmark = pytest.mark.e2e


def _filesystem(allowed: Path) -> list[str]:
    return node_command(FILESYSTEM, str(allowed))


def test_a_big_file_read_through_the_shim_reaches_the_client_and_is_recorded_content_free(
        root: Path, tmp_path: Path) -> None:
    allowed = tmp_path / "files"
    allowed.mkdir()
    big = allowed / "big.txt"
    line = f"{CANARY} lorem ipsum dolor sit amet\n"
    big.write_text(line * (3_200_000 // len(line)))
    command = _filesystem(allowed)
    calls = [("read_text_file", {"path": str(big)}), ("list_directory", {"path": str(allowed)})]
    direct = run_stdio(command, calls, env={})
    shimmed = run_stdio(shim_cli("filesystem", command), calls, env={})
    assert shimmed.results == direct.results
    assert shimmed.results[2]["content"][0]["text"] == big.read_text()
    records = [r for r in journal(root) if r["method"] == "tools/call"]
    assert [(r["tool"], r["outcome"], r.get("error")) for r in records] == [
        ("read_text_file", "unknown", {"code": "capture-answer-oversized"}), ("list_directory", "ok", None)]
    assert records[0]["args"] == {"path": "str<128"} and isinstance(records[0]["latency_ms"], int)
    assert CANARY not in store_text(root)


def test_the_shim_says_once_that_it_forwarded_an_oversized_frame(root: Path, tmp_path: Path) -> None:
    allowed = tmp_path / "files"
    allowed.mkdir()
    (allowed / "big.txt").write_text("y" * 3_200_000)
    frames = b"".join(
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_text_file","arguments":'
        b'{"path":"%s"}}}\n' % (i, str(allowed / "big.txt").encode()) for i in (1, 2))
    init = (b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
            b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
            b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    result = waiting.run(shim_cli("filesystem", _filesystem(allowed)), input=init + frames,
                         capture_output=True, stall_s=120)
    assert result.stdout.count(b"\n") == 3 and len(result.stdout) > 12_000_000
    assert result.stderr.decode().count("frame exceeds 4 MiB") == 1
