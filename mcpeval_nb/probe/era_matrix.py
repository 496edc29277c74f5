"""``mcpeval-nb compare --eras``: one server probed as ``legacy``, ``auto`` and ``2026-07-28``.

Each column is a battery run of its own (``score_server`` with that ``--protocol``, own budget and
connections, no trend point): which eras the server serves, which era ``auto`` finds, the readiness
under each (``mcpeval-standard/2`` for the handshake era, ``mcpeval-modern/1`` for 2026-07-28) and what
fails in each (a protocol mismatch, a transport reason, the lost protocol checks).  The matrix never
gates: exit 0, or 3 when a column could not complete for another reason than the era (a server that
serves one era only is a finding, not an error).  Text, markdown, JSON (``mcpeval-nb.era-matrix/v1``)
and JUnit (one test case per column: a failure per lost protocol check, ``skipped`` for an era the
server does not serve).  Only labels and numbers are printed.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import ProtocolMismatch, UsageError
from ..junit import JUnitCase, JUnitSuite, render_junit
from ..privacy.grammar import valid_server
from ..transport.era import LEGACY, MODERN_VERSION, PROTOCOL_CHOICES
from ..transport.messages import Target
from .readiness.battery import BatteryOptions, score_server
from .render import Format, FormatSet, json_text, render
from .report import ProbeReport

__all__ = ["ERA_MATRIX_FORMATS", "ERA_MATRIX_SCHEMA", "EraColumn", "EraMatrix", "era_matrix"]

ERA_MATRIX_SCHEMA = "mcpeval-nb.era-matrix/v1"
#: The columns, in the order printed.
ORDER = (LEGACY, "auto", MODERN_VERSION)
MISMATCH = "protocol-mismatch"


@dataclass(frozen=True)
class EraColumn:
    """One ``--protocol`` choice against the server.

    Attributes:
        protocol: ``legacy``, ``auto`` or ``2026-07-28``.
        report: the battery's report, or None when the server does not serve that era.
        mismatch: the server does not serve the era (``ProtocolMismatch``).
    """

    protocol: str
    report: ProbeReport | None
    mismatch: bool = False

    @property
    def era(self) -> str | None:
        """The era spoken (``legacy``/``modern``), None when none was."""
        return None if self.report is None or self.report.protocol is None else self.report.protocol.era

    @property
    def error(self) -> str | None:
        """``protocol-mismatch``, a transport reason label, or None."""
        if self.mismatch:
            return MISMATCH
        return None if self.report is None else self.report.readiness_error

    @property
    def lost_protocol_checks(self) -> tuple[str, ...]:
        """The protocol checks that lost points, in report order."""
        r = None if self.report is None else self.report.readiness
        return () if r is None else tuple(c.id for c in r.area("protocol").checks)

    def to_json(self) -> dict[str, Any]:
        """The column's JSON object (sorted keys)."""
        r = None if self.report is None else self.report.readiness
        spoken = None if self.report is None else self.report.protocol
        return {"areas": {} if r is None else {a.name: a.score for a in r.areas}, "era": self.era,
                "error": self.error, "lost_protocol_checks": list(self.lost_protocol_checks),
                "protocol": self.protocol, "score": None if r is None else r.score,
                "served": not self.mismatch, "standard": None if r is None else r.standard,
                "version": None if spoken is None else spoken.version}


