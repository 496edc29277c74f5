"""``mcpeval-nb compare``: the standard battery against several targets, side by side (SPEC 15).

Each target gets its own run (own budget, own connections); a target whose battery could not complete
shows ``error`` with its reason.  ``compare`` never gates: its exit code is 0, or 3 when a target errored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import UsageError
from ..privacy.grammar import valid_server
from ..transport.messages import Target
from .readiness.battery import BatteryOptions, score_server
from .readiness.labels import AREAS
from .report import ProbeReport

__all__ = ["Comparison", "compare_servers"]


@dataclass(frozen=True)
class Comparison:
    """One report per labelled target, in the order given."""

    reports: tuple[tuple[str, ProbeReport], ...]

    @property
    def exit_code(self) -> int:
        """0, or 3 when any target's battery could not complete (never 1: compare does not gate)."""
        return 3 if any(r.readiness is None for _, r in self.reports) else 0

    def rows(self) -> list[list[str]]:
        """Header row, one row per area, then ``overall``."""
        header = ["area", *(label for label, _ in self.reports)]
        cells: list[dict[str, str]] = []
        for _, report in self.reports:
            r = report.readiness
            if r is None:
                cells.append({name: f"error:{report.readiness_error}" for name, _ in AREAS} |
                             {"overall": f"error:{report.readiness_error}"})
                continue
            cells.append({a.name: str(a.score) for a in r.areas} | {"overall": str(r.score)})
        names = [name for name, _ in AREAS] + ["overall"]
        return [header] + [[name, *(c.get(name, "-") for c in cells)] for name in names]

    def render_text(self) -> str:
        """A space-aligned table."""
        rows = self.rows()
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        return "".join(" ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() + "\n"
                       for row in rows)

    def render_markdown(self) -> str:
        """A markdown table."""
        rows = self.rows()
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * len(rows[0])]
        lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
        return "\n".join(lines) + "\n"


def compare_servers(targets: Sequence[tuple[str, Target]], *,
                    options: BatteryOptions | None = None) -> Comparison:
    """Score every target with the standard battery.

    Args:
        targets: (label, target) pairs; at least two, labels unique and valid server labels.
        options: battery options shared by every target.

    Returns:
        The comparison.

    Raises:
        UsageError: fewer than two targets, or a label that is invalid or repeated.
    """
    if len(targets) < 2:
        raise UsageError("compare needs at least two targets")
    labels = [label for label, _ in targets]
    if len(set(labels)) != len(labels) or not all(valid_server(label) for label in labels):
        raise UsageError("compare target labels must be valid server labels and unique")
    quiet = dataclasses.replace(options or BatteryOptions(), history=False)  # compare records no trends
    return Comparison(tuple((label, score_server(target, server=label, options=quiet))
                            for label, target in targets))
