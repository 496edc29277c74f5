"""The renderings of ``findings`` (SPEC 12.5): ``agent`` lines, a Markdown table (ours), pretty JSON.

JSON is ``Finding.to_json`` (SPEC's struct order, declared in ``rows``); the agent format is SPEC's three
lines per finding.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..jsonfmt import dumps
from .findings import Moment, list_findings
from .rows import Finding

__all__ = ["FINDINGS_FORMATS", "NO_FINDINGS", "agent_lines", "render", "render_findings"]

FINDINGS_FORMATS = ("agent", "md", "json")
NO_FINDINGS = "no promoted findings; run mcpeval promote --threshold 0 to see every issue"
#: What ``mcpeval-nb findings`` says (SPEC's ``NO_FINDINGS`` bytes name the Rust command and promise
#: every issue, but an issue seen in one session only is never promoted, whatever the threshold).
NO_FINDINGS_HINT = ("no promoted findings: run `mcpeval-nb promote` (it says how many issues it held back "
                    "and why; `--threshold 0` promotes every issue seen in more than one session)")


def agent_lines(f: Finding) -> list[str]:
    """SPEC 12.5's agent lines of one finding."""
    return [
        f"finding {f.finding_id} {f.server}/{f.tool or 'unlisted'} state={f.state} "
        f"probe={f.probe_id or 'none'} consecutive_passes={f.consecutive_passes} "
        f"severity={f.severity} score={f.score:.6f} threshold={f.threshold:.6f} "
        f"rate={f.rate:.6f} confidence={f.confidence:.6f} recency={f.recency:.6f} "
        f"failures={f.failures}/{f.calls} sessions={f.sessions} cost={f.cost:.1f} "
        f"blast={f.blast}",
        f"  cause code={f.err_code or 'null'} template_id={f.err_template_id or 'none'} "
        f"last_seen={f.last_seen or 'unknown'}",
        f"  repro={f.repro or 'null'}",
    ]


def _markdown(findings: list[Finding]) -> str:
    head = [
        "| finding | server/tool | class | severity | state | score | rate | failures | sessions | "
        "last seen |",
        "| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    body = [
        f"| `{f.finding_id}` | {f.server}/{f.tool or 'unlisted'} | {f.klass} | {f.severity} | "
        f"{f.state} | {f.score:.3f} | {f.rate:.1%} | {f.failures}/{f.calls} | {f.sessions} | "
        f"{f.last_seen or 'unknown'} |"
        for f in findings
    ]
    return "\n".join(["# Findings", "", *head, *body]) + "\n"


def render(findings: list[Finding], fmt: str) -> str:
    """``agent`` lines, a Markdown table, or pretty JSON (each with a trailing newline)."""
    if fmt == "json":
        return dumps([f.to_json() for f in findings], sort_keys=False, indent=2) + "\n"
    if fmt == "md":
        return _markdown(findings)
    return "".join(line + "\n" for f in findings for line in agent_lines(f))


def render_findings(
    root: Path | str | None = None,
    *,
    format: str = "agent",
    state: str | None = None,
    since: Moment = None,
    until: Moment = None,
) -> str:
    """The promoted findings as ``findings`` prints them: ``agent`` lines, ``md`` or ``json``; the empty
    string when there are none (the CLI then says so on stderr).

    Raises:
        UsageError: an unknown format, state or time. FindingsError: no usable index.
    """
    if format not in FINDINGS_FORMATS:
        raise UsageError(f"unknown format {format!r}; expected agent, md or json")
    found = list_findings(root, state=state, since=since, until=until)
    return render(found, format) if found else ""
