"""The audit log: ``<root>/audit.jsonl``, one record per export, erasure, retention pass or verify.

Every command that writes data out of the store records here, refusals and failures too: ``share``,
``export-parquet``, ``export-otlp``, ``export-issues`` and ``generate`` (``EXPORT_ACTIONS``), through
``audited``.  It sits in the journal layer, under the exports of every layer above (the Parquet export
of ``tables`` included); ``governance.audit`` is its public home.

Outside ``store/``, so it is never in a share envelope; appended with the journal writer's rules (4 MiB
bound, exclusive lock on the file itself, one write, undone on failure); never trimmed by retention.
A record says who did what and how it ended, in counts, labels and root-relative paths: never content,
never a note, never a raw session value (only its token).  Every field is checked on the way in: a
label that is not a label, or a count that is not a count, is replaced, not written.

Writing it never fails the action it describes: ``record`` catches every failure, prints one warning
line on stderr and returns False, and the caller counts that in its output.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..clock import now_ts
from ..errors import (
    GovernanceError,
    JournalError,
    LockTimeout,
    ShareOutputError,
    ShareRefused,
    UsageError,
    describe,
)
from ..jsonfmt import loads
from ..privacy import valid_identifier, valid_server
from ..root import Root, RootLike
from ..root.layout import AUDIT, audit_path
from .append import append_line
from .read import iter_lines

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["ACTIONS", "AUDIT_NAME", "EXPORT_ACTIONS", "OUTCOMES", "AuditEntry", "audit_lines", "audit_log",
           "audit_path", "audited", "outcome_of", "read_audit", "reason_of", "record"]

#: ``root.layout.AUDIT``, the log's name under the root.
AUDIT_NAME = AUDIT
#: The commands (and their library functions) that write data out of the store, each audited.
EXPORT_ACTIONS = ("share", "export-parquet", "export-otlp", "export-issues", "generate",
                  "export-mock-profile")
ACTIONS = ("share", "erase", "retention", "verify", "record_annotation", "spawn", "catalog_pin",
           "export-parquet", "export-otlp", "export-issues", "generate", "export-mock-profile")
OUTCOMES = ("done", "refused", "failed")
_MAX_PATHS = 256


def _label(value: object) -> str:
    return value if isinstance(value, str) and (valid_server(value) or valid_identifier(value)) else "invalid"


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _relative(root: Path, path: str | os.PathLike[str]) -> str:
    text = os.fspath(path)
    if os.path.isabs(text):
        text = os.path.relpath(text, os.path.abspath(root))
    return text


def _user() -> tuple[str, int]:
    uid = os.getuid()
    try:
        import pwd

        return _label(pwd.getpwuid(uid).pw_name), uid
    except (KeyError, ImportError):
        return "unknown", uid


def _encode(root: Path, action: str, outcome: str, reason: str | None, labels: Mapping[str, object],
            counts: Mapping[str, object], paths: Iterable[str | os.PathLike[str]]) -> str:
    import json

    user, uid = _user()
    entry: dict[str, Any] = {"ts": now_ts(), "action": _label(action), "outcome": _label(outcome)}
    if reason is not None:
        entry["reason"] = _label(reason)
    entry.update({
        "user": user, "uid": uid,
        "labels": {_label(k): _label(v) for k, v in sorted(labels.items())},
        "counts": {_label(k): _count(v) for k, v in sorted(counts.items())},
        "paths": [_relative(root, p) for p in list(paths)[:_MAX_PATHS]],
    })
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":"))


def record(root: RootLike, *, action: str, outcome: str = "done", reason: str | None = None,
           labels: Mapping[str, object] | None = None, counts: Mapping[str, object] | None = None,
           paths: Iterable[str | os.PathLike[str]] = ()) -> bool:
    """Append one audit record; never raises.

    Args:
        root: the capture root.
        action: ``share``, ``erase``, ``retention``, ``verify``, ``record_annotation``, ``spawn``,
            ``catalog_pin``.
        outcome: ``done``, ``refused`` or ``failed``.
        reason: a reason label for a refusal or failure.
        labels: identifiers only (a session token, a server label, a finding id, a verdict).
        counts: non-negative integers (files, records per kind).
        paths: paths of what was written or removed (stored relative to the root).

    Returns:
        True when written; False after printing one warning line on stderr, or (silently) when the
        root does not exist: an action refused before there is a capture root creates none.
    """
    try:
        base = Root.of(root).path
    except JournalError:
        return False  # an unusable root is the action's own error to report
    if not base.is_dir():
        return False
    try:
        line = _encode(base, action, outcome, reason, labels or {}, counts or {}, paths)
        append_line(audit_path(base), line)
        return True
    except Exception as exc:  # the audit log never fails the action it describes
        with contextlib.suppress(Exception):  # stderr itself may be gone; the return value still tells
            sys.stderr.write(f"mcpeval-nb: warning: audit record not written to {audit_path(base)}: "
                             f"{describe(exc)}\n")
        return False


@dataclass
class AuditEntry:
    """What an ``audited`` action fills in as it goes: labels, counts and the paths it wrote."""

    labels: dict[str, object] = field(default_factory=dict)
    counts: dict[str, object] = field(default_factory=dict)
    paths: list[str | os.PathLike[str]] = field(default_factory=list)


@contextlib.contextmanager
def audited(root: RootLike, action: str, **labels: object) -> Iterator[AuditEntry]:
    """Record ``action`` when the block ends: ``done`` with what it filled in, or ``refused`` /
    ``failed`` with the error's reason label when it raises (the error goes on; a cancel is a failure).

    Args:
        root: the capture root (no record when it does not exist).
        action: one of ``ACTIONS``.
        labels: identifiers known before the action starts.

    Returns:
        A context manager yielding the ``AuditEntry`` to fill.
    """
    entry = AuditEntry(labels=dict(labels))
    try:
        yield entry
    except BaseException as exc:
        record(root, action=action, outcome=outcome_of(exc), reason=reason_of(exc), labels=entry.labels,
               counts=entry.counts, paths=entry.paths)
        raise
    record(root, action=action, labels=entry.labels, counts=entry.counts, paths=entry.paths)


def outcome_of(exc: BaseException) -> str:
    """``refused`` for an action turned down before it changed anything (bad arguments, an unusable
    output, a redaction refusal, another erase running), ``failed`` for one that could not complete."""
    refused = UsageError | GovernanceError | ShareOutputError | ShareRefused
    return "refused" if isinstance(exc, refused) else "failed"


def reason_of(exc: BaseException) -> str:
    """The reason label of a refused or failed action: the error's class, never its message."""
    for kind, label in ((UsageError, "usage-error"), (ShareOutputError, "unusable-output"),
                        (ShareRefused, "redaction-flagged"), (LockTimeout, "lock-timeout"),
                        (GovernanceError, "busy-or-interrupted"), (JournalError, "journal-error")):
        if isinstance(exc, kind):
            return label
    return "error"


