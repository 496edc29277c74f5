"""``mcpeval-nb phases DIR``: what changed between the phases of a capture.

Reads ``phases.json`` and the snapshots it names (each at most 4 MiB, names re-checked against the tool
grammar, so a hand-edited file cannot put prose on the terminal) and compares each phase with the one
before: tools added, removed and changed (which of description, schema, hints changed, from the salted
digests and numbers), and the listing's token cost per phase.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ...errors import DocumentError
from ...jsonfmt import JSONFormatError, loads
from ...limits import MAX_RECORD_BYTES
from ...privacy.grammar import valid_identifier, valid_server
from ...probe.cases import listed
from ...probe.render import Format, FormatSet, json_text, render
from ..manifest import read_bounded
from .capture import INDEX_FILE, INDEX_SCHEMA
from .snapshot import SNAPSHOT_SCHEMA

__all__ = ["PHASE_DIFF_SCHEMA", "PhaseChange", "PhaseView", "load_phases"]

PHASE_DIFF_SCHEMA = "mcpeval-nb.phase-diff/v1"
_ASPECTS = (("description", "description_digest"), ("schema", "schema_digest"), ("hints", "hints"))


def _read(path: Path) -> Any:
    raw = read_bounded(path, MAX_RECORD_BYTES, what="phase file", error=DocumentError)
    try:
        return loads(raw)
    except JSONFormatError:
        raise DocumentError(f"{path} is not JSON") from None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


@dataclass(frozen=True)
class PhaseChange:
    """One phase compared with the one before (the first phase: everything ``added``)."""

    name: str
    tool_count: int
    total_tokens: int
    resources: int | None
    prompts: int | None
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[tuple[str, tuple[str, ...]], ...]

    def to_dict(self) -> dict[str, Any]:
        """The phase as the phase-diff document holds it."""
        return {
            "name": self.name,
            "tool_count": self.tool_count,
            "total_tokens": self.total_tokens,
            "resources": self.resources,
            "prompts": self.prompts,
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": [{"tool": t, "aspects": list(a)} for t, a in self.changed],
        }


def _tools(snapshot: Any) -> dict[str, dict[str, Any]]:
    tools = snapshot.get("tools") if isinstance(snapshot, dict) else None
    found: dict[str, dict[str, Any]] = {}
    for tool in tools if isinstance(tools, list) else ():
        if isinstance(tool, dict) and listed(tool.get("name")) != "unlisted":
            found[str(tool["name"])] = tool
    return found


def _change(name: str, snap: dict[str, Any], before: dict[str, dict[str, Any]] | None) -> PhaseChange:
    now = _tools(snap)
    old = before or {}
    changed = []
    for tool in sorted(set(now) & set(old)):
        aspects = tuple(label for label, key in _ASPECTS if now[tool].get(key) != old[tool].get(key))
        if aspects:
            changed.append((tool, aspects))
    return PhaseChange(
        name=name,
        tool_count=_count(snap.get("tool_count")) or 0,
        total_tokens=_count(snap.get("total_tokens")) or 0,
        resources=_count(snap.get("resources")),
        prompts=_count(snap.get("prompts")),
        added=tuple(sorted(set(now) - set(old))),
        removed=tuple(sorted(set(old) - set(now))),
        changed=tuple(changed),
    )


@dataclass(frozen=True)
class PhaseView:
    """A capture read back: the server label and each phase's change."""

    #: The phase view's format table.
    FORMATS: ClassVar[FormatSet[PhaseView]] = FormatSet(
        (Format("text", lambda v, _: v.to_text()), Format("json", lambda v, _: v.to_json())),
        unknown="format must be text or json")

    server: str
    phases: tuple[PhaseChange, ...]

    def to_json(self) -> str:
        """The ``mcpeval-nb.phase-diff/v1`` document (pretty, key-sorted, trailing newline)."""
        doc = {
            "schema": PHASE_DIFF_SCHEMA,
            "server": self.server,
            "phases": [p.to_dict() for p in self.phases],
        }
        return json_text(doc)

    def to_text(self) -> str:
        """One line per phase with its cost and change counts, then the names that changed."""
        lines = [f"phases of {self.server} ({len(self.phases)})"]
        for i, p in enumerate(self.phases):
            head = f"  {p.name} tools={p.tool_count} tokens={p.total_tokens}"
            head += "".join(
                f" {k}={v}" for k, v in (("resources", p.resources), ("prompts", p.prompts)) if v is not None
            )
            if i:
                head += f" +{len(p.added)} -{len(p.removed)} ~{len(p.changed)}"
            lines.append(head)
            if i:
                lines += [f"    added {t}" for t in p.added] + [f"    removed {t}" for t in p.removed]
                lines += [f"    changed {t} ({', '.join(a)})" for t, a in p.changed]
        return "\n".join(lines) + "\n"

    def render(self, fmt: str = "text") -> str:
        """``text`` or ``json``.

        Raises:
            UsageError: an unknown format.
        """
        return render(self, fmt)


def load_phases(directory: str | Path) -> PhaseView:
    """Read a capture written by ``capture_phases`` and compare its phases in order.

    Raises:
        DocumentError: a missing or unreadable index or snapshot, or one that is not this format.
    """
    base = Path(directory)
    index = _read(base / INDEX_FILE)
    entries = index.get("phases") if isinstance(index, dict) else None
    if not isinstance(index, dict) or index.get("schema") != INDEX_SCHEMA or not isinstance(entries, list):
        raise DocumentError(f"{base / INDEX_FILE} is not a phase capture index ({INDEX_SCHEMA})")
    server = index.get("server")
    changes: list[PhaseChange] = []
    before: dict[str, dict[str, Any]] | None = None
    for n, entry in enumerate(entries, start=1):
        name = entry.get("name") if isinstance(entry, dict) else None
        file = entry.get("file") if isinstance(entry, dict) else None
        if not valid_identifier(name) or file != f"{n:02d}-{name}.json":
            raise DocumentError(f"{base / INDEX_FILE}: phase #{n} is not a valid entry")
        snap = _read(base / file)
        if not isinstance(snap, dict) or snap.get("schema") != SNAPSHOT_SCHEMA:
            raise DocumentError(f"{base / file} is not a phase snapshot ({SNAPSHOT_SCHEMA})")
        changes.append(_change(str(name), snap, before))
        before = _tools(snap)
    return PhaseView(server=str(server) if valid_server(server) else "invalid", phases=tuple(changes))
