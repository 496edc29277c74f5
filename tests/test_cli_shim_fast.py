"""``mcpeval-nb shim`` without click (cli/shim_fast.py): the same parameters as the click command for
every line it takes, click for every other line, the same error lines, and no click before the server
starts (issue 28: the shim's start-up against a bare interpreter)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpeval_nb import load_salt
from mcpeval_nb.cli import run
from mcpeval_nb.cli.capture import shim_cmd
from mcpeval_nb.cli.shim_fast import FLAGS, VALUED, parse
from tests.shim_helpers import echo_argv

TAKEN = [
    ["shim", "--server", "b", "--", "sh", "-c", "exit 0"],
    ["shim", "--server=b", "--root", "/r", "--no-catalog", "python", "-m", "srv", "--flag"],
    ["shim", "--strict-frames", "--root=/r", "--server", "time:1", "--", "--", "x"],
    ["shim", "--server", "bad label", "--", "x"],
    ["shim", "--server", "b", "cmd", "--server", "c"],
]
LEFT_TO_CLICK = [
    ["shim"], ["shim", "--help"], ["shim", "-h"], ["shim", "--server", "b"], ["shim", "--server", "b", "--"],
    ["shim", "--server"], ["shim", "--server=", "--", "x"], ["shim", "--server", "-b", "--", "x"],
    ["shim", "--server", "a", "--server", "b", "--", "x"],
    ["shim", "--no-catalog", "--no-catalog", "--server", "b", "x"],
    ["shim", "--bogus", "--server", "b", "--", "x"], ["shim", "--strict-frames=1", "--server", "b", "x"],
    ["shim", "x", "--server", "b"], ["--debug", "shim", "--server", "b", "--", "x"],
    ["shim-http", "--server", "b"], [],
]


def test_every_option_of_the_click_command_is_known_to_the_fast_path() -> None:
    options = {p.name: tuple(p.opts) for p in shim_cmd.params if p.name != "command"}
    assert options == {**{v: (k,) for k, v in VALUED.items()}, **{v: (k,) for k, v in FLAGS.items()}}


@pytest.mark.parametrize("argv", TAKEN, ids=" ".join)
def test_a_plain_line_gets_the_parameters_click_would_give(argv: list[str]) -> None:
    ctx = shim_cmd.make_context("shim", list(argv[1:]))
    assert parse(argv) == ctx.params


@pytest.mark.parametrize("argv", LEFT_TO_CLICK, ids=" ".join)
def test_any_other_line_is_left_to_click(argv: list[str]) -> None:
    assert parse(argv) is None


def test_an_error_on_the_fast_path_is_the_one_line_and_code_of_every_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        run(["shim", "--server", "bad label", "--root", str(tmp_path / "root"), "--", "true"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.startswith("mcpeval-nb: server must be") and err.count("\n") == 1
    root = (b"r-" + b"\xff").decode("utf-8", "surrogateescape")
    with pytest.raises(SystemExit) as info:
        run(["shim", "--server", "b", "--root", root, "--", "true"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.startswith("mcpeval-nb: the value of --root is not valid UTF-8 text")


# Loaded by nothing the shim's process needs before its server starts: click (the CLI group), pyarrow,
# requests (the recorder child's URL table), and the standard library's slower modules (dataclasses with
# inspect, hashlib with OpenSSL, uuid with platform, json, typing): docs/performance.md, bench_startup.
LATE = ("click", "dataclasses", "hashlib", "inspect", "json", "pyarrow", "requests", "typing", "uuid")
_HOOK = """
import os, sys
def hook(event, args):
    if event == "subprocess.Popen" and os.getpid() == PID:
        with open(os.environ["MARK"], "a") as fh:
            fh.write(" ".join(sorted(m for m in os.environ["LATE"].split() if m in sys.modules)) + "|")
PID = os.getpid()
sys.addaudithook(hook)
from mcpeval_nb.cli import run
run()
"""


def test_the_shim_starts_its_server_before_its_slow_imports_and_still_records(tmp_path: Path) -> None:
    mark, root = tmp_path / "mark", tmp_path / "root"
    server = echo_argv()
    load_salt(root)  # a root's first start creates its salt (two uuid4s, SPEC 1); every later one reads it
    frames = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}\n'
    done = subprocess.run([sys.executable, "-c", _HOOK, "shim", "--server", "b", "--root", str(root), "--",
                           *server], input=frames, capture_output=True, timeout=120, check=False,
                          env={**without_session(), "MARK": str(mark), "LATE": " ".join(LATE)})
    assert done.returncode == 0, done.stderr
    assert mark.read_text().split("|")[0] == ""  # none of LATE at the spawn
    assert done.stdout == b'{"jsonrpc": "2.0", "id": 1, "result": {"echo": true}}\n'
    journal = next((root / "store").rglob("calls-*.jsonl"))
    record = json.loads(journal.read_text())
    assert record["tool"] == "echo"  # the session was drawn in the recorder child (no MCPEVAL_SESSION)
    assert record["session"].startswith("session:") and len(record["session"]) == len("session:") + 64


def without_session() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "MCPEVAL_SESSION"}
