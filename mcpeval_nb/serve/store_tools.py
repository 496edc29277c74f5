"""serve's tools over the capture root: findings, readiness trends and annotations (SPEC 13.1).

Everything returned is built from index rows (labels, counts, scores, template ids, shaped argument
tokens), trend points and the stored annotation record: never an argument value beyond its label.
``record_annotation`` uses ``annotate``, the same validation and writer as ``mcpeval-nb annotate``.
"""

from __future__ import annotations

from typing import Any

from ..capture.annotate import annotate
from ..errors import UsageError
from ..privacy.records import ANNOTATION_KINDS, TrendPoint
from ..probe.history import NO_HISTORY, load_trends, render_trends, select_recent
from ..triage import findings
from ..triage.index.database import INDEX_FILE
from ..triage.rows import Finding
from .base import ToolContext, ToolFailure, ToolResult

__all__ = ["NO_FINDINGS", "TREND_POINTS", "get_finding", "get_readiness_trends", "list_findings",
           "record_annotation"]

NO_FINDINGS = "no findings; run `mcpeval index` and `mcpeval promote` first"
#: Trend points per server that ``get_readiness_trends`` returns (the newest, oldest first).
TREND_POINTS = 10


def finding_line(f: Finding) -> str:
    """``<id> <server>/<tool> state=… severity=… class=… probe=… failures=f/calls sessions=n[ repro=…]``."""
    line = (f"{f.finding_id} {f.server}/{f.tool or 'unlisted'} state={f.state} severity={f.severity} "
            f"class={f.klass} probe={f.probe_id or 'none'} failures={f.failures}/{f.calls} "
            f"sessions={f.sessions}")
    return line + (f" repro={f.repro}" if f.repro is not None else "")


def _indexed(ctx: ToolContext) -> bool:
    """An index exists (a missing one reads as no findings; a foreign or corrupt one is an error)."""
    return (ctx.root / INDEX_FILE).exists()


def list_findings(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    """The promoted findings, best first, optionally of one lifecycle state."""
    found = findings.list_findings(ctx.root, state=args.get("state")) if _indexed(ctx) else []
    text = "\n\n".join(finding_line(f) for f in found) if found else NO_FINDINGS
    return ToolResult(text, {"findings": [f.to_json() for f in found]})


def get_finding(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    """One promoted finding: its line and its class's hint."""
    promoted = findings.list_findings(ctx.root) if _indexed(ctx) else []
    found = next((f for f in promoted if f.finding_id == args["finding_id"]), None)
    if found is None:
        raise ToolFailure("no such finding")
    return ToolResult(f"{finding_line(found)}\n  hint: {found.hint}", {"finding": found.to_json()})


def _point(previous: TrendPoint | None, point: TrendPoint) -> dict[str, Any]:
    from ..analysis.readiness import trend_delta  # here: serve starts without the analysis layer (pandas)

    return {"ts": point.ts, "passed": point.passed, "cases_total": point.cases_total,
            "cases_passed": point.cases_passed, "score": point.score,
            "manifest_sha256": point.manifest_sha256, "standard": point.standard,
            "delta": trend_delta(previous, point) or None}


def get_readiness_trends(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    """At most ten trend points per server, oldest first, with SPEC 7.3's delta rules."""
    del args
    points = load_trends(root=ctx.root)
    if points is None:
        return ToolResult(NO_HISTORY.rstrip("\n"), {"servers": []})
    groups = select_recent(points, TREND_POINTS)
    servers = [{"server": server, "points": [_point(prev, p) for prev, p in zip([None, *kept[:-1]], kept,
                                                                               strict=True)]}
               for server, kept in groups.items()]
    return ToolResult(render_trends(groups).rstrip("\n"), {"servers": servers})


def record_annotation(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    """Append an annotation exactly as ``mcpeval-nb annotate --session --seq --kind --note`` does."""
    if args["kind"] not in ANNOTATION_KINDS:  # the schema's enum; never echo a value that is not a kind
        raise UsageError("unknown annotation kind; valid kinds are: " + ", ".join(ANNOTATION_KINDS))
    record = annotate(args["session"], args["seq"], args["kind"], args["note"], root=ctx.root)
    text = f"recorded {record.kind} annotation for {record.session} seq {record.seq}"
    return ToolResult(text, {"kind": record.kind, "session": record.session, "seq": record.seq},
                      counts={"annotations": 1})
