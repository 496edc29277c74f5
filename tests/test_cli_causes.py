"""Errors that name their cause (issue 28): each through the real CLI in a child process, with its exit
code, and never quoting what the file or the server said beyond what the message needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpeval_nb.testing import server_command
from tests import waiting

from .probe_support import case, manifest

CANARY = "CANARYq7"


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return waiting.run([sys.executable, "-m", "mcpeval_nb", *args], capture_output=True, text=True,
                       stall_s=120, cwd=cwd)


def manifest_doc() -> dict[str, object]:
    return manifest(case("pages", "pagination", max_pages=2), case("more", "pagination", max_pages=2))


def _crashing(stderr: str, status: int = 1) -> list[str]:
    return [sys.executable, "-c", f"import sys; sys.stderr.write({stderr!r}); sys.exit({status})"]


def test_score_on_a_server_that_crashes_at_start_shows_its_status_and_stderr_once(tmp_path: Path) -> None:
    result = cli("score", "--server", "x", "--root", str(tmp_path / "r"), "--",
                 *_crashing(f"Traceback\nModuleNotFoundError: No module named 'foo'\nmail {CANARY}@x.org\n"))
    assert result.returncode == 3
    assert "the server exited with status 1; its last stderr lines:" in result.stderr
    assert "| ModuleNotFoundError: No module named 'foo'" in result.stderr
    assert "| [line withheld: email-like]" in result.stderr and CANARY not in result.stderr + result.stdout
    assert result.stderr.count("closed the connection") == 1


def test_probe_reports_a_dead_server_once_and_does_not_retry_the_battery(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(manifest_doc()))
    result = cli("probe", "--server", "x", "--manifest", str(path), "--root", str(tmp_path / "r"), "--",
                 *_crashing("bad config\n", status=2))
    assert result.returncode == 3
    assert result.stderr.count("closed the connection") == 1
    assert "the server exited with status 2; its last stderr lines:\n  | bad config" in result.stderr
    assert result.stdout.count("hint:") == 1


def test_a_missing_program_names_it_and_the_errno(tmp_path: Path) -> None:
    result = cli("score", "--server", "x", "--root", str(tmp_path / "r"), "--", "mcpeval-no-such-server")
    assert result.returncode == 3
    assert ('could not start the MCP server command "mcpeval-no-such-server": No such file or directory '
            "(ENOENT), not found on PATH") in result.stderr


def test_sizes_says_once_why_the_server_could_not_be_reached(tmp_path: Path) -> None:
    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps({"calls": [{"tool": "a", "args": {}}, {"tool": "b", "args": {}}]}))
    result = cli("sizes", "--call-manifest", str(calls), "--server", "x", "--root", str(tmp_path / "r"),
                 "--", *_crashing("no token\n"))
    assert result.returncode == 3
    assert result.stderr.count("the server could not be reached") == 1
    assert "| no token" in result.stderr


@pytest.mark.parametrize(("text", "where"), [
    ('{"version": 1,\n  "probes": [,]}', "line 2, column 14: expecting value"),
    ('{"version": 1} x', "line 1, column 16: trailing characters after JSON value"),
])
def test_bad_json_in_a_manifest_gives_line_and_column(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "m.json"
    path.write_text(text)
    result = cli("probe", "--server", "x", "--manifest", str(path), "--", "true")
    assert result.returncode == 2
    assert result.stderr == f"mcpeval-nb: {path}: manifest is not valid JSON ({where})\n"


def test_bad_json_in_a_budgets_file_gives_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text('{"version": 1,\n\n   "budgets": [}')
    result = cli("gate", "--budgets", str(path), "--root", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr == f"mcpeval-nb: {path}: not valid JSON (line 3, column 16: expecting value)\n"


def test_an_unknown_manifest_key_names_the_nearest_field_and_never_the_key(tmp_path: Path) -> None:
    doc: dict[str, Any] = manifest_doc()
    doc["timeout"] = 5
    doc["probes"][0][f"x{CANARY}"] = 1
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    result = cli("probe", "--server", "x", "--manifest", str(path), "--", "true")
    assert result.returncode == 2
    assert "unknown field (did you mean `timeout_ms`?); allowed here: version, timeout_ms" in result.stderr
    doc.pop("timeout")
    path.write_text(json.dumps(doc))
    result = cli("probe", "--server", "x", "--manifest", str(path), "--", "true")
    assert result.returncode == 2 and "unknown field" in result.stderr and CANARY not in result.stderr
    doc["probes"][0].pop(f"x{CANARY}")
    doc["tool"] = "x"  # a field of the schema, in the wrong place: named
    path.write_text(json.dumps(doc))
    assert "`tool` is not a field here" in cli("probe", "--server", "x", "--manifest", str(path),
                                               "--", "true").stderr


def test_an_unknown_budgets_key_names_the_nearest_field(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text('{"version": 1, "budget": []}')
    result = cli("gate", "--budgets", str(path), "--root", str(tmp_path))
    assert result.returncode == 2
    assert "/ has an unknown field (did you mean `budgets`?)" in result.stderr


def test_an_undeclared_tool_is_named_with_the_nearest_listed_one(tmp_path: Path) -> None:
    doc: dict[str, Any] = manifest_doc()
    doc["probes"] = [{"id": "c", "probe": "degradation-over-n", "access": "read_only",
                      "tool": "read_countr", "arguments": {}, "max_attempts": 2}]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    result = cli("probe", "--server", "x", "--manifest", str(path), "--root", str(tmp_path / "r"),
                 "--gate-only", "--", *server_command("probe_clean"))
    assert result.returncode == 2
    assert "probe case c: probe tool was not declared by the server: `read_countr`" in result.stderr
    assert "nearest: `read_counter`" in result.stderr


def test_config_on_a_root_that_is_a_file_says_so(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    result = cli("config", "--root", str(afile))
    assert result.returncode == 3
    assert result.stderr == f"mcpeval-nb: cannot use capture root {afile}: it is a file, not a directory\n"


def test_summary_of_a_root_that_does_not_exist_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    result = cli("summary", "--root", str(missing))
    assert (result.returncode, result.stdout) == (2, "")
    assert f"no capture root at {missing}" in result.stderr
    assert not missing.exists()


def test_hints_name_this_command(tmp_path: Path) -> None:
    trends = cli("trends", "--root", str(tmp_path))
    assert trends.stdout == "no trend history yet; run `mcpeval-nb score` or `mcpeval-nb probe` first\n"
