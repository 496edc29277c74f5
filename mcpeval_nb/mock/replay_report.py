"""The replay report: per tool recorded versus replayed, its verdict, on the one format table.

``ReplayReport`` is the document ``mcpeval-nb replay`` prints (``FORMATS``: ``text``, ``json``
(``mcpeval-nb.replay-report/v1``) and ``junit``) and ``replay`` returns; ``table`` is the same as an
Arrow table, and ``charts.plot_replay_comparison`` draws it.  Everything in it is a label, a count, a
rate, a code, a template id or milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import pyarrow as pa

from ..junit import JUnitCase, JUnitSuite, render_junit
from ..probe.render import Format, FormatSet, RenderOptions, aligned, json_text, lines_text
from .replay_compare import Side, ToolVerdict
from .replay_mix import SKIP_REASONS

__all__ = ["REPLAY_SCHEMA", "REPLAY_TABLE_SCHEMA", "ReplayReport"]

REPLAY_SCHEMA = "mcpeval-nb.replay-report/v1"
_SIDE_COLUMNS = ("calls", "failures", "rate", "rate_low", "rate_high", "p50", "p50_low", "p50_high", "p95",
                 "p95_low", "p95_high")
#: The columns of ``ReplayReport.table``.
REPLAY_TABLE_SCHEMA = pa.schema(
    [("server", pa.string()), ("tool", pa.string()), ("verdict", pa.string()),
     ("reasons", pa.list_(pa.string()))]
    + [(f"{side}_{c}", pa.int64() if c in ("calls", "failures") else pa.float64())
       for side in ("recorded", "replayed") for c in _SIDE_COLUMNS]
    + [("new_codes", pa.list_(pa.string())), ("new_templates", pa.list_(pa.string())),
       ("skipped", pa.int64())])


def _side_row(prefix: str, side: Side) -> dict[str, Any]:
    values = (side.calls, side.failures, side.rate.value, side.rate.low, side.rate.high, side.p50.value,
              side.p50.low, side.p50.high, side.p95.value, side.p95.low, side.p95.high)
    return {f"{prefix}_{c}": v for c, v in zip(_SIDE_COLUMNS, values, strict=True)}


def _pct(side: Side) -> str:
    if side.rate.value is None:
        return "-"
    return f"{side.rate.value:.1%} [{side.rate.low:.1%}-{side.rate.high:.1%}]"


def _ms(side: Side) -> str:
    p95 = side.p95
    if p95.value is None:
        return "-"
    return f"{p95.value:.0f} [{p95.low:.0f}-{p95.high:.0f}]"


@dataclass(frozen=True)
class ReplayReport:
    """What a replay found.

    Attributes:
        server: the recorded server's label. seed / sample: the draw. reached: the build answered.
        tools: per tool, worst verdict first. made: calls made. skipped: drawn calls not made, per reason.
        since / until: the recording's window.
    """

    server: str
    seed: int
    sample: int
    made: int
    tools: tuple[ToolVerdict, ...]
    skipped: dict[str, int] = field(default_factory=dict)
    reached: bool = True
    since: str | None = None
    until: str | None = None

    FORMATS: ClassVar[FormatSet[ReplayReport]]

    @property
    def regressed(self) -> tuple[str, ...]:
        """The tools that regressed."""
        return tuple(t.tool for t in self.tools if t.verdict == "regressed")

    @property
    def exit_code(self) -> int:
        """1 on any regression, 3 when the build could not be reached, else 0."""
        return 3 if not self.reached else 1 if self.regressed else 0

    def verdict(self, tool: str) -> str | None:
        """The verdict of one tool (None: not drawn)."""
        return next((t.verdict for t in self.tools if t.tool == tool), None)

    @property
    def table(self) -> pa.Table:
        """One row per tool: verdict, reasons, both sides' counts, rates and latency intervals."""
        rows = [{"server": self.server, "tool": t.tool, "verdict": t.verdict, "reasons": list(t.reasons),
                 **_side_row("recorded", t.recorded), **_side_row("replayed", t.replayed),
                 "new_codes": list(t.new_codes), "new_templates": list(t.new_templates),
                 "skipped": sum(t.skipped.values())} for t in self.tools]
        return pa.Table.from_pylist(rows, schema=REPLAY_TABLE_SCHEMA)

    def to_json(self) -> dict[str, Any]:
        """The ``mcpeval-nb.replay-report/v1`` document."""
        return {"schema": REPLAY_SCHEMA, "server": self.server, "seed": self.seed, "sample": self.sample,
                "made": self.made, "reached": self.reached,
                "window": {"since": self.since, "until": self.until},
                "skipped": {r: self.skipped[r] for r in SKIP_REASONS if r in self.skipped},
                "regressed": list(self.regressed), "tools": [t.to_json() for t in self.tools]}

    def text_lines(self) -> list[str]:
        """The text report."""
        skipped = sum(self.skipped.values())
        why = ", ".join(f"{r} {self.skipped[r]}" for r in SKIP_REASONS if r in self.skipped)
        head = (f"replay {self.server}: {self.sample} drawn, {self.made} made, {skipped} skipped"
                + (f" ({why})" if why else ""))
        if not self.reached:
            return [head, "the build could not be reached; nothing was compared"]
        rows = [["tool", "verdict", "failures recorded -> replayed", "p95 ms recorded -> replayed", "why"]]
        for t in self.tools:
            detail = list(t.reasons) + [f"new code {c}" for c in t.new_codes]
            rows.append([t.tool, t.verdict, f"{_pct(t.recorded)} -> {_pct(t.replayed)}",
                         f"{_ms(t.recorded)} -> {_ms(t.replayed)}", ", ".join(dict.fromkeys(detail)) or "-"])
        tail = f"regressed: {', '.join(self.regressed)}" if self.regressed else "no regression"
        return [head, *aligned(rows, sep="  "), tail]

    def junit(self) -> str:
        """JUnit XML: one suite, one case per tool; a regression is a failure."""
        status = {"regressed": "failure", "insufficient-evidence": "skipped"}
        cases = [JUnitCase(name=t.tool, classname=f"mcpeval.{self.server}.replay",
                           status=status.get(t.verdict, "passed"),
                           message=", ".join(t.reasons) or t.verdict if t.verdict != "same" else None,
                           type=t.reasons[0] if t.verdict == "regressed" and t.reasons else None,
                           text=f"failures {_pct(t.recorded)} -> {_pct(t.replayed)}; p95 ms "
                                f"{_ms(t.recorded)} -> {_ms(t.replayed)}")
                 for t in self.tools]
        if not self.reached:
            cases = [JUnitCase(name="connect", classname=f"mcpeval.{self.server}.replay", status="error",
                               message="the build could not be reached")]
        return render_junit([JUnitSuite(name=f"replay {self.server}", cases=tuple(cases))],
                            name="mcpeval-nb replay")

    def render(self, fmt: str = "text") -> str:
        """The report in a format of ``FORMATS`` (``text``, ``json``, ``junit``)."""
        return ReplayReport.FORMATS.render(self, fmt)

    def __repr__(self) -> str:
        return f"ReplayReport(server={self.server!r}, made={self.made}, regressed={list(self.regressed)})"

    def _repr_html_(self) -> str:
        frame = self.table.select(["tool", "verdict", "reasons", "recorded_rate", "replayed_rate",
                                   "recorded_p95", "replayed_p95"]).to_pandas()
        html: str = frame.to_html(index=False)
        return f"<p><b>replay</b> {self.server}: {self.made} calls made</p>" + html


def _text(doc: ReplayReport, _options: RenderOptions) -> str:
    return lines_text(doc.text_lines())


def _json(doc: ReplayReport, _options: RenderOptions) -> str:
    return json_text(doc.to_json())


def _junit(doc: ReplayReport, _options: RenderOptions) -> str:
    return doc.junit()


ReplayReport.FORMATS = FormatSet(
    formats=(Format("text", _text), Format("json", _json), Format("junit", _junit)),
    unknown="replay --format must be text, json or junit")
