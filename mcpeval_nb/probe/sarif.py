"""SARIF 2.1.0 rendering of a probe report (``mcpeval-nb report --format sarif``).

Each failed or errored case is a result (``error``) whose rule is its reason label and whose message is
the fixed remediation hint; each lost readiness check is a ``note`` under its check id.  With the
manifest file the result points at the line that declares the case id.  No payloads: only labels,
numbers, the manifest path and line numbers.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import DocumentError
from .reasons import hint_for
from .render import RenderOptions, json_text
from .report_view import ReportView

__all__ = ["SARIF_SCHEMA", "case_lines", "report_sarif", "report_sarif_text", "sarif_format"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_ID_RE = re.compile(rb'"id"\s*:\s*"([^"\\]*)"')


def case_lines(manifest_bytes: bytes) -> dict[str, int]:
    """1-based line of the first ``"id": "<case id>"`` per case id in the manifest text."""
    found: dict[str, int] = {}
    for number, line in enumerate(manifest_bytes.split(b"\n"), start=1):
        for match in _ID_RE.finditer(line):
            found.setdefault(match.group(1).decode("utf-8", "replace"), number)
    return found


def _location(manifest: str | None, line: int | None) -> list[dict[str, Any]]:
    if manifest is None:
        return []
    region = {} if line is None else {"region": {"startLine": line}}
    return [{"physicalLocation": {"artifactLocation": {"uri": Path(manifest).as_posix()}, **region}}]


def report_sarif(report: ReportView, *, manifest: str | Path | None = None) -> dict[str, Any]:
    """The SARIF log object for ``report``.

    Args:
        report: a parsed v1 or v2 report.
        manifest: the manifest file the cases came from (locates each case's line).

    Returns:
        A SARIF 2.1.0 log with one run.

    Raises:
        DocumentError: the manifest cannot be read.
    """
    lines: dict[str, int] = {}
    if manifest is not None:
        try:
            lines = case_lines(Path(manifest).read_bytes())
        except OSError as exc:
            raise DocumentError(f"cannot read manifest {manifest}: {exc.strerror}") from None
    where = None if manifest is None else str(manifest)
    rules: dict[str, str] = {}
    results: list[dict[str, Any]] = []
    for case in report.cases:
        if case.passed or case.reason is None:
            continue
        rules.setdefault(case.reason, hint_for(case.reason))
        results.append({"ruleId": case.reason, "level": "error",
                        "message": {"text": f"{case.id} ({case.probe}): {rules[case.reason]}"},
                        "locations": _location(where, lines.get(case.id))})
    readiness = report.readiness
    if readiness is not None and not readiness.display_only:
        for area in readiness.areas:
            for check in area.checks:
                rules.setdefault(check.id, check.hint)
                subject = f" ({check.tool})" if check.tool else ""
                results.append({"ruleId": check.id, "level": "note",
                                "message": {"text": f"{check.id}{subject}: {check.reason}, score "
                                                    f"{check.score}"}})
    rule_list = [{"id": rid, "shortDescription": {"text": text}} for rid, text in sorted(rules.items())]
    driver = {"name": "mcpeval-nb", "informationUri": "https://github.com/cavi-ai/mcp-eval",
              "rules": rule_list}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0",
            "runs": [{"tool": {"driver": driver}, "results": results,
                      "properties": {"server": report.server, "passed": report.passed}}]}


def report_sarif_text(report: ReportView, *, manifest: str | Path | None = None) -> str:
    """``report_sarif`` as pretty, key-sorted JSON with a trailing newline."""
    return json_text(report_sarif(report, manifest=manifest))


def sarif_format(report: ReportView, options: RenderOptions) -> str:
    """The ``sarif`` row of a report's format table (``options.manifest`` locates the cases)."""
    return report_sarif_text(report, manifest=options.manifest)
