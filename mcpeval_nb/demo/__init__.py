"""``make demo``: build a demo capture root from real servers, probe, run the notebooks, summarise.

Steps (progress on stderr, the summary on stdout):

1. capture: the SDK demo server (and ``mcp-server-time`` when installed) behind the real stdio shim,
   driven by a scripted client session: successes, tool errors, protocol errors, a notification, and
   one annotation; the catalog fixture server (``demo/catalogs.py``): a catalog pinned and then changed,
   and a poisoned one; then four weeks of *generated* history for the server ``generated-docs``
   (``demo/history.py``, through the real writer), so latency, template, readiness and usage trends
   have something to show;
2. probe: the demo manifest plus the readiness battery against fixture servers, several times, so the
   trend history has points and a change; then findings (``demo/fixture_findings.py``): a broken
   fixture server captured behind the shim, indexed, promoted, and verified until its finding closes;
3. notebooks: the notebooks executed against the root and written as HTML with their charts;
4. summary: per-tool p95 latency, top error templates, latest readiness per server, the findings,
   catalog drift, signal flags and dead tools, the redaction check, and the paths to open.

``python -m mcpeval_nb.demo --root-only --quick --out DIR`` builds only a smaller capture root (steps
1-2), which is what the notebook tests use.  Nothing printed comes from a payload.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from mcpeval_nb import (
    FindingsError,
    Store,
    catalog_drift,
    catalog_history,
    check_redaction,
    error_templates,
    findings,
    format_ms,
    latency_summary,
    open_store,
    readiness_history,
    tool_usage,
)

from .capture import capture_sessions
from .catalogs import catalog_sessions
from .fixture_findings import findings_step
from .history import generate_history
from .notebooks import run_notebooks
from .probes import PLAN, QUICK_PLAN, probe_runs

__all__ = ["build_root", "main", "summarize"]

REPO = Path(__file__).resolve().parent.parent.parent


def _say(line: str) -> None:
    print(f"[demo] {line}", file=sys.stderr, flush=True)


def build_root(root: Path, *, quick: bool = False) -> Path:
    """Build a fresh demo capture root at ``root`` (capture sessions, then probe runs).

    Args:
        root: the directory to (re)create.
        quick: one captured server and three probe runs (for test set-up) instead of the full plan.

    Returns:
        The root.
    """
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    summary = capture_sessions(root, say=_say, time_server=not quick)
    _say(f"capture: {sum(summary.calls.values())} tool calls, {summary.annotations} annotation(s)")
    catalogs = catalog_sessions(root, say=_say)
    _say(f"catalogs: {sum(catalogs.sessions.values())} sessions, {catalogs.pinned} tool(s) pinned")
    history = generate_history(root)
    _say(f"history: {history.calls} generated calls over {history.days} days and {history.points} "
         f"readiness points for server generated-docs ({history.first_day} to {history.last_day})")
    probe_runs(root, say=_say, plan=QUICK_PLAN if quick else PLAN)
    findings_step(root, say=_say)
    return root


def summarize(root: Path) -> list[str]:
    """The summary lines: p95 per tool, top error templates, latest readiness, findings, redaction check."""
    store = open_store(root)
    calls = store.calls
    lines = ["per-tool latency (p95 ms):"]
    for r in latency_summary(calls, by=("server", "tool")).to_pylist():
        if r["tool"] is not None:
            lines.append(f"  {r['server']:<14} {r['tool']:<18} calls={r['count']:<5} "
                         f"p95={format_ms(r['p95'])}")
    lines.append("top error templates:")
    for r in error_templates(calls).slice(0, 5).to_pylist():
        lines.append(f"  {r['template_id']}  count={r['count']:<3} tools={','.join(r['tools']) or '-'} "
                     f"codes={','.join(r['codes'])}")
    lines.append("latest readiness per server:")
    for r in readiness_history(store.trends, last=1).to_pylist():
        lines.append(f"  {r['server']:<14} {r['score']}/100 ({r['standard']}) gate "
                     f"{r['cases_passed']}/{r['cases_total']}")
    lines.append("findings (promoted, best first):")
    try:
        promoted = findings(root).slice(0, 5).to_pylist()
    except FindingsError:
        promoted = []
        lines.append("  none yet: run mcpeval-nb promote")
    for r in promoted:
        lines.append(f"  {r['severity']:<6} {r['class']:<22} {r['server']}/{r['tool'] or 'unlisted'} "
                     f"score={r['score']:.3f} failures={r['failures']}/{r['calls']} sessions={r['sessions']} "
                     f"state={r['state']}")
    lines += _catalog_lines(store)
    report = check_redaction(root)
    verdict = "clean" if report.clean else f"{len(report.flagged)} flagged line(s)"
    lines.append(f"redaction check: {verdict}, {report.files_scanned} file(s) scanned, "
                 f"{report.notes_requiring_review} annotation note(s) to review")
    return lines


def _catalog_lines(store: Store) -> list[str]:
    """Drift against the pins (or listing to listing), the flagged tools, and the dead tools."""
    lines = ["catalog drift (against the pinned catalog where there is one):"]
    for r in catalog_drift(store, pins=True).to_pylist():
        if r["change"] != "mid-session":
            was = f" (was {r['previous_tool']})" if r["previous_tool"] else ""
            mid = " mid-session" if r["mid_session"] else ""
            lines.append(f"  {r['server']}/{r['tool']:<16} {r['change']}{was}{mid} sessions={r['sessions']}")
    flagged: dict[tuple[str, str], list[str]] = {}
    for r in catalog_history(store).to_pylist():
        if r["flags"]:
            flagged[(r["server"], r["tool"])] = r["flags"]
    lines.append("catalog signal flags:")
    lines += [f"  {server}/{tool:<18} {','.join(flags)}" for (server, tool), flags in sorted(flagged.items())]
    lines.append("dead tools (listed, never called; tokens every session pays):")
    dead = [r for r in tool_usage(store).to_pylist() if r["verdict"] == "dead"]
    lines += [f"  {r['server']}/{r['tool']:<16} listed in {r['listed_sessions']} sessions, "
              f"{r['catalog_tokens']} tokens" for r in dead] or ["  none"]
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run the demo (see the module docstring); returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m mcpeval_nb.demo")
    parser.add_argument("--out", type=Path, default=REPO / "build" / "demo")
    parser.add_argument("--root-only", action="store_true", help="build the capture root only")
    parser.add_argument("--quick", action="store_true", help="a smaller root (test set-up)")
    args = parser.parse_args(argv)
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    root = out / "root"
    started = time.monotonic()
    build_root(root, quick=args.quick)
    pages: list[Path] = []
    if not args.root_only:
        pages = run_notebooks(REPO / "notebooks", root, out, say=_say)
    for line in summarize(root):
        print(line)
    print(f"\ncapture root: {root}   (export MCPEVAL_HOME={root})")
    for page in pages:
        print(f"open:         {page}")
    envelope = out / "share-envelope"
    if envelope.is_dir():
        print(f"envelope:     {envelope}")
    if not args.root_only:
        print(f"notebooks:    make lab   (JupyterLab on {REPO / 'notebooks'}; set MCPEVAL_HOME as above)")
    _say(f"done in {time.monotonic() - started:.0f} s")
    return 0
