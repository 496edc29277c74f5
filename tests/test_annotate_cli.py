"""``mcpeval-nb annotate`` and ``--version`` (SPEC 5, 9.4).

The behaviours the issue names run through real subprocesses (``python -m mcpeval_nb``). Each one pays
the package import, so they are started together once per module; the remaining cases call the same
entry point (``mcpeval_nb.cli.run``) in this process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcpeval_nb
from mcpeval_nb import CallRecord, append_records, cli

S1_TOKEN = "session:e8bc163c82eee18733288c7d4ac636db3a6deb013ef2d37b68322be20edc45cc"
KINDS = "blocked-optimal-path, undocumented-behavior, false-success, instruction-divergence, workaround"
NOTE = "click reported success, nothing changed"


def _annotate_argv(
    *, session: str = "s1", seq: str = "7", kind: str = "false-success", note: str = NOTE
) -> list[str]:
    return ["annotate", "--session", session, "--seq", seq, "--kind", kind, "--note", note]


def _seed(root: Path, *, session: str = "s1", seq: int = 7) -> None:
    """A recorded call for the annotations to target (an annotation needs its call in the store)."""
    append_records(root, [CallRecord(ts="2026-08-04T12:00:00.000Z", session=session, seq=seq, server="srv",
                                     method="tools/call", tool="click", outcome="ok", latency_ms=3)])


def _no_annotations(root: Path) -> bool:
    return not list((root / "store").glob("annotations-*.jsonl"))


RUNS: dict[str, list[str]] = {
    "ok": _annotate_argv(),
    "bad-kind": _annotate_argv(kind="bogus"),
    "long-note": _annotate_argv(note="CANARY" + "x" * 235),
    "newline": _annotate_argv(note="CANARY\nsecond line"),
    "version": ["--version"],
}


class Done:
    """A finished subprocess: its capture root, exit code and output."""

    def __init__(self, root: Path, proc: subprocess.Popen[str]) -> None:
        self.root = root
        self.stdout, self.stderr = proc.communicate(timeout=120)
        self.returncode = proc.returncode


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Done]]:
    procs: dict[str, tuple[Path, subprocess.Popen[str]]] = {}
    try:
        for name, argv in RUNS.items():
            root = tmp_path_factory.mktemp(name) / "capture-root"
            _seed(root)
            env = {**os.environ, "MCPEVAL_HOME": str(root)}
            procs[name] = (
                root,
                subprocess.Popen(
                    [sys.executable, "-m", "mcpeval_nb", *argv],
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                ),
            )
        yield {name: Done(root, proc) for name, (root, proc) in procs.items()}
    finally:
        for _, proc in procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=30)


def _stored(root: Path) -> list[dict[str, object]]:
    lines = []
    for path in sorted((root / "store").glob("annotations-*.jsonl")):
        lines.extend(json.loads(line) for line in path.read_text().splitlines())
    return lines


def test_annotate_stores_the_hashed_session_and_prints_a_success_line(runs: dict[str, Done]) -> None:
    done = runs["ok"]
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"recorded false-success annotation for {S1_TOKEN} seq 7\n"
    assert done.stderr == ""
    (stored,) = _stored(done.root)
    assert list(stored) == ["ts", "session", "seq", "kind", "note"]
    assert (stored["session"], stored["seq"], stored["kind"], stored["note"]) == (
        S1_TOKEN,
        7,
        "false-success",
        NOTE,
    )
    assert (done.root / "store" / f"annotations-{str(stored['ts'])[:10]}.jsonl").exists()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("bad-kind", f'mcpeval-nb: unknown annotation kind "bogus"; valid kinds are: {KINDS}\n'),
        ("long-note", "mcpeval-nb: note exceeds 240 characters (got 241)\n"),
        ("newline", "mcpeval-nb: note must not contain control characters or newlines\n"),
    ],
)
def test_invalid_annotations_exit_2_with_the_spec_message_and_write_nothing(
    runs: dict[str, Done], name: str, message: str
) -> None:
    done = runs[name]
    assert done.returncode == 2
    assert done.stderr == message
    assert done.stdout == ""
    assert _no_annotations(done.root)


def test_version_prints_the_package_version(runs: dict[str, Done]) -> None:
    assert runs["version"].returncode == 0
    assert runs["version"].stdout == f"mcpeval-nb {mcpeval_nb.__version__}\n"


def _in_process(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        cli.run(argv)
    code = info.value.code
    out = capsys.readouterr()
    return (code if isinstance(code, int) else 1), out.out, out.err


def test_the_stored_token_passed_back_targets_the_same_session(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _seed(root)
    assert _in_process(_annotate_argv(), capsys)[0] == 0
    upper = "session:" + S1_TOKEN[8:].upper()
    code, out, _ = _in_process(_annotate_argv(session=upper, kind="workaround", note="é" * 240), capsys)
    assert code == 0
    assert out == f"recorded workaround annotation for {S1_TOKEN} seq 7\n"
    assert [a["session"] for a in _stored(root)] == [S1_TOKEN, S1_TOKEN]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"note": "CANARY\x07bell"}, "mcpeval-nb: note must not contain control characters or newlines\n"),
        ({"seq": "18446744073709551616"}, "mcpeval-nb: seq must be an unsigned 64-bit integer\n"),
        ({"seq": "-1"}, None),
        ({"kind": ""}, f'mcpeval-nb: unknown annotation kind ""; valid kinds are: {KINDS}\n'),
    ],
)
def test_more_invalid_annotations_exit_2(
    root: Path, capsys: pytest.CaptureFixture[str], change: dict[str, str], message: str | None
) -> None:
    _seed(root)
    code, out, err = _in_process(_annotate_argv(**change), capsys)
    assert code == 2
    if message is not None:
        assert err == message
    assert "CANARY" not in err + out
    assert _no_annotations(root)


def test_missing_options_and_unknown_commands_exit_2(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _in_process(["annotate", "--session", "s1", "--kind", "workaround", "--note", "x"], capsys)
    assert code == 2 and "--seq" in err
    assert _in_process(["no-such-command"], capsys)[0] == 2
    assert not root.exists()


def test_an_unwritable_capture_root_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("keep")
    code, _, err = _in_process([*_annotate_argv(note="CANARY"), "--root", str(blocker / "root")], capsys)
    assert code == 3, err
    assert err.startswith("mcpeval-nb: cannot use capture root ") and "Not a directory" in err
    assert "CANARY" not in err and "Traceback" not in err
    assert blocker.read_text() == "keep"
