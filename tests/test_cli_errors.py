"""No exception reaches the user as a traceback: an error outside the tree prints one safe line and
exits 3, without payload text; ``--debug`` (or ``MCPEVAL_NB_DEBUG=1``) adds the traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from mcpeval_nb import cli as cli_module
from tests import waiting

CANARY = "CANARY-7d41-payload-text"


@pytest.fixture
def boom() -> Iterator[str]:
    """A command that fails with a foreign exception whose message carries a canary."""

    @click.command("test-boom")
    def boom_cmd() -> int:
        raise RuntimeError(f"server said: {CANARY}")

    cli_module.cli.add_command(boom_cmd)
    yield "test-boom"
    cli_module.cli.commands.pop("test-boom", None)
    cli_module._debug[0] = False


def test_an_unexpected_exception_prints_one_line_and_exits_three(
        boom: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(cli_module.DEBUG_ENV, raising=False)
    with pytest.raises(SystemExit) as info:
        cli_module.main([boom])
    out, err = capsys.readouterr()
    assert info.value.code == 3
    assert err == "mcpeval-nb: unexpected RuntimeError (details withheld)\n"
    assert CANARY not in out + err and "Traceback" not in err


def test_debug_adds_the_traceback(boom: str, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(cli_module.DEBUG_ENV, raising=False)
    with pytest.raises(SystemExit) as info:
        cli_module.main(["--debug", boom])
    err = capsys.readouterr().err
    assert info.value.code == 3 and "Traceback" in err
    assert err.rstrip().endswith("mcpeval-nb: unexpected RuntimeError (details withheld)")


def test_our_errors_keep_their_message_and_exit_code(capsys: pytest.CaptureFixture[str],
                                                     tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as info:
        cli_module.main(["report", str(tmp_path / "missing.json")])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("mcpeval-nb: cannot read ") and err.count("\n") == 1


def test_an_environment_failure_in_a_real_process_is_one_line(tmp_path: Path) -> None:
    # A path component longer than the file system allows: stat fails below our code.
    root = tmp_path / ("a" * 300)
    env = {k: v for k, v in os.environ.items() if k != cli_module.DEBUG_ENV}
    for argv in (["trends", "--root", str(root)], ["summary", "--root", str(root)]):
        run = waiting.run([sys.executable, "-m", "mcpeval_nb", *argv], capture_output=True, text=True,
                          env=env, stall_s=120, check=False)
        assert run.returncode in (2, 3), argv
        assert "Traceback" not in run.stderr and run.stderr.count("\n") == 1, run.stderr
        assert run.stderr.startswith("mcpeval-nb: ")


def _bytes_arg(text: str) -> str:
    """An argument as the CLI receives a non-UTF-8 argv element (surrogate-escaped bytes)."""
    return (text.encode() + b"\xff").decode("utf-8", "surrogateescape")


@pytest.mark.parametrize("argv", [
    ["annotate", "--session", "s", "--seq", "1", "--kind", "workaround", "--note", _bytes_arg("CANARY-note")],
    ["export-parquet", "--dest", _bytes_arg("/tmp/CANARY-dest")],
    ["share", "--dir", _bytes_arg("/tmp/CANARY-dir")],
])
def test_non_utf8_arguments_are_a_usage_error_naming_the_flag(argv: list[str], tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli_module.main([*argv, "--root", str(tmp_path / "root")])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1
    flag = argv[-2]
    assert err.startswith(f"mcpeval-nb: the value of {flag} is not valid UTF-8 text")
    assert "CANARY" not in err and not (tmp_path / "root").exists()


def test_the_server_command_after_the_separator_may_carry_any_bytes(tmp_path: Path) -> None:
    arg = (b"printf-arg-" + b"\xff").decode("utf-8", "surrogateescape")
    run = waiting.run([sys.executable, "-m", "mcpeval_nb", "shim", "--server", "bytes", "--root",
                          str(tmp_path / "root"), "--", sys.executable, "-c", "import sys; sys.exit(0)", arg],
                      capture_output=True, stall_s=60, check=False, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr


def test_a_root_the_system_refuses_is_named_with_the_reason(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli_module.main(["trends", "--root", str(tmp_path / ("a" * 300))])
    err = capsys.readouterr().err
    assert info.value.code == 3 and err.startswith("mcpeval-nb: cannot use capture root ")
    assert err.rstrip().endswith(": File name too long")
