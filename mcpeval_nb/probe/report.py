"""Probe reports: case results, the ``mcpeval.probe-report/v2`` document, text and markdown (SPEC 9.1-9.5).

The JSON document is deterministic for identical inputs (sorted keys, 2-space pretty printing, no
timestamps, sessions, arguments, bodies, descriptions, schemas or error text); only latency numbers vary.
Readers accept v1 and v2 documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from .._version import __version__
from ..errors import DocumentError
from ..htmltext import lines_html
from ..jsonfmt import JSONFormatError, loads
from ..privacy.grammar import valid_identifier, valid_server, valid_tool
from ..transport.era import MODERN_VERSION, Negotiated
from .cases import MEASUREMENT_KEYS, CaseResult, Detail, listed
from .corpus import Corpus, placement_lines
from .cost import check_price, cost_suffix
from .kinds.table import KIND_TABLE
from .readiness.model import Readiness
from .readiness.parse import parse_readiness
from .readiness.text import readiness_lines
from .reasons import BOUND_NAMES, TRANSPORT_REASONS, is_reason
from .render import Format, FormatSet, RenderOptions, json_text, lines_text, render
from .report_junit import junit_format
from .sarif import sarif_format

__all__ = [
    "GENERATOR_NAME",
    "REPORT_FORMATS",
    "REPORT_SCHEMA_V1",
    "REPORT_SCHEMA_V2",
    "ProbeReport",
    "parse_report",
]

REPORT_SCHEMA_V1 = "mcpeval.probe-report/v1"
REPORT_SCHEMA_V2 = "mcpeval.probe-report/v2"
GENERATOR_NAME = "mcpeval-nb"


def _placement(report: ProbeReport, options: RenderOptions, sep: str) -> str:
    lines = placement_lines(options.corpus, report.readiness)
    return "".join(line + sep for line in lines)


def _text(report: ProbeReport, options: RenderOptions) -> str:
    return (report.render_text(brief=options.brief) + _placement(report, options, "\n")
            + cost_suffix(report, options, "text"))


def _markdown(report: ProbeReport, options: RenderOptions) -> str:
    placed = _placement(report, options, "\n\n")
    body = report.render_markdown(brief=options.brief)
    if placed:
        body += "\n" + placed.rstrip("\n") + "\n"
    return body + cost_suffix(report, options, "markdown")


def _json(report: ProbeReport, _options: RenderOptions) -> str:
    return report.dumps()


@dataclass(frozen=True)
class ProbeReport:
    """A probe run's report.

    Attributes:
        server: the server label. cases: case results in run order.
        manifest_sha256: the manifest hash, or None (battery-only runs).
        readiness: the battery's readiness, or None.
        readiness_error: a transport reason label when the battery could not complete, else None.
        schema: the document schema the report was read from or will be written as.
        generator: ``{"name", "version"}`` of the producing tool.
        cancelled: the run was cancelled; ``not_run`` lists the case ids that never started.
        legacy_score: a v1 document's display-only readiness score.
        protocol: the era and version the run spoke (``transport.era.Negotiated``), or None when no
            connection was made.  The document carries it (``protocol``) only for the 2026-07-28 era:
            a legacy run's document is byte-identical to what it was before the modern era existed.
    """

    #: The report's format table: the price of the session cost line is checked before any format writes.
    FORMATS: ClassVar[FormatSet[ProbeReport]] = FormatSet(
        (Format("text", _text), Format("json", _json), Format("markdown", _markdown),
         Format("sarif", sarif_format), Format("junit", junit_format)),
        unknown="unknown report format; use one of text, json, markdown, sarif, junit", check=check_price)

    server: str
    cases: tuple[CaseResult, ...]
    manifest_sha256: str | None = None
    readiness: Readiness | None = None
    readiness_error: str | None = None
    schema: str = REPORT_SCHEMA_V2
    generator: Mapping[str, str] = field(default_factory=dict)
    cancelled: bool = False
    not_run: tuple[str, ...] = ()
    legacy_score: Any = None
    protocol: Negotiated | None = None

    @property
    def modern(self) -> bool:
        """The run spoke the 2026-07-28 era."""
        return self.protocol is not None and self.protocol.modern

    @property
    def passed(self) -> bool:
        """Every case passed (vacuously true with no cases)."""
        return all(c.passed for c in self.cases)

    @property
    def gate(self) -> dict[str, int] | None:
        """``{"passed", "total"}`` when a manifest ran, else None."""
        if self.manifest_sha256 is None and not self.cases:
            return None
        return {"passed": sum(c.passed for c in self.cases), "total": len(self.cases)}

    @property
    def errored(self) -> bool:
        """A case or the battery could not complete, or the run was cancelled."""
        return self.cancelled or self.readiness_error is not None or any(c.errored for c in self.cases)

    @property
    def exit_code(self) -> int:
        """SPEC 9.4: 3 if anything errored, else 1 if a case failed, else 0."""
        return 3 if self.errored else (0 if self.passed else 1)

    def to_json(self) -> dict[str, Any]:
        """The probe-report/v2 object (``protocol`` only for a 2026-07-28 run)."""
        out = {
            "cases": [c.to_json() for c in self.cases], "gate": self.gate,
            "generator": dict(self.generator) or _generator(), "manifest_sha256": self.manifest_sha256,
            "passed": self.passed, "readiness": None if self.readiness is None else self.readiness.to_json(),
            "readiness_error": self.readiness_error, "schema": REPORT_SCHEMA_V2, "server": self.server,
        }
        if self.protocol is not None and self.protocol.modern:
            out["protocol"] = self.protocol.to_json()
        return out

    def dumps(self) -> str:
        """The v2 document as pretty, key-sorted JSON with a trailing newline (byte-stable)."""
        return json_text(self.to_json())

    def render(self, fmt: str = "text", *, brief: bool = False, manifest: str | Path | None = None,
               price_per_mtok: float | None = None, corpus: Corpus | None = None) -> str:
        """Render in one of ``REPORT_FORMATS``.

        Args:
            fmt: ``text``, ``json``, ``markdown``, ``sarif`` or ``junit``.
            brief: text without hint lines or the per-area readiness breakdown.
            manifest: the manifest file the cases came from (SARIF locates each case's line).
            price_per_mtok: USD per million tokens: text and markdown add the session cost line.
            corpus: a readiness corpus (``probe.corpus.load_corpus``): text and markdown add the SPEC 15
                placement lines when its standard is the readiness's.

        Returns:
            The document; text, markdown and JSON end with a newline.

        Raises:
            UsageError: an unknown format or a price that is not a positive finite number.
            DocumentError: the manifest cannot be read (SARIF).
        """
        return render(self, fmt, brief=brief, manifest=manifest, price_per_mtok=price_per_mtok, corpus=corpus)

    def _hinted_cases(self) -> set[str]:
        """The cases whose hint is printed: every one, except that a transport reason (one lost
        connection that every later case shares) is explained once, at its first case."""
        shown: set[str] = set()
        seen: set[str] = set()
        for case in self.cases:
            if case.hint is None or (case.reason in TRANSPORT_REASONS and case.reason in seen):
                continue
            seen.add(case.reason or "")
            shown.add(case.id)
        return shown

    def render_text(self, *, brief: bool = False) -> str:
        """SPEC 9.5 text: one line per case, hint lines unless brief, the gate and readiness lines."""
        lines: list[str] = []
        hinted = self._hinted_cases()
        for case in self.cases:
            lines.append(case.text_line())
            if case.id in hinted and not brief:
                lines.append(f"  hint: {case.hint}")
        gate = self.gate
        if gate is not None:
            lines.append(f"{self.server} gate {gate['passed']}/{gate['total']} passed")
        if self.cancelled:
            lines.append(f"{self.server} cancelled: {len(self.not_run)} case(s) not run")
        if self.legacy_score is not None:
            lines.append(f"{self.server} legacy score {self.legacy_score} (display only)")
        if self.modern:
            lines.append(f"{self.server} protocol {MODERN_VERSION} (stateless)")
        lines += readiness_lines(self.server, self.readiness, self.readiness_error, "text", brief=brief)
        return lines_text(lines)

    def render_markdown(self, *, brief: bool = False) -> str:
        """A markdown summary in the text output's order: cases, hints, the gate and readiness."""
        out = [f"# Probe report: {self.server}", "",
               "| case | probe | verdict | attempts | first failure | reason |",
               "| --- | --- | --- | --- | --- | --- |"]
        for c in self.cases:
            verdict = "pass" if c.passed else ("error" if c.errored else "fail")
            first = "" if c.first_failure is None else str(c.first_failure)
            out.append(f"| {c.id} | {c.probe} | {verdict} | {c.attempts} | {first} | {c.reason or ''} |")
        out.append("")
        hinted = self._hinted_cases()
        hints = [f"- **{c.id}**: {c.hint}" for c in self.cases if c.id in hinted]
        if hints and not brief:
            out += ["## Hints", "", *hints, ""]
        gate = self.gate
        if gate is not None:
            out.append(f"**Gate:** {gate['passed']}/{gate['total']} passed")
        if self.cancelled:
            out.append(f"**Cancelled:** {len(self.not_run)} case(s) not run")
        if self.modern:
            out.append(f"**Protocol:** {MODERN_VERSION} (stateless)")
        out += readiness_lines(self.server, self.readiness, self.readiness_error, "markdown", brief=brief)
        return "\n".join(out).rstrip("\n") + "\n"

    def _repr_html_(self) -> str:
        """How a notebook cell shows it (the same lines as the CLI prints)."""
        return lines_html(f"probe report: {self.server}", self.render_text().splitlines())

#: What ``ProbeReport.render`` writes, in ``--format`` order.
REPORT_FORMATS = ProbeReport.FORMATS.names


def _generator() -> dict[str, str]:
    return {"name": GENERATOR_NAME, "version": __version__}


def _bad(source: str, where: str) -> DocumentError:
    return DocumentError(f"{source}: not a probe report ({where} is invalid)")


def _opt_u64(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


def _measurements(raw: Any, where: str, source: str) -> dict[str, Any]:
    """The known measurements: counts must be u64, ``per_tool`` a list of ``{tokens, tool}`` whose tool
    names outside the grammar read as ``unlisted`` (older or hand-edited reports)."""
    if not isinstance(raw, dict):
        raise _bad(source, where)
    kept: dict[str, Any] = {}
    for key in MEASUREMENT_KEYS:
        if key not in raw:
            continue
        value = raw[key]
        if key == "per_tool":
            if not isinstance(value, list) or not all(
                    isinstance(e, dict) and _opt_u64(e.get("tokens")) and e.get("tokens") is not None
                    for e in value):
                raise _bad(source, f"{where}.per_tool")
            value = [{"tokens": e["tokens"], "tool": listed(e.get("tool"))} for e in value]
        elif value is None or not _opt_u64(value):
            raise _bad(source, f"{where}.{key}")
        kept[key] = value
    return kept


def _parse_case(raw: Any, index: int, source: str) -> CaseResult:
    where = f"cases[{index}]"
    if not isinstance(raw, dict):
        raise _bad(source, where)
    reason, probe, tool = raw.get("reason"), raw.get("probe"), raw.get("tool")
    if not (valid_identifier(raw.get("id")) and probe in KIND_TABLE and isinstance(raw.get("passed"), bool)
            and (reason is None or is_reason(reason)) and (tool is None or valid_tool(tool))
            and _opt_u64(raw.get("attempts")) and _opt_u64(raw.get("first_failure"))):
        raise _bad(source, where)
    kept = _measurements(raw.get("measurements") or {}, f"{where}.measurements", source)
    detail_raw = raw.get("detail")
    detail = None
    if detail_raw is not None:
        if not (isinstance(detail_raw, dict) and detail_raw.get("bound") in BOUND_NAMES
                and _opt_u64(detail_raw.get("limit")) and _opt_u64(detail_raw.get("observed"))):
            raise _bad(source, f"{where}.detail")
        detail = Detail(detail_raw["bound"], detail_raw["limit"], detail_raw["observed"])
    return CaseResult(id=raw["id"], probe=probe, passed=raw["passed"], attempts=raw.get("attempts") or 0,
                      first_failure=raw.get("first_failure"), reason=reason, tool=tool, measurements=kept,
                      detail=detail, call=raw.get("first_failure") if KIND_TABLE[probe].steps else None)


def parse_report(text: str | bytes, *, source: str = "report") -> ProbeReport:
    """Read a probe-report/v1 or /v2 document.

    Args:
        text: the document's JSON text.
        source: how messages name the document.

    Returns:
        The report with its readiness parsed (a v1 document keeps only ``readiness.score`` as
        ``legacy_score``).

    Raises:
        DocumentError: the text is not JSON or not a v1/v2 probe report, or its readiness is invalid
            (``<source>: readiness ...``, exit 2); never quotes content.
    """
    try:
        doc = loads(text)
    except JSONFormatError:
        raise DocumentError(f"{source}: not valid JSON") from None
    if not isinstance(doc, dict) or doc.get("schema") not in (REPORT_SCHEMA_V1, REPORT_SCHEMA_V2):
        raise _bad(source, "schema")
    if not valid_server(doc.get("server")):
        raise _bad(source, "server")
    if not isinstance(doc.get("cases"), list):
        raise _bad(source, "cases")
    cases = tuple(_parse_case(c, i, source) for i, c in enumerate(doc["cases"]))
    sha = doc.get("manifest_sha256")
    if sha is not None and not (isinstance(sha, str) and len(sha) == 64
                                and all(ch in "0123456789abcdef" for ch in sha)):
        raise _bad(source, "manifest_sha256")
    generator = doc.get("generator")
    gen = ({k: v for k, v in generator.items() if k in ("name", "version") and isinstance(v, str)}
           if isinstance(generator, dict) else {})
    raw = doc.get("readiness")
    if doc["schema"] == REPORT_SCHEMA_V1:
        score = raw.get("score") if isinstance(raw, dict) else None
        return ProbeReport(server=doc["server"], cases=cases, manifest_sha256=sha, schema=REPORT_SCHEMA_V1,
                           generator=gen, legacy_score=score)
    if raw is not None and not isinstance(raw, dict):
        raise _bad(source, "readiness")
    error = doc.get("readiness_error")
    if error is not None and error not in TRANSPORT_REASONS:
        raise _bad(source, "readiness_error")
    readiness = None if raw is None else parse_readiness(raw, where=f"{source}: readiness")
    return ProbeReport(server=doc["server"], cases=cases, manifest_sha256=sha, readiness=readiness,
                       readiness_error=error, schema=REPORT_SCHEMA_V2, generator=gen,
                       protocol=_protocol(doc.get("protocol"), source))


def _protocol(raw: Any, source: str) -> Negotiated | None:
    """A document's ``protocol`` member: absent (a legacy run), or the modern era and its version."""
    if raw is None:
        return None
    if not (isinstance(raw, dict) and set(raw) == {"era", "version"} and raw["era"] == "modern"
            and raw["version"] == MODERN_VERSION):
        raise _bad(source, "protocol")
    return Negotiated("modern", MODERN_VERSION)
