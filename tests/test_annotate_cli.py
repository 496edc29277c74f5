"""``mcpeval-nb annotate`` and ``--version`` through a real subprocess (SPEC 5, 9.4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import mcpeval_nb

S1_TOKEN = "session:e8bc163c82eee18733288c7d4ac636db3a6deb013ef2d37b68322be20edc45cc"
KINDS = "blocked-optimal-path, undocumented-behavior, false-success, instruction-divergence, workaround"


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MCPEVAL_HOME": str(root)}
    return subprocess.run(
        [sys.executable, "-m", "mcpeval_nb", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _annotate(
    root: Path,
    *,
    session: str = "s1",
    seq: str = "7",
    kind: str = "false-success",
    note: str = "click reported success, nothing changed",
) -> subprocess.CompletedProcess[str]:
    return _run(root, "annotate", "--session", session, "--seq", seq, "--kind", kind, "--note", note)


def _stored(root: Path) -> list[dict[str, object]]:
    lines = []
    for path in sorted((root / "store").glob("annotations-*.jsonl")):
        lines.extend(json.loads(line) for line in path.read_text().splitlines())
    return lines


def test_annotate_stores_the_hashed_session_and_prints_a_success_line(root: Path) -> None:
    done = _annotate(root)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"recorded false-success annotation for {S1_TOKEN} seq 7\n"
    (stored,) = _stored(root)
    assert list(stored) == ["ts", "session", "seq", "kind", "note"]
    assert stored["session"] == S1_TOKEN and stored["seq"] == 7
    assert stored["note"] == "click reported success, nothing changed"
    day = str(stored["ts"])[:10]
    assert (root / "store" / f"annotations-{day}.jsonl").exists()
    # Passing the stored token back is idempotent: (session, seq) coordinates round-trip.
    again = _annotate(
        root, session=S1_TOKEN.upper().replace("SESSION:", "session:"), kind="workaround", note="é" * 240
    )
    assert again.returncode == 0, again.stderr
    assert [a["session"] for a in _stored(root)] == [S1_TOKEN, S1_TOKEN]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "bogus"}, f'mcpeval-nb: unknown annotation kind "bogus"; valid kinds are: {KINDS}\n'),
        ({"note": "CANARY" + "x" * 235}, "mcpeval-nb: note exceeds 240 characters (got 241)\n"),
        (
            {"note": "CANARY\nsecond line"},
            "mcpeval-nb: note must not contain control characters or newlines\n",
        ),
        ({"note": "CANARY\x07bell"}, "mcpeval-nb: note must not contain control characters or newlines\n"),
        ({"seq": "18446744073709551616"}, "mcpeval-nb: seq must be an unsigned 64-bit integer\n"),
    ],
)
def test_invalid_annotations_exit_2_with_the_spec_message_and_write_nothing(
    root: Path, kwargs: dict[str, str], message: str
) -> None:
    done = _annotate(root, **kwargs)
    assert done.returncode == 2
    assert done.stderr == message
    assert done.stdout == ""
    assert "CANARY" not in done.stderr
    assert not (root / "store").exists()


def test_bad_command_line_arguments_exit_2(root: Path) -> None:
    assert _run(root, "annotate", "--session", "s1", "--kind", "workaround", "--note", "x").returncode == 2
    assert _annotate(root, seq="-1").returncode == 2
    assert _run(root, "no-such-command").returncode == 2
    assert not (root / "store").exists()


def test_an_unwritable_capture_root_exits_3(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("keep")
    done = _annotate(tmp_path, note="CANARY note")
    assert done.returncode == 0
    done = _run(
        tmp_path,
        "annotate",
        "--session",
        "s",
        "--seq",
        "1",
        "--kind",
        "workaround",
        "--note",
        "CANARY",
        "--root",
        str(blocker / "root"),
    )
    assert done.returncode == 3
    assert done.stderr.startswith("mcpeval-nb: cannot open journal ")
    assert "CANARY" not in done.stderr and "Traceback" not in done.stderr


def test_version_prints_the_package_version(root: Path) -> None:
    done = _run(root, "--version")
    assert done.returncode == 0
    assert done.stdout == f"mcpeval-nb {mcpeval_nb.__version__}\n"
