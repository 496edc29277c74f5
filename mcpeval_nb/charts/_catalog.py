"""The catalog charts (docs/catalog.md): what changed in each server's catalog and when, which tools are
listed but never called, and which tool call follows which.  Inputs are the tables of
``catalog_drift``, ``catalog_history``, ``tool_usage`` and ``tool_transitions`` (or their frames, or any
Arrow stream); every label drawn is a server label, a tool name or a change kind."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _kit as kit

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_catalog_timeline", "plot_tool_transitions", "plot_tool_usage", "usage_height"]

#: Marker and colour of each drift change kind.
_CHANGE_STYLE = {"added": ("P", "#4c9a5b"), "removed": ("X", "#c8553d"), "renamed": ("s", "#9a6700"),
                 "description-changed": ("o", "#5b6fb0"), "schema-changed": ("D", "#8250df"),
                 "annotations-changed": ("^", "#bf3989"), "definition-changed": ("v", "#6e7781")}
_VERDICT_COLOURS = {"dead": "#c8553d", "rare": "#d29922", "used": "#1f6feb",
                    "insufficient-evidence": "#8c959f"}


def plot_catalog_timeline(drift: Any, *, history: Any = None, ax: Axes | None = None) -> Axes:
    """Catalog changes over time, one row per server: a marker per change (shape and colour by kind),
    edged in black when it happened inside a session; with ``history``, every recorded listing as a grey
    tick.

    Args:
        drift: a ``catalog_drift`` table (or its frame).
        history: a ``catalog_history`` table: the listings, so quiet stretches show as ticks.
        ax: axes to draw on.

    Returns:
        The axes (one labelled scatter collection per change kind).
    """
    ax = kit.axes(ax)
    changes = kit.frame(drift)
    changes = changes[changes["change"] != "mid-session"]
    listings = kit.frame(history).drop_duplicates(["server", "session", "seq", "ts"]) if history is not None \
        else changes.iloc[0:0]
    servers = sorted(set(changes["server"]) | set(listings["server"]))
    row = {server: i for i, server in enumerate(servers)}
    if len(listings):
        ax.scatter(kit.naive(listings["ts"]), [row[s] - 0.3 for s in listings["server"]], marker="|", s=60,
                   color="#afb8c1", label="listing recorded")
    kinds = [k for k in _CHANGE_STYLE if k in set(changes["change"])]
    for i, kind in enumerate(kinds):
        hits = changes[changes["change"] == kind]
        marker, colour = _CHANGE_STYLE[kind]
        offset = (i - (len(kinds) - 1) / 2) * min(0.1, 0.55 / max(1, len(kinds)))
        mid = hits["mid_session"].astype(bool).to_numpy()
        ys = [row[s] + offset for s in hits["server"]]
        ax.scatter(kit.naive(hits["first_seen"]), ys, marker=marker, s=70, color=colour, label=kind, zorder=3,
                   edgecolors=["black" if m else colour for m in mid],
                   linewidths=[1.6 if m else 0.5 for m in mid])
    if changes["mid_session"].astype(bool).any():
        ax.scatter([], [], marker="o", s=70, color="white", edgecolors="black", linewidths=1.6,
                   label="black edge: inside a session")
    ax.set_yticks(range(len(servers)), servers)
    ax.set_ylim(-0.7, max(0.7, len(servers) - 0.3))
    kit.date_axis(ax)
    ax.set_title("catalog changes per server")
    if servers:
        kit.legend_outside(ax)
    else:
        kit.empty(ax, "catalog listings")
    return ax


def usage_height(rows: int) -> float:
    """The figure height in inches that gives each of ``rows`` tools of ``plot_tool_usage`` room to read."""
    return max(3.0, 1.4 + 0.28 * rows)


def plot_tool_usage(usage: Any, *, ax: Axes | None = None, top: int = 30) -> Axes:
    """Sessions that listed each tool against sessions that called it; the verdict colours the calls bar
    and dead tools are labelled with the context tokens every session pays for them.

    Args:
        usage: a ``tool_usage`` table (or its frame).
        ax: axes to draw on.
        top: at most this many tools (dead first, then by sessions listed).

    Returns:
        The axes (listed bars first, then one bar collection per verdict).
    """
    import numpy as np

    frame = kit.frame(usage)
    order = {"dead": 0, "rare": 1, "insufficient-evidence": 2, "used": 3}
    frame = frame.assign(_order=frame["verdict"].map(order)).sort_values(
        ["_order", "listed_sessions"], ascending=[True, False], kind="stable").head(top).iloc[::-1]
    ax = kit.axes(ax, size=(8, usage_height(len(frame))))
    many = frame["server"].nunique() > 1
    labels = [f"{s}/{t}" if many else str(t) for s, t in zip(frame["server"], frame["tool"], strict=True)]
    ys = np.arange(len(frame))
    dead = (frame["verdict"] == "dead").to_numpy()
    listed = frame["listed_sessions"].to_numpy(dtype=float)
    ax.barh(ys[~dead], listed[~dead], color="#eaeef2", edgecolor="#afb8c1", label="listed")
    if dead.any():
        ax.barh(ys[dead], listed[dead], color="#fbe3df", edgecolor=_VERDICT_COLOURS["dead"],
                label="listed, never called: dead")
    for verdict, colour in _VERDICT_COLOURS.items():
        mask = (frame["verdict"] == verdict).to_numpy() & (frame["called_sessions"].to_numpy() > 0)
        if mask.any():
            ax.barh(ys[mask], frame["called_sessions"].to_numpy(dtype=float)[mask], height=0.5, color=colour,
                    label=f"called: {verdict}")
    for y, (_, r) in zip(ys, frame.iterrows(), strict=True):
        if r["verdict"] == "dead":
            tokens = r["catalog_tokens"]
            known = tokens is not None and tokens == tokens  # NaN when never listed
            note = f"dead: {int(tokens)} tokens a session" if known else "dead"
            ax.annotate(note, (0.0, y), xytext=(4, 0), textcoords="offset points",  # inside its bar
                        va="center", fontsize="small", color=_VERDICT_COLOURS["dead"])
    ax.set_yticks(ys, labels)
    ax.set_xlabel("sessions that listed / called the tool")
    ax.set_title("tools listed and called")
    if len(frame):
        kit.legend_outside(ax)
        ax.set_xlim(0, float(frame["listed_sessions"].max()) * 1.05 + 1)
    else:
        kit.empty(ax, "tools")
    return ax


def plot_tool_transitions(transitions: Any, *, server: str | None = None, ax: Axes | None = None,
                          top: int = 15) -> Axes:
    """Heatmap of which tool call follows which: the probability of the next tool given the previous,
    each cell labelled with its count.

    Args:
        transitions: a ``tool_transitions`` table (or its frame).
        server: only this server (default: every server, tools labelled ``server/tool`` when several).
        ax: axes to draw on.
        top: at most this many tools per axis (the most frequent).

    Returns:
        The axes (the image is ``ax.images[0]``).
    """
    ax = kit.axes(ax)
    frame = kit.frame(transitions)
    if server is not None:
        frame = frame[frame["server"] == server]
    if frame.empty:
        kit.empty(ax, "tool transitions")
        return ax
    many = frame["server"].nunique() > 1
    def name(srv: object, tool: object) -> str:
        return f"{srv}/{tool}" if many else str(tool)

    frame = frame.assign(_from=[name(s, t) for s, t in zip(frame["server"], frame["from_tool"], strict=True)],
                         _to=[name(s, t) for s, t in zip(frame["server"], frame["to_tool"], strict=True)])
    weight = frame.groupby("_from")["count"].sum().add(frame.groupby("_to")["count"].sum(), fill_value=0)
    keep = list(weight.sort_values(ascending=False).index[:top])
    tools = sorted(keep)
    grid = frame.pivot_table(index="_from", columns="_to", values="probability", aggfunc="sum",
                             fill_value=0.0).reindex(index=tools, columns=tools, fill_value=0.0)
    counts = frame.pivot_table(index="_from", columns="_to", values="count", aggfunc="sum",
                               fill_value=0).reindex(index=tools, columns=tools, fill_value=0)
    shares, numbers = grid.to_numpy(dtype=float), counts.to_numpy(dtype=int)
    image = ax.imshow(shares, cmap="Blues", vmin=0, vmax=1, interpolation="nearest")
    for i in range(len(tools)):
        for j in range(len(tools)):
            n = int(numbers[i, j])
            if n:
                dark = shares[i, j] > 0.6
                ax.text(j, i, str(n), ha="center", va="center", fontsize="small",
                        color="white" if dark else "#24292f")
    ax.set_xticks(range(len(tools)), tools, rotation=45, ha="right")
    ax.set_yticks(range(len(tools)), tools)
    ax.set_xlabel("next tool")
    ax.set_ylabel("tool")
    ax.set_title("what follows what (cell: count; colour: probability)")
    ax.figure.colorbar(image, ax=ax, label="P(next | tool)")
    return ax
