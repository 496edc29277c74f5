"""``mcpeval-nb compare``: the standard battery (or a manifest) against several targets, side by side
(SPEC 15).

Each target gets its own run (own budget, own connections); a target whose battery could not complete
shows ``error`` with its reason.  With a manifest every target runs its cases too (``gate`` row), and
with ``gate_only`` the cases alone; the manifest and the mutation gate are checked once, before any
target starts.  ``compare`` never gates and records nothing (no trend point, no synthetic journal): its
exit code is 0, or 3 when a target errored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..errors import UsageError
from ..privacy.grammar import valid_server
from ..transport.messages import Target
from .cases import ProbeCase
from .context import ProbeOptions
from .manifest import Manifest
from .plan import Work, select
from .readiness.battery import BatteryOptions, score_server
from .readiness.labels import AREAS
from .render import Format, FormatSet, aligned, json_text, lines_text, render
from .report import ProbeReport
from .runner import run_probes

__all__ = ["COMPARE_SCHEMA", "Comparison", "compare_servers"]

#: The schema name of ``Comparison.dumps()``.
COMPARE_SCHEMA = "mcpeval-nb.compare/v1"


@dataclass(frozen=True)
class Comparison:
    """One report per labelled target, in the order given."""

    #: The comparison's format table.
    FORMATS: ClassVar[FormatSet[Comparison]] = FormatSet(
        (Format("text", lambda c, _: c.render_text()), Format("markdown", lambda c, _: c.render_markdown()),
         Format("json", lambda c, _: c.dumps())),
        unknown="unknown compare format; use text, markdown or json")

    reports: tuple[tuple[str, ProbeReport], ...]

    gate_only: bool = False

    @property
    def exit_code(self) -> int:
        """0, or 3 when any target's battery or case could not complete (never 1: compare does not gate)."""
        if any(r.errored for _, r in self.reports):
            return 3
        return 0 if self.gate_only or all(r.readiness is not None for _, r in self.reports) else 3

    def rows(self) -> list[list[str]]:
        """Header row, ``gate`` when a manifest ran, one row per area and ``overall`` unless gate-only."""
        header = ["area", *(label for label, _ in self.reports)]
        cells: list[dict[str, str]] = []
        for _, report in self.reports:
            gate = report.gate
            cell = {} if gate is None else {"gate": f"{gate['passed']}/{gate['total']}"}
            r = report.readiness
            if r is None and report.readiness_error is not None:
                cell |= {name: f"error:{report.readiness_error}" for name, _ in AREAS}
                cell["overall"] = f"error:{report.readiness_error}"
            elif r is not None:
                cell |= {a.name: str(a.score) for a in r.areas} | {"overall": str(r.score)}
            cells.append(cell)
        names = ["gate"] if any("gate" in c for c in cells) else []
        names += [] if self.gate_only else [name for name, _ in AREAS] + ["overall"]
        return [header] + [[name, *(c.get(name, "-") for c in cells)] for name in names]

    def to_json(self) -> dict[str, Any]:
        """``{"schema", "targets": [{"label", "report"}]}``, each report the probe-report/v2 object."""
        return {"schema": COMPARE_SCHEMA,
                "targets": [{"label": label, "report": r.to_json()} for label, r in self.reports]}

    def dumps(self) -> str:
        """The comparison as pretty, key-sorted JSON with a trailing newline."""
        return json_text(self.to_json())

    def render(self, fmt: str = "text") -> str:
        """``text`` (aligned table), ``markdown`` or ``json``.

        Raises:
            UsageError: an unknown format.
        """
        return render(self, fmt)

    def render_text(self) -> str:
        """A space-aligned table."""
        return lines_text(aligned(self.rows()))

    def render_markdown(self) -> str:
        """A markdown table."""
        rows = self.rows()
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * len(rows[0])]
        lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
        return "\n".join(lines) + "\n"


def _probe(target: Target, label: str, manifest: Work[ProbeCase], battery: BatteryOptions, gate_only: bool,
           allow_mutation: bool) -> ProbeReport:
    options = ProbeOptions(server=label, allow_mutation=allow_mutation, journal=False, history=False,
                           battery=None if gate_only else "standard",
                           confirm_read_only=battery.confirm_read_only,
                           allow_open_world=battery.allow_open_world, skip_tools=battery.skip_tools,
                           protocol=battery.protocol)
    return run_probes(target, manifest=manifest, options=options)


def compare_servers(targets: Sequence[tuple[str, Target]], *, options: BatteryOptions | None = None,
                    manifest: Manifest | str | Path | None = None, gate_only: bool = False,
                    allow_mutation: bool = False) -> Comparison:
    """Score every target with the standard battery, or run a manifest (and the battery) against each.

    Args:
        targets: (label, target) pairs; at least two, labels unique and valid server labels.
        options: battery options shared by every target.
        manifest: a manifest (path or validated) every target runs before its battery.
        gate_only: the manifest's cases only, no battery (needs ``manifest``).
        allow_mutation: the operator's ``--allow-mutation`` for the manifest's mutating cases.

    Returns:
        The comparison.

    Raises:
        UsageError: fewer than two targets, a label that is invalid or repeated, ``gate_only`` without
            a manifest, an invalid manifest, or mutating cases without ``allow_mutation`` (before any
            target starts).
    """
    if len(targets) < 2:
        raise UsageError("compare needs at least two targets")
    labels = [label for label, _ in targets]
    if len(set(labels)) != len(labels) or not all(valid_server(label) for label in labels):
        raise UsageError("compare target labels must be valid server labels and unique")
    if gate_only and manifest is None:
        raise UsageError("--gate-only needs --manifest")
    quiet = dataclasses.replace(options or BatteryOptions(), history=False)  # compare records no trends
    if manifest is None:
        return Comparison(tuple((label, score_server(target, server=label, options=quiet))
                                for label, target in targets))
    chosen = select(manifest, allow_mutation=allow_mutation)  # the mutation gate, once, before any target
    return Comparison(tuple((label, _probe(target, label, chosen, quiet, gate_only, allow_mutation))
                            for label, target in targets), gate_only=gate_only)
