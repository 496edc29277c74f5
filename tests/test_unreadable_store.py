"""A store the user may not read (issue 19 item 9): every command says so in one line and exits 3.

The tests run the CLI as a user without privileges over the files: ``unshare --user`` starts it in a
new user namespace where no uid is mapped, so it holds no capability over the test's files and their
permission bits apply as they would to their owner logged in as an ordinary user.  Before the fix,
``summary`` and ``export-parquet`` reported an empty store with exit 0, ``doctor`` passed an unreadable
root as clean, and ``trends``, ``index`` and ``promote`` died with "unexpected" errors.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import waiting
from tests.review_support import clean_store, run_cli_process

COMMANDS = [["summary"], ["trends"], ["doctor"], ["index"], ["promote"], ["findings"],
            ["share", "--dir", "{tmp}/env"], ["export-parquet", "--dest", "{tmp}/pq"]]


def _unprivileged(args: list[str], root: Path) -> subprocess.CompletedProcess[str]:
    unshare = shutil.which("unshare")
    assert unshare is not None, "util-linux's unshare is needed to run as an unprivileged user"
    env = dict(os.environ, MCPEVAL_HOME=str(root))
    env.pop("MCPEVAL_NB_DEBUG", None)
    return waiting.run([unshare, "--user", sys.executable, "-m", "mcpeval_nb", *args], capture_output=True,
                       text=True, env=env, stall_s=120, check=False)


@pytest.fixture
def locked(root: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    clean_store(root, calls=4)
    target = root if request.param == "root" else root / "store"
    target.chmod(0)
    try:
        yield target
    finally:
        target.chmod(0o755)


@pytest.mark.parametrize("locked", ["store", "root"], indirect=True)
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_an_unreadable_store_is_one_line_and_exit_3(root: Path, tmp_path: Path, locked: Path,
                                                     command: list[str]) -> None:
    args = [part.format(tmp=tmp_path) for part in command]
    proc = _unprivileged(args, root)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    # a refused share is audited; in a root nobody may write, that audit write fails with its one
    # documented warning line (docs/governance.md), which is not the command's error
    lines = [line for line in proc.stderr.strip().splitlines()
             if not line.startswith("mcpeval-nb: warning: audit record not written")]
    assert len(lines) == 1 and lines[0].startswith("mcpeval-nb: "), proc.stderr
    if command == ["findings"] and locked.name == "store":  # findings reads index.db, not the store
        assert "index database" in lines[0] and "does not exist" in lines[0]
    else:
        assert "Permission denied" in lines[0] and "unexpected" not in lines[0]
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not (tmp_path / "env").exists() and not (tmp_path / "pq").exists()


def test_the_namespace_really_drops_the_privilege(root: Path) -> None:
    """Guard for the tests above: as root the same store reads; unprivileged it does not."""
    clean_store(root, calls=2)
    (root / "store").chmod(0)
    try:
        assert run_cli_process("summary", root=root).returncode == 0
        assert _unprivileged(["summary"], root).returncode == 3
    finally:
        (root / "store").chmod(0o755)


def test_index_of_an_empty_store_indexes_nothing(root: Path) -> None:
    (root / "store").mkdir(parents=True)
    proc = run_cli_process("index", root=root)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "indexed 0 calls, 0 failures, 0 annotations"
