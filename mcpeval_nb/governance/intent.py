"""The intent file of an erase or a retention rewrite: what the next command needs to finish it.

``<root>/.erase-intent.json`` is outside the store (never shared) and holds no content: the operation,
its selection (a session token, a server label, a day), the journals it covers (store-relative paths),
the ones done, and for the journal being rewritten the offsets, sizes and SHA-256 digests that tell its
state apart after a crash (``rewrite.py``).  It is written to a temporary file, fsynced and renamed into
place, so a reader sees the previous intent or the new one, never a torn one.  A governance operation
holds ``<root>/.governance.lock`` (a sidecar lock: one erase, retention or recovery at a time).
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import GovernanceError
from ..limits import LOCK_TIMEOUT_S
from ..root import read_json_file
from ..root.layout import (
    erase_intent_path,
    erase_work_path,
    governance_lock_path,
)

__all__ = ["Current", "Intent", "clean_work", "fsync_dir",
           "governance_lock", "work_dir"]



@dataclass(frozen=True)
class Current:
    """The journal being rewritten in place.

    Attributes:
        path: store-relative path of the journal.
        start: offset of the first dropped line (bytes before it are never touched).
        old_end: the journal's size when the rewrite took its exclusive lock.
        new_end: ``start`` + the size of the filtered copy.
        old_digest: SHA-256 of the original bytes ``[start, old_end)``.
        copy: root-relative path of the filtered copy of ``[start, old_end)``.
        copy_digest: SHA-256 of the copy.
        dropped: lines dropped.
    """

    path: str
    start: int
    old_end: int
    new_end: int
    old_digest: str
    copy: str
    copy_digest: str
    dropped: int

    def to_json(self) -> dict[str, Any]:
        """The intent file's ``current`` object."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class Intent:
    """An operation in progress: ``op`` (``erase`` or ``retention``), its ``selection`` (no content),
    the journals it covers, those ``done`` and the one being rewritten."""

    op: str
    selection: dict[str, Any]
    files: tuple[str, ...] = ()
    done: tuple[str, ...] = ()
    current: Current | None = None
    removed: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The intent file's document."""
        return {"version": 1, "op": self.op, "selection": self.selection, "files": list(self.files),
                "done": list(self.done), "removed": self.removed,
                "current": None if self.current is None else self.current.to_json()}

    @classmethod
    def from_json(cls, data: Any, path: Path) -> Intent:
        """Read an intent document; a malformed one is refused naming its path."""
        try:
            current = data["current"]
            return cls(op=str(data["op"]), selection=dict(data["selection"]),
                       files=tuple(str(f) for f in data["files"]), done=tuple(str(f) for f in data["done"]),
                       removed={str(k): int(v) for k, v in data.get("removed", {}).items()},
                       current=None if current is None else Current(**current))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise GovernanceError(f"{path} is not a valid erase intent; nothing was changed") from None

    def with_current(self, current: Current | None) -> Intent:
        """The same intent with another journal in flight (or none)."""
        return replace(self, current=current)

    def finished(self, path: str, dropped: int, kind: str) -> Intent:
        """The intent once ``path`` is done, with its dropped lines counted under ``kind``."""
        removed = dict(self.removed)
        removed[kind] = removed.get(kind, 0) + dropped
        return replace(self, current=None, done=(*self.done, path), removed=removed)

    def save(self, root: Path) -> None:
        """Write atomically: a temporary file, fsync, rename over, fsync the directory."""
        target = erase_intent_path(root)
        tmp = target.with_name(f"{target.name}.{uuid.uuid4().hex}.tmp")
        data = (json.dumps(self.to_json(), sort_keys=True) + "\n").encode()
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, target)
            fsync_dir(root)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise GovernanceError(f"cannot write {target}: {exc.strerror}") from None

    @staticmethod
    def load(root: Path) -> Intent | None:
        """The intent left by an interrupted operation, or None."""
        path = erase_intent_path(root)
        data = read_json_file(path, error=GovernanceError,
                              invalid="is not a valid erase intent; nothing was changed")
        return None if data is None else Intent.from_json(data, path)

    @staticmethod
    def clear(root: Path) -> None:
        """Remove the intent (the operation is complete) and the work directory."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(erase_intent_path(root))
        fsync_dir(root)
        clean_work(root)
        with contextlib.suppress(OSError):
            os.rmdir(erase_work_path(root))


def clean_work(root: Path) -> None:
    """Remove the filtered copies (call only when no saved intent has a ``current`` naming one)."""
    work = erase_work_path(root)
    with contextlib.suppress(OSError):
        for name in os.listdir(work):
            os.unlink(work / name)


def fsync_dir(path: Path) -> None:
    """fsync a directory so a rename or unlink in it is durable (best effort)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def work_dir(root: Path) -> Path:
    """``<root>/.erase-work``: filtered copies, owner-only, outside the store."""
    path = erase_work_path(root)
    path.mkdir(mode=0o700, exist_ok=True)
    return path


@contextmanager
def governance_lock(root: Path, *, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold ``<root>/.governance.lock``: one erase, retention or recovery at a time.

    Raises:
        GovernanceError: another one held it past the deadline.
    """
    import filelock

    path = governance_lock_path(root)
    lock = filelock.FileLock(str(path), timeout=timeout)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise GovernanceError(f"another erase or retention holds {path}; try again") from None
    try:
        yield
    finally:
        lock.release()
