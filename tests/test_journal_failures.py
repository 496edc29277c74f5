"""A refused journal write loses nothing: a write that fails part-way (file-size limit, full disk) is
undone, so the next append is never glued onto a partial line; a FIFO where a journal belongs is refused
at once instead of blocking (issue 19 items 1 and 3)."""

from __future__ import annotations

import os
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpeval_nb import CallRecord, JournalError, append_record, read_records
from mcpeval_nb.journal import encode_line
from mcpeval_nb.root.layout import calls_path
from tests import waiting
from tests.fs_support import small_tmpfs
from tests.waiting import until

TS = "2026-08-04T12:00:00.250Z"


def _record(seq: int, size: int = 0) -> CallRecord:
    return CallRecord(ts=TS, session="s", seq=seq, server="demo", method="tools/call", outcome="ok",
                      tool="t", args={"k" * max(size, 1): "null"})


def _seqs(path: Path) -> list[int]:
    return [e.record.seq for e in read_records(path)]


def test_a_write_cut_short_by_the_file_size_limit_leaves_every_byte_as_it_was(root: Path) -> None:
    append_record(root, _record(1))
    path = calls_path(root, "2026-08-04")
    before = path.read_bytes()
    child = textwrap.dedent(f"""
        import resource, sys
        sys.dont_write_bytecode = True  # a module compiled under the limit would leave a truncated .pyc
        from pathlib import Path
        from mcpeval_nb import CallRecord, JournalError, append_record
        root = Path({str(root)!r})
        big = CallRecord(ts={TS!r}, session="s", seq=2, server="demo", method="tools/call", outcome="ok",
                         tool="t", args={{"k" * 5000: "null"}})
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, ({len(before) + 1000}, hard))
        try:
            append_record(root, big)
        except JournalError as exc:
            print("refused:", exc)
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        append_record(root, CallRecord(ts={TS!r}, session="s", seq=3, server="demo", method="tools/call",
                                       outcome="ok", tool="t"))
    """)
    run = waiting.run([sys.executable, "-c", child], capture_output=True, text=True, stall_s=60,
                      check=False)
    assert run.returncode == 0, run.stderr
    assert "refused: cannot write journal" in run.stdout and "nothing was written" in run.stdout
    after = path.read_bytes()
    assert after.startswith(before) and after[len(before):] == encode_line(
        CallRecord(ts=TS, session="s", seq=3, server="demo", method="tools/call", outcome="ok", tool="t"))
    assert _seqs(path) == [1, 3]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs (the file-size-limit test above runs everywhere)."""
    with small_tmpfs(tmp_path / "disk", "64k") as mount:
        yield mount


def test_a_full_disk_refuses_the_record_and_the_journal_reads_clean_afterwards(small_disk: Path) -> None:
    root = small_disk / "root"
    append_record(root, _record(1))
    path = calls_path(root, "2026-08-04")
    filler = small_disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)  # fill the disk, unbuffered, to the last byte
    try:
        while True:
            os.write(fd, b"\0" * 1024)
    except OSError:
        pass
    finally:
        os.close(fd)
    before = path.read_bytes()
    with pytest.raises(JournalError, match="No space left on device; nothing was written") as info:
        append_record(root, _record(2, size=8000))
    assert "kkkk" not in str(info.value)
    assert path.read_bytes() == before
    filler.unlink()
    append_record(root, _record(3))
    assert _seqs(path) == [1, 3]


def test_a_fifo_where_a_journal_belongs_is_refused_without_blocking(root: Path) -> None:
    path = calls_path(root, "2026-08-04")
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    outcome: list[BaseException | None] = []

    def write() -> None:
        try:
            append_record(root, _record(1))
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=write, daemon=True)
    worker.start()
    assert until(lambda: not worker.is_alive(), stall_s=10.0), "appending to a FIFO blocked"
    assert isinstance(outcome[0], JournalError)
    reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # with a reader present it opens: still refused
    try:
        with pytest.raises(JournalError, match="is not a regular file"):
            append_record(root, _record(2))
    finally:
        os.close(reader)


def test_a_fifo_or_symlink_where_the_salt_belongs_is_refused_without_blocking(root: Path,
                                                                              tmp_path: Path) -> None:
    from mcpeval_nb import SaltError, load_salt
    from mcpeval_nb.root.layout import salt_path

    root.mkdir(parents=True, exist_ok=True)
    os.mkfifo(salt_path(root))
    outcome: list[BaseException | None] = []
    worker = threading.Thread(target=lambda: _call(outcome, load_salt, root), daemon=True)
    worker.start()
    assert until(lambda: not worker.is_alive(), stall_s=10.0), "reading a FIFO salt blocked"
    assert isinstance(outcome[0], SaltError) and "not a regular file" in str(outcome[0])
    os.unlink(salt_path(root))
    real = tmp_path / "elsewhere"
    real.write_bytes(b"x" * 32)
    os.symlink(real, salt_path(root))
    with pytest.raises(SaltError, match="cannot read salt file"):
        load_salt(root)


def _call(outcome: list[BaseException | None], fn: object, *args: object) -> None:
    try:
        fn(*args)  # type: ignore[operator]
        outcome.append(None)
    except BaseException as exc:
        outcome.append(exc)


@pytest.mark.parametrize(("journal", "command"), [("store/calls-2026-08-04.jsonl", "summary"),
                                                   ("store/probes/history.jsonl", "trends")])
def test_a_fifo_where_a_journal_belongs_is_named_by_every_reader_without_hanging(
        root: Path, journal: str, command: str) -> None:
    append_record(root, _record(1))
    fifo = root / journal
    fifo.parent.mkdir(parents=True, exist_ok=True)
    if fifo.exists():
        fifo.unlink()
    os.mkfifo(fifo)
    run = waiting.run([sys.executable, "-m", "mcpeval_nb", command, "--root", str(root)],
                      capture_output=True, text=True, stall_s=60, check=False)
    assert run.returncode == 3, (run.stdout, run.stderr)
    assert run.stderr == f"mcpeval-nb: journal {fifo} is not a regular file; refusing to read it\n"
