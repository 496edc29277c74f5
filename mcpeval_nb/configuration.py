"""``mcpeval-nb config``: the configuration a command resolves to, and where each part came from; and
``mcpeval-nb audit``'s document, the audit log (both on the one format table, ``probe.render``).

A report over several packages (the root and its salt, the journals, governance's retention, triage's
promotion threshold, the limits), so it sits above them all, on the floor of ``serve``: no lower package
imports a higher one to build it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from . import limits
from .errors import JournalError
from .governance.retention import configured_retention
from .journal.audit import audit_lines
from .journal.listing import journals
from .probe.render import Format, FormatSet, lines_text
from .root import Root, RootLike
from .root.layout import audit_path, config_path, salt_path
from .triage.scoring import resolve_threshold

__all__ = ["AuditLog", "ConfigReport", "resolve_config"]


@dataclass(frozen=True)
class ConfigReport:
    """The resolved configuration.

    Attributes:
        root: the capture root; ``root_source``: ``flag``, ``MCPEVAL_HOME`` or ``default``.
        salt: the salt's path (never to be shared) and whether it exists.
        journals: per kind (``calls``, ``annotations``, ``probe_history``, ``audit``): files and bytes.
        retention_days, promotion_threshold: values with their sources.
        limits: every bound in force (``limits.py``).
    """

    FORMATS: ClassVar[FormatSet[ConfigReport]] = FormatSet(
        (Format("text", lambda r, _: lines_text(r.lines())),
         Format("json", lambda r, _: json.dumps(r.to_json(), indent=2, sort_keys=True) + "\n")),
        unknown="unknown config format; use text or json")

    root: Path
    root_source: str
    salt: Path
    salt_exists: bool
    config_file: Path
    journals: dict[str, dict[str, int]]
    retention_days: int | None
    retention_source: str
    promotion_threshold: float
    threshold_source: str
    limits: dict[str, float]

    def to_json(self) -> dict[str, Any]:
        """The ``--format json`` document (paths as strings, each value with its source)."""
        return {
            "root": str(self.root), "root_source": self.root_source,
            "salt": {"path": str(self.salt), "exists": self.salt_exists, "share": False},
            "config_file": str(self.config_file), "journals": self.journals,
            "retention_days": {"value": self.retention_days, "source": self.retention_source},
            "promotion_threshold": {"value": self.promotion_threshold, "source": self.threshold_source},
            "limits": self.limits,
        }

    def lines(self) -> list[str]:
        """The text output, one setting per line."""
        lines = [f"root {self.root} (from {self.root_source})",
                 f"salt {self.salt} ({'present' if self.salt_exists else 'not created yet'}); "
                 "do not share it: it keys every template id",
                 f"config {self.config_file}"]
        for kind, sizes in self.journals.items():
            lines.append(f"journals {kind}: {sizes['files']} file(s), {sizes['bytes']} bytes")
        days = "unset (nothing is ever deleted)" if self.retention_days is None else str(self.retention_days)
        lines.append(f"retention_days {days} (from {self.retention_source})")
        lines.append(f"promotion_threshold {self.promotion_threshold:.6f} (from {self.threshold_source})")
        lines += [f"limit {name} {value}" for name, value in self.limits.items()]
        return lines

    def render(self, fmt: str = "text") -> str:
        """The report in ``fmt`` (``text`` or ``json``), as ``mcpeval-nb config`` prints it."""
        return self.FORMATS.render(self, fmt)


@dataclass(frozen=True)
class AuditLog:
    """The audit log as ``mcpeval-nb audit`` prints it (``read_audit``'s records, oldest first).

    Attributes:
        entries: the records (``read_audit``), possibly only the newest of them.
    """

    FORMATS: ClassVar[FormatSet[AuditLog]] = FormatSet(
        (Format("text", lambda a, _: lines_text(audit_lines(a.entries))),
         Format("json", lambda a, _: json.dumps(a.entries, indent=2, ensure_ascii=False) + "\n")),
        unknown="unknown audit format; use text or json")

    entries: list[dict[str, Any]]

    def last(self, count: int | None) -> AuditLog:
        """Only the newest ``count`` records (all of them for None)."""
        return self if count is None else AuditLog(self.entries[len(self.entries) - count:] if count else [])

    def render(self, fmt: str = "text") -> str:
        """The log in ``fmt`` (``text``: one line per record; ``json``: the records)."""
        return self.FORMATS.render(self, fmt)


def _sizes(paths: list[Path]) -> dict[str, int]:
    total = files = 0
    for path in paths:
        try:
            st = os.lstat(path)
        except OSError:
            continue
        files += 1
        total += st.st_size
    return {"files": files, "bytes": total}


def _journals(root: Path) -> dict[str, dict[str, int]]:
    try:
        found = journals(root, ("calls", "annotations", "catalogs", "trends"))
    except JournalError:
        found = []  # an unreadable store counts nothing here: config creates and refuses nothing
    def kind(name: str) -> list[Path]:
        return [j.path for j in found if j.kind == name]
    return {"calls": _sizes(kind("calls")), "annotations": _sizes(kind("annotations")),
            "catalogs": _sizes(kind("catalogs")),
            "probe_history": _sizes(kind("trends")), "audit": _sizes([audit_path(root)])}


def _limits() -> dict[str, float]:
    return {name: value for name, value in sorted(vars(limits).items())
            if name.isupper() and isinstance(value, int | float) and not isinstance(value, bool)}


def resolve_config(root: RootLike = None) -> ConfigReport:
    """Resolve the configuration as every command does, without creating anything.

    Args:
        root: the ``--root`` flag's value, if any.

    Raises:
        UsageError: ``config.json`` is unreadable or holds an invalid ``retention_days`` or
            ``promotion_threshold``.
    """
    home = Root.of(root)
    base = home.path
    days, days_source = configured_retention(base)
    threshold, threshold_source = resolve_threshold(base)
    return ConfigReport(root=base, root_source=home.source, salt=salt_path(base),
                        salt_exists=salt_path(base).exists(), config_file=config_path(base),
                        journals=_journals(base), retention_days=days, retention_source=days_source,
                        promotion_threshold=threshold, threshold_source=threshold_source,
                        limits=_limits())
