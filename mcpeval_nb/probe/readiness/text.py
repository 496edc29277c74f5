"""Readiness lines for probe reports in text and markdown (SPEC 9.5); ``ProbeReport.render_*`` call them.

Text::

    <server> readiness <score>/100 standard=<standard>
    <server> surface tools=<n> read_only=<n> writers=<n> exercised=<n>
      area <name> <score>/100 weight=<w>
      lost <check id> score=<n>[ tool=<t>][ observed=<n>] reason=<r>

A display-only readiness (a standard other than ``mcpeval-standard/2``) shows only its score line.  Only
labels and numbers are printed.
"""

from __future__ import annotations

from .model import Check, Readiness

__all__ = ["lost_line", "readiness_lines"]


def lost_line(check: Check) -> str:
    """``  lost <id> score=<n>[ tool=<t>][ observed=<n>] reason=<r>``."""
    line = f"  lost {check.id} score={check.score}"
    if check.tool is not None:
        line += f" tool={check.tool}"
    if check.observed is not None:
        line += f" observed={check.observed}"
    return line + f" reason={check.reason}"


def _text(server: str, r: Readiness, brief: bool) -> list[str]:
    lines = [f"{server} readiness {r.score}/100 standard={r.standard}"]
    if r.display_only:
        return lines
    s = r.surface
    lines.append(f"{server} surface tools={s.tools} read_only={s.read_only} writers={s.writers} "
                 f"exercised={s.exercised}")
    if brief:
        return lines
    for area in r.areas:
        lines.append(f"  area {area.name} {area.score}/100 weight={area.weight}")
        lines += [lost_line(c) for c in area.checks]
    return lines


def _markdown(r: Readiness, brief: bool) -> list[str]:
    lines = [f"**Readiness:** {r.score}/100 ({r.standard})"]
    if r.display_only:
        return lines
    s = r.surface
    lines += ["", f"![mcpeval readiness]({r.badge})", "",
              f"Surface: {s.tools} tools, {s.read_only} read-only, {s.writers} writers, "
              f"{s.exercised} exercised."]
    if brief:
        return lines
    lines += ["", "| area | score | weight | lost checks |", "| --- | --- | --- | --- |"]
    lines += [f"| {a.name} | {a.score} | {a.weight} | {len(a.checks)} |" for a in r.areas]
    lost = [c for a in r.areas for c in a.checks]
    if lost:
        lines += ["", "### Lost checks", ""]
        lines += [f"- `{c.id}`" + (f" ({c.tool})" if c.tool else "") + f": {c.reason}, score {c.score}"
                  for c in lost]
    return lines


def readiness_lines(server: str, readiness: Readiness | None, error: str | None, fmt: str, *,
                    brief: bool = False) -> list[str]:
    """The readiness part of a rendered report.

    Args:
        server: the report's server label.
        readiness: the report's readiness, or None.
        error: the report's ``readiness_error`` label, or None.
        fmt: ``text`` or ``markdown``.
        brief: only the score and surface lines (no per-area breakdown).

    Returns:
        Lines without newlines (none when there is neither readiness nor an error).
    """
    if error is not None:
        return [f"{server} readiness error reason={error}" if fmt == "text"
                else f"**Readiness:** not scored ({error})"]
    if readiness is None:
        return []
    return _text(server, readiness, brief) if fmt == "text" else _markdown(readiness, brief)
