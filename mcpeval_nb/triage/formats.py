"""The ``findings`` document (SPEC 12.5) and its format table: ``agent`` lines, a Markdown table (ours),
pretty JSON.

``FindingsView`` holds the promoted findings, best first, and declares its formats on the one format
table (``probe.render``): JSON is ``Finding.to_json`` (SPEC's struct order, declared in ``rows``) and
writes ``[]`` when there are none; the agent format is SPEC's three lines per finding and writes nothing
when there are none, as Markdown does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..clock import Moment
from ..errors import UsageError
from ..jsonfmt import dumps
from ..probe.render import Format, FormatSet, RenderOptions, lines_text, render
from ..root import RootLike
from .findings import list_findings
from .rows import Finding

__all__ = ["FINDINGS_FORMATS", "FindingsView", "agent_lines", "findings_view", "render_findings"]


def agent_lines(f: Finding) -> list[str]:
    """SPEC 12.5's agent lines of one finding; the ``repro`` line only when arguments were recorded (as
    the reference prints them: a finding without recorded arguments has no repro line)."""
    lines = [
        f"finding {f.finding_id} {f.server}/{f.tool or 'unlisted'} state={f.state} "
        f"probe={f.probe_id or 'none'} consecutive_passes={f.consecutive_passes} "
        f"severity={f.severity} score={f.score:.6f} threshold={f.threshold:.6f} "
        f"rate={f.rate:.6f} confidence={f.confidence:.6f} recency={f.recency:.6f} "
        f"failures={f.failures}/{f.calls} sessions={f.sessions} cost={f.cost:.1f} "
        f"blast={f.blast}",
        f"  cause code={f.err_code or 'null'} template_id={f.err_template_id or 'none'} "
        f"last_seen={f.last_seen or 'unknown'}",
    ]
    return lines + ([f"  repro={f.repro}"] if f.repro is not None else [])


def _agent(view: FindingsView, _options: RenderOptions) -> str:
    return lines_text(line for f in view.findings for line in agent_lines(f))


def _markdown(view: FindingsView, _options: RenderOptions) -> str:
    head = [
        "| finding | server/tool | class | severity | state | score | rate | failures | sessions | "
        "last seen |",
        "| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    body = [
        f"| `{f.finding_id}` | {f.server}/{f.tool or 'unlisted'} | {f.klass} | {f.severity} | "
        f"{f.state} | {f.score:.3f} | {f.rate:.1%} | {f.failures}/{f.calls} | {f.sessions} | "
        f"{f.last_seen or 'unknown'} |"
        for f in view.findings
    ]
    return "\n".join(["# Findings", "", *head, *body]) + "\n"


def _json(view: FindingsView, _options: RenderOptions) -> str:
    return dumps([f.to_json() for f in view.findings], sort_keys=False, indent=2) + "\n"


@dataclass(frozen=True)
class FindingsView:
    """The promoted findings as ``findings`` prints them (SPEC 12.5's order: best first).

    Attributes:
        findings: the rows (``list_findings``).
    """

    #: The findings' format table, in ``--format`` order (JSON writes ``[]`` for no findings itself).
    FORMATS: ClassVar[FormatSet[FindingsView]] = FormatSet(
        (Format("agent", _agent), Format("md", _markdown, empty=""), Format("json", _json)),
        unknown="unknown format; expected agent, md or json",
        is_empty=lambda view: not view.findings)
    #: What ``findings`` says on stderr when there are none (SPEC 12.5; still exit 0).
    #: SPEC's text names the Rust command and promises every issue, but an issue seen in one session
    #: only is never promoted, whatever the threshold: this one says what helps.
    EMPTY_NOTICE: ClassVar[str] = ("no promoted findings: run `mcpeval-nb promote` (it says how many issues "
                                   "it held back and why; `--threshold 0` promotes every issue seen in more "
                                   "than one session)")

    findings: tuple[Finding, ...]


#: The ``findings --format`` values.
FINDINGS_FORMATS = FindingsView.FORMATS.names


def findings_view(
    root: RootLike = None, *, state: str | None = None, since: Moment = None, until: Moment = None
) -> FindingsView:
    """The promoted findings of the last ``promote`` as the ``findings`` document (``render`` writes it).

    Args:
        root: the capture root. state: only findings in this lifecycle state. since / until: only
            findings last seen in ``[since, until)``.

    Raises:
        UsageError: an unknown state or bad time. FindingsError: no usable index.
    """
    return FindingsView(tuple(list_findings(root, state=state, since=since, until=until)))


def render_findings(
    root: RootLike = None,
    *,
    format: str = "agent",
    state: str | None = None,
    since: Moment = None,
    until: Moment = None,
) -> str:
    """The promoted findings as ``findings`` prints them: ``agent`` lines, ``md`` or ``json``.  With no
    findings each format writes its own empty case: nothing for ``agent`` and ``md``, ``[]`` for ``json``
    (the CLI also says so on stderr).

    Raises:
        UsageError: an unknown format, state or time. FindingsError: no usable index.
    """
    if format not in FINDINGS_FORMATS:
        raise UsageError(f"unknown format {format!r}; expected agent, md or json")
    return render(findings_view(root, state=state, since=since, until=until), format)
