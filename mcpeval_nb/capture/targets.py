"""Whether the store holds the call an annotation targets: a byte search of the call journals.

The needle is the session token (or the raw session value, as older and foreign journals store it) or the
event id; only the lines holding it are parsed, re-sanitised (SPEC 2.2) and compared, so a store of a
million calls is searched at the speed of ``bytes.find`` over its snapshot.  Lines that cannot be read are
passed over, over-long ones included (a target is either found in a readable record or not found).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..journal.listing import journals
from ..journal.snapshot import Cursor, locked_size, open_journal
from ..jsonfmt import JSONFormatError, dumps, loads
from ..privacy.records import CallRecord
from ..root.layout import CALLS
from ..tables.load import read_chunks

__all__ = ["CallTarget", "recorded"]


@dataclass(frozen=True)
class CallTarget:
    """What an annotation points at: a session token and a seq, or an event id (or both)."""

    session: str
    raw_session: str
    seq: int | None = None
    event_id: str | None = None

    def describe(self) -> str:
        """The target in words, for the refusal (the token, never the raw value)."""
        parts = [f"session {self.session}"] if self.event_id is None or self.seq is not None else []
        if self.seq is not None:
            parts.append(f"seq {self.seq}")
        if self.event_id is not None:
            parts.append(f"event id {self.event_id}")
        return " and ".join(parts)

    def needles(self) -> tuple[bytes, ...]:
        """Byte strings one of which every matching line holds."""
        if self.event_id is not None:
            return (self.event_id.encode(),)
        token = self.session.encode()
        raw = dumps(self.raw_session, sort_keys=False).encode("utf-8", "surrogatepass")
        return (token,) if raw[1:-1] == token else (token, raw)

    def matches(self, record: CallRecord) -> bool:
        """Whether a sanitised call record is the target."""
        event = None if record.identity is None else record.identity.event_id
        if self.event_id is not None and event != self.event_id:
            return False
        return self.seq is None or (record.seq == self.seq and record.session == self.session)


def recorded(root: Path, target: CallTarget) -> bool:
    """Whether a calls journal of the capture root ``root`` holds the target call.

    Raises:
        JournalError: a journal cannot be opened or listed. LockTimeout: a writer held one too long.
    """
    return any(_in_journal(journal.path, target) for journal in journals(root, CALLS.name))


def _in_journal(path: Path, target: CallTarget) -> bool:
    fd = open_journal(path)
    try:
        end = locked_size(fd, path)
        for chunk in read_chunks(fd, path, Cursor(), end, skip_oversized=True):
            data = bytes(chunk.data)
            if any(_hit(data, needle, target) for needle in target.needles()):
                return True
    finally:
        os.close(fd)
    return False


def _hit(data: bytes, needle: bytes, target: CallTarget) -> bool:
    pos = data.find(needle)
    while pos >= 0:
        start, end = data.rfind(b"\n", 0, pos) + 1, data.find(b"\n", pos)
        if _line_matches(data[start:end], target):
            return True
        pos = data.find(needle, end)
    return False


def _line_matches(line: bytes, target: CallTarget) -> bool:
    try:
        record = CallRecord.from_dict(loads(line)).sanitized()
    except (JSONFormatError, ValueError, TypeError):
        return False
    return target.matches(record)
