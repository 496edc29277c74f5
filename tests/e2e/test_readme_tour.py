"""The README's tour runs as written, in order, on a fresh root: its commands are read from README.md
itself (the ``sh`` and ``python`` blocks of "A short tour") and run with bash against the real
``mcp-server-time`` and fixture servers, in a temporary working directory holding the ``data/`` files
the tour names.  Every command exits 0, or 1 where its own comment says a verdict may fail; none prints a
traceback or an unexpected error.  ``serve`` is started from its README line (on a free loopback port),
answers ``initialize``, and is stopped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import waiting
from tests.probe_support import free_port
from tests.serve_support import request, rpc

REPO = Path(__file__).resolve().parents[2]
TOUR = "## A short tour"
pytestmark = [pytest.mark.e2e, pytest.mark.slow,
              pytest.mark.skipif(shutil.which("bash") is None, reason="the tour is a POSIX shell script")]


def _section() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index(TOUR)
    return text[start:text.index("\n## ", start + len(TOUR))]


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", _section(), re.S)


def _commands(block: str) -> list[str]:
    """Top-level commands (continuations joined, a for loop kept whole), with their comments."""
    joined = block.replace("\\\n", " ")
    commands: list[str] = []
    loop: list[str] = []
    for line in joined.splitlines():
        stripped = line.strip()
        if loop or stripped.startswith("for "):
            loop.append(line)
            if stripped == "done":
                commands.append("\n".join(loop))
                loop = []
        elif stripped and not stripped.startswith("#"):
            commands.append(line)
    return commands


def _checked(command: str) -> str:
    """The command followed by a check of its exit code: 0, or 1 when its comment allows ``exit 1``."""
    allowed = "0|1" if re.search(r"#.*exit 1", command) else "0"
    label = json.dumps(command.splitlines()[0][:70])
    return (f"{command}\nrc=$?\ncase $rc in {allowed}) ;; *) echo \"tour: exit $rc from {label[1:-1]}\" >&2;"
            f" exit 99;; esac")


@pytest.fixture(scope="module")
def tour_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("tour")
    shutil.copytree(REPO / "data", work / "data")
    venv = Path(sys.executable).parent.parent
    (work / ".venv").symlink_to(venv)  # `. .venv/bin/activate` as in a checkout after `make demo`
    return work


def _env(work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPEVAL")}
    env["HOME"] = str(work)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.mark.timeout(1800)  # some forty real server starts: minutes on a loaded machine
def test_the_readme_tour_runs_as_written_in_order(tour_dir: Path) -> None:
    (block,) = _blocks("sh")[:1]
    commands = _commands(block)
    assert any(c.startswith("mcpeval-nb score") for c in commands)
    script = "\n".join(c if c.startswith((".", "export ", "FINDING=")) else _checked(c) for c in commands)
    result = waiting.run(["bash", "-c", script], cwd=tour_dir, env=_env(tour_dir), capture_output=True,
                         text=True, stall_s=1500)
    assert result.returncode == 0, result.stderr[-4000:]
    output = result.stdout + result.stderr
    assert "Traceback" not in output and "details withheld" not in output
    root = tour_dir / "build" / "my-root"
    assert sorted(p.name for p in (root / "store").glob("calls-*.jsonl"))
    assert (tour_dir / "before.json").is_file() and (tour_dir / "after.json").is_file()
    assert "promoted" in output and (tour_dir / "build" / "envelope").is_dir()
    assert "could not synthesise" not in output  # the battery found valid inputs for mcp-server-time


def test_the_readme_python_snippet_runs_after_the_tour(tour_dir: Path) -> None:
    (snippet,) = _blocks("python")[:1]
    env = {**_env(tour_dir), "MCPEVAL_HOME": str(tour_dir / "build" / "my-root")}
    result = waiting.run([sys.executable, "-c", snippet], cwd=tour_dir, env=env, capture_output=True,
                         text=True, stall_s=120)
    assert result.returncode == 0, result.stderr
    assert "get_current_time ok" in result.stdout


def test_serve_from_its_readme_line_answers_on_loopback(tour_dir: Path) -> None:
    (line,) = [c for b in _blocks("sh")[1:] for c in _commands(b) if c.startswith("mcpeval-nb serve")]
    port = free_port()
    argv = line.split("#")[0].split()
    argv[argv.index("--listen") + 1] = f"127.0.0.1:{port}"
    root = tour_dir / "serve-root"
    server = subprocess.Popen([*argv, "--root", str(root)], env=_env(tour_dir), stderr=subprocess.PIPE,
                              text=True)
    try:
        assert server.stderr is not None
        assert server.stderr.readline().strip() == f"mcpeval-nb serve: listening on http://127.0.0.1:{port}/mcp"
        status, _, body = request(("127.0.0.1", port), rpc("initialize", protocolVersion="2025-06-18",
                                                           capabilities={}, clientInfo={"name": "t",
                                                                                        "version": "1"}))
        assert status == 200 and json.loads(body)["result"]["serverInfo"]
    finally:
        server.terminate()
        server.wait(timeout=60)