def read_audit(root: RootLike = None) -> list[dict[str, Any]]:
    """Every complete audit record, oldest first (an unreadable line is skipped).

    Raises:
        JournalError: the log exists but cannot be opened or read.
    """
    path = audit_path(Root.of(root).path)
    if not path.exists():
        return []
    entries: list[dict[str, Any]] = []
    for raw in iter_lines(path):
        try:
            value = loads(raw.data)
        except ValueError:
            continue
        if isinstance(value, dict):
            entries.append(value)
    return entries


_COLUMNS = ("ts", "action", "outcome", "reason", "user", "uid", "labels", "counts", "paths")


def audit_log(root: RootLike = None) -> pa.Table:
    """The audit log as an Arrow table (one row per record, oldest first).

    Columns: ``ts``, ``action``, ``outcome``, ``reason`` (strings; reason null when done), ``user``,
    ``uid`` (int64), ``labels`` (map string -> string), ``counts`` (map string -> int64), ``paths``
    (list of strings, relative to the root).
    """
    import pyarrow as pa

    schema = pa.schema([
        ("ts", pa.string()), ("action", pa.string()), ("outcome", pa.string()), ("reason", pa.string()),
        ("user", pa.string()), ("uid", pa.int64()), ("labels", pa.map_(pa.string(), pa.string())),
        ("counts", pa.map_(pa.string(), pa.int64())), ("paths", pa.list_(pa.string())),
    ])
    rows = [{name: _cell(entry, name) for name in _COLUMNS} for entry in read_audit(root)]
    return pa.Table.from_pylist(rows, schema=schema)


def _cell(entry: dict[str, Any], name: str) -> Any:
    value = entry.get(name)
    if name in ("labels", "counts"):
        return list(value.items()) if isinstance(value, dict) else []
    if name == "paths":
        return value if isinstance(value, list) else []
    return value


def audit_lines(entries: list[dict[str, Any]]) -> list[str]:
    """One text line per record: ``<ts> <action> <outcome>[ reason=..] user=<u> uid=<n> k=v ...``."""
    lines = []
    for entry in entries:
        parts = [str(entry.get("ts")), str(entry.get("action")), str(entry.get("outcome"))]
        if entry.get("reason"):
            parts.append(f"reason={entry['reason']}")
        parts += [f"user={entry.get('user')}", f"uid={entry.get('uid')}"]
        parts += [f"{k}={v}" for k, v in (entry.get("labels") or {}).items()]
        parts += [f"{k}={v}" for k, v in (entry.get("counts") or {}).items()]
        paths = entry.get("paths") or []
        if paths:
            parts.append("paths=" + ",".join(str(p) for p in paths))
        lines.append(" ".join(parts))
    return lines