@dataclass(frozen=True)
class EraMatrix:
    """The three columns for one server."""

    server: str
    columns: tuple[EraColumn, ...]

    def column(self, protocol: str) -> EraColumn:
        """The column of one ``--protocol`` choice."""
        return next(c for c in self.columns if c.protocol == protocol)

    @property
    def serves(self) -> dict[str, bool]:
        """``{"legacy": ..., "modern": ...}``: the eras the server answered in."""
        return {"legacy": not self.column(LEGACY).mismatch,
                "modern": not self.column(MODERN_VERSION).mismatch}

    @property
    def exit_code(self) -> int:
        """0, or 3 when a column could not complete for a reason other than the era."""
        return 3 if any(c.error not in (None, MISMATCH) for c in self.columns) else 0

    def to_json(self) -> dict[str, Any]:
        """``{"columns", "schema", "serves", "server"}``."""
        return {"columns": [c.to_json() for c in self.columns], "schema": ERA_MATRIX_SCHEMA,
                "serves": self.serves, "server": self.server}

    FORMATS: ClassVar[FormatSet[EraMatrix]] = FormatSet(
        (Format("text", lambda m, _: m.render_text()), Format("markdown", lambda m, _: m.render_markdown()),
         Format("json", lambda m, _: json_text(m.to_json())),
         Format("junit", lambda m, _: render_junit(m.junit_suites(), name="mcpeval-nb compare --eras"))),
        unknown="unknown era matrix format; use one of text, markdown, json, junit")

    def render(self, fmt: str = "text") -> str:
        """Render in one of ``ERA_MATRIX_FORMATS`` (the ``FORMATS`` table).

        Raises:
            UsageError: an unknown format.
        """
        return render(self, fmt)

    def _serves_line(self) -> str:
        parts = [f"{era} {'served' if ok else 'not served'}" for era, ok in self.serves.items()]
        return f"{self.server} eras: " + ", ".join(parts)

    def render_text(self) -> str:
        """One line for the eras served, then one per column."""
        lines = [self._serves_line()]
        for c in self.columns:
            head = f"  protocol={c.protocol}"
            if c.error is not None:
                lines.append(f"{head} error={c.error}")
                continue
            r = c.report.readiness if c.report is not None else None
            if r is None:
                continue
            lost = ",".join(c.lost_protocol_checks) or "none"
            version = c.report.protocol.version if c.report and c.report.protocol else "-"
            lines.append(f"{head} era={c.era} version={version} readiness {r.score}/100 "
                         f"standard={r.standard} lost_protocol={lost}")
        return "".join(line + "\n" for line in lines)

    def render_markdown(self) -> str:
        """A table: one row per column."""
        out = [f"# Protocol eras: {self.server}", "", self._serves_line().split(": ", 1)[1], "",
               "| --protocol | era | version | readiness | standard | lost protocol checks | error |",
               "| --- | --- | --- | --- | --- | --- | --- |"]
        for c in self.columns:
            j = c.to_json()
            cells = [c.protocol, j["era"] or "-", j["version"] or "-",
                     "-" if j["score"] is None else f"{j['score']}/100", j["standard"] or "-",
                     ", ".join(f"`{i}`" for i in c.lost_protocol_checks) or "-", j["error"] or "-"]
            out.append("| " + " | ".join(cells) + " |")
        return "\n".join(out) + "\n"

    def junit_suites(self) -> tuple[JUnitSuite, ...]:
        """One suite: a case per column (``skipped`` when not served, ``error`` when it could not
        complete, ``failure`` naming the lost protocol checks)."""
        cases = []
        for c in self.columns:
            name, cls = f"protocol {c.protocol}", f"mcpeval.{self.server}.eras"
            if c.mismatch:
                cases.append(JUnitCase(name, cls, "skipped",
                                       message=f"the server does not serve {c.protocol}"))
            elif c.error is not None:
                cases.append(JUnitCase(name, cls, "error", message=c.error, type=c.error))
            elif c.lost_protocol_checks:
                cases.append(JUnitCase(name, cls, "failure", message="protocol checks lost",
                                       type="protocol-checks", text=" ".join(c.lost_protocol_checks)))
            else:
                cases.append(JUnitCase(name, cls))
        return (JUnitSuite(f"mcpeval eras {self.server}", tuple(cases)),)


def era_matrix(target: Target, *, server: str, options: BatteryOptions | None = None,
               cancel: threading.Event | None = None) -> EraMatrix:
    """Score ``target`` as ``legacy``, ``auto`` and ``2026-07-28`` (three runs; nothing recorded).

    Args:
        target: the server. server: its label.
        options: battery options shared by the columns (their ``protocol`` and ``history`` are set here).
        cancel: set to stop between calls.

    Returns:
        The matrix.

    Raises:
        UsageError: an invalid label or ``--skip-tool`` name (nothing scored).
    """
    if not valid_server(server):
        raise UsageError("server label is invalid")
    base = options or BatteryOptions()
    columns = []
    for protocol in ORDER:
        assert protocol in PROTOCOL_CHOICES
        chosen = dataclasses.replace(base, protocol=protocol, history=False)
        try:
            columns.append(EraColumn(protocol, score_server(target, server=server, options=chosen,
                                                            cancel=cancel)))
        except ProtocolMismatch:
            columns.append(EraColumn(protocol, None, mismatch=True))
    return EraMatrix(server, tuple(columns))


#: The era matrix's formats, in ``--format`` order.
ERA_MATRIX_FORMATS = EraMatrix.FORMATS.names
