"""Tool usage from real traffic: listed versus called, dead tools, tool chains and clusters (docs/catalog.md).

Only real calls count (``kind`` ``real``, method ``tools/call``): a probe's synthetic calls are not an
agent using a tool.  A tool is *listed in a session* when a catalog record of that session includes it.

``tool_usage`` gives each tool a verdict only with enough evidence.  With ``n`` sessions that listed the
tool and ``k`` of them that also called it, the call rate per listing session has the Wilson 95%
interval ``[low, high]`` (``analysis.outcomes.wilson_interval``):

* ``dead``: never called (``k = 0``) and ``high < dead_below`` (0.10: at least 35 listing sessions);
* ``rare``: called, and ``high < rare_below`` (0.25);
* ``used``: ``low >= rare_below``;
* otherwise ``insufficient-evidence`` (a tool listed once and never called is never ``dead``).

``tool_clusters`` groups tools that are called together beyond chance: for two tools of one server,
``lift = n_ab * N / (n_a * n_b)`` over the server's sessions with calls (``N``), the sessions calling
each (``n_a``, ``n_b``) and both (``n_ab``); tools are linked when ``n_ab >= min_sessions`` and
``lift >= min_lift``, and a cluster is a connected component of two tools or more.  A tool called in
every session has lift 1 with everything and joins no cluster: co-use that chance explains is no
evidence for consolidating.
"""

from __future__ import annotations

import datetime as dt
from itertools import combinations, pairwise
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa

from ..clock import Moment, is_day
from ..wilson import wilson_interval
from ._frames import as_frame, to_table
from .catalog import Source, catalog_history, listings, moment, open_source

if TYPE_CHECKING:
    from ..tables.store import Store

__all__ = ["CLUSTERS_SCHEMA", "DEAD_BELOW", "RARE_BELOW", "TRANSITIONS_SCHEMA", "USAGE_SCHEMA", "VERDICTS",
           "tool_clusters", "tool_transitions", "tool_usage", "verdict_of"]

_TS = pa.timestamp("ms", tz="UTC")
#: ``tool_usage`` verdicts.
VERDICTS = ("used", "rare", "dead", "insufficient-evidence")
#: Default thresholds on the Wilson bounds of the call rate per listing session.
DEAD_BELOW = 0.10
RARE_BELOW = 0.25
#: The columns of ``tool_usage``.
USAGE_SCHEMA = pa.schema([
    ("server", pa.string()), ("tool", pa.string()), ("listed_sessions", pa.int64()),
    ("called_sessions", pa.int64()), ("listed_and_called", pa.int64()), ("calls", pa.int64()),
    ("errors", pa.int64()), ("error_rate", pa.float64()), ("last_call", _TS), ("catalog_tokens", pa.int64()),
    ("call_rate", pa.float64()), ("rate_low", pa.float64()), ("rate_high", pa.float64()),
    ("verdict", pa.string()),
])
#: The columns of ``tool_transitions``.
TRANSITIONS_SCHEMA = pa.schema([
    ("server", pa.string()), ("from_tool", pa.string()), ("to_tool", pa.string()), ("count", pa.int64()),
    ("probability", pa.float64()), ("sessions", pa.int64()),
])
#: The columns of ``tool_clusters``.
CLUSTERS_SCHEMA = pa.schema([
    ("server", pa.string()), ("cluster", pa.int64()), ("tools", pa.list_(pa.string())), ("size", pa.int64()),
    ("sessions", pa.int64()), ("lift_min", pa.float64()), ("lift_max", pa.float64()),
])
_CALL_COLS = ("ts", "session", "seq", "server", "method", "tool", "outcome", "kind")


def verdict_of(listed: int, called: int, *, dead_below: float = DEAD_BELOW,
               rare_below: float = RARE_BELOW) -> tuple[str, float, float]:
    """The verdict of a tool listed in ``listed`` sessions and called in ``called`` of them.

    Returns:
        ``(verdict, low, high)``: the verdict and the Wilson 95% interval of the call rate.
    """
    if listed <= 0:
        return "insufficient-evidence", 0.0, 1.0
    low, high = wilson_interval(called, listed)
    if called == 0 and high < dead_below:
        return "dead", low, high
    if called > 0 and high < rare_below:
        return "rare", low, high
    if low >= rare_below:
        return "used", low, high
    return "insufficient-evidence", low, high


def _calls(store: Store, server: str | None, since: dt.datetime | None,
           until: dt.datetime | None) -> pd.DataFrame:
    frame = as_frame(store.calls, _CALL_COLS)
    keep = (frame["method"] == "tools/call") & (frame["kind"] == "real") & frame["tool"].notna()
    if server is not None:
        keep &= frame["server"] == server
    if since is not None:
        keep &= frame["ts"] >= since
    if until is not None:
        keep &= frame["ts"] < until
    return frame[keep]


def _window(since: Moment, until: Moment) -> tuple[dt.datetime | None, dt.datetime | None]:
    start, end = moment(since, "--since"), moment(until, "--until")
    whole_day = (isinstance(until, str) and is_day(until)) or (isinstance(until, dt.date)
                                                              and not isinstance(until, dt.datetime))
    if end is not None and whole_day:
        end += dt.timedelta(days=1)  # --until DAY is inclusive
    return start, end


def _listed(store: Store, server: str | None, start: dt.datetime | None,
            end: dt.datetime | None) -> tuple[pd.DataFrame, dict[tuple[str, str], int]]:
    pairs: list[tuple[str, str, str]] = []
    tokens: dict[tuple[str, str], int] = {}
    for listing in listings(catalog_history(store, server=server)):
        if (start is not None and (listing.ts is None or listing.ts < start)) or (
                end is not None and (listing.ts is None or listing.ts >= end)):
            continue
        for tool in listing.tools:
            pairs.append((listing.server, tool, listing.session))
            tokens[(listing.server, tool)] = listing.tokens.get(tool, 0)
    return pd.DataFrame(pairs, columns=["server", "tool", "session"]).drop_duplicates(), tokens


def tool_usage(root: Source = None, *, server: str | None = None, since: Moment = None, until: Moment = None,
               dead_below: float = DEAD_BELOW, rare_below: float = RARE_BELOW) -> pa.Table:
    """Per server and tool: listed versus called sessions, calls, errors, tokens and a verdict.

    Args:
        root: the capture root, or an open ``Store``.
        server: only this server label.
        since / until: only listings and calls of these days (inclusive; ``YYYY-MM-DD``, dates or
            datetimes).
        dead_below / rare_below: the thresholds on the Wilson bounds (module docstring).

    Returns:
        ``USAGE_SCHEMA``: ``server``, ``tool``, ``listed_sessions``, ``called_sessions``,
        ``listed_and_called``, ``calls``, ``errors``, ``error_rate`` (null without calls), ``last_call``,
        ``catalog_tokens`` (the token estimate of its listing entry in the latest listing; null when never
        listed), ``call_rate`` (null when never listed), ``rate_low``/``rate_high`` (Wilson 95%), and
        ``verdict``.  Sorted by server, then verdict (dead first), then tool.

    Raises:
        UsageError: a bad ``since`` or ``until``.
    """
    store = open_source(root)
    start, end = _window(since, until)
    calls = _calls(store, server, start, end)
    listed, tokens = _listed(store, server, start, end)
    called = calls[["server", "tool", "session"]].drop_duplicates()
    keys = pd.concat([listed[["server", "tool"]], called[["server", "tool"]]]).drop_duplicates()
    if keys.empty:
        return USAGE_SCHEMA.empty_table()
    both = listed.merge(called, on=["server", "tool", "session"])
    g = calls.assign(error=calls["outcome"] == "error").groupby(["server", "tool"])
    out = keys.set_index(["server", "tool"]).assign(
        listed_sessions=listed.groupby(["server", "tool"])["session"].nunique(),
        called_sessions=called.groupby(["server", "tool"])["session"].nunique(),
        listed_and_called=both.groupby(["server", "tool"])["session"].nunique(),
        calls=g.size(), errors=g["error"].sum(), last_call=g["ts"].max()).reset_index()
    for col in ("listed_sessions", "called_sessions", "listed_and_called", "calls", "errors"):
        out[col] = out[col].fillna(0).astype("int64")
    return to_table(_verdicts(out, tokens, dead_below, rare_below), USAGE_SCHEMA)


def _verdicts(out: pd.DataFrame, tokens: dict[tuple[str, str], int], dead_below: float,
              rare_below: float) -> pd.DataFrame:
    out["error_rate"] = (out["errors"] / out["calls"]).where(out["calls"] > 0)
    keys = zip(out["server"], out["tool"], strict=True)
    out["catalog_tokens"] = pd.array([tokens.get((s, t)) for s, t in keys], dtype="Int64")
    out["call_rate"] = (out["listed_and_called"] / out["listed_sessions"]).where(out["listed_sessions"] > 0)
    judged = [verdict_of(int(n), int(k), dead_below=dead_below, rare_below=rare_below)
              for n, k in zip(out["listed_sessions"], out["listed_and_called"], strict=True)]
    out["verdict"] = [v for v, _, _ in judged]
    out["rate_low"] = [low for _, low, _ in judged]
    out["rate_high"] = [high for _, _, high in judged]
    order = {v: i for i, v in enumerate(("dead", "rare", "insufficient-evidence", "used"))}
    out["_order"] = out["verdict"].map(order)
    return out.sort_values(["server", "_order", "tool"], kind="stable")


def _sessions_of(calls: pd.DataFrame) -> Any:
    ordered = calls.sort_values(["server", "session", "seq"], kind="stable")
    return ordered.groupby(["server", "session"], sort=False)


def tool_transitions(root: Source = None, *, server: str | None = None) -> pa.Table:
    """Within each session (by ``seq``), which tool call follows which.

    Returns:
        ``TRANSITIONS_SCHEMA``: ``server``, ``from_tool``, ``to_tool``, ``count``, ``probability``
        (``count`` over every transition out of ``from_tool`` of that server), ``sessions`` (distinct
        sessions with the transition).  Sorted by server, from_tool, then count (largest first).
    """
    calls = _calls(open_source(root), server, None, None)
    pairs = []
    for (srv, session), group in _sessions_of(calls):
        tools = group["tool"].tolist()
        pairs += [(srv, a, b, session) for a, b in pairwise(tools)]
    frame = pd.DataFrame(pairs, columns=["server", "from_tool", "to_tool", "session"])
    if frame.empty:
        return TRANSITIONS_SCHEMA.empty_table()
    g = frame.groupby(["server", "from_tool", "to_tool"])
    out = pd.DataFrame({"count": g.size(), "sessions": g["session"].nunique()}).reset_index()
    out["probability"] = out["count"] / out.groupby(["server", "from_tool"])["count"].transform("sum")
    out = out.sort_values(["server", "from_tool", "count", "to_tool"], ascending=[True, True, False, True],
                          kind="stable")
    return to_table(out, TRANSITIONS_SCHEMA)


def _components(nodes: set[str], edges: list[tuple[str, str]]) -> list[list[str]]:
    parent = {n: n for n in nodes}

    def find(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for a, b in edges:
        parent[find(a)] = find(b)
    groups: dict[str, list[str]] = {}
    for n in sorted(nodes):
        groups.setdefault(find(n), []).append(n)
    return [g for g in groups.values() if len(g) > 1]


def _server_clusters(srv: str, sets: dict[str, set[str]], total: int, min_lift: float,
                     min_sessions: int) -> list[dict[str, Any]]:
    lifts: dict[tuple[str, str], float] = {}
    for a, b in combinations(sorted(sets), 2):
        together = len(sets[a] & sets[b])
        lift = together * total / (len(sets[a]) * len(sets[b]))
        if together >= min_sessions and lift >= min_lift:
            lifts[(a, b)] = lift
    rows = []
    for members in _components(set(sets), list(lifts)):
        inside = [v for (a, b), v in lifts.items() if a in members and b in members]
        sessions = {s for a, b in combinations(members, 2) for s in sets[a] & sets[b]}
        rows.append({"server": srv, "tools": members, "size": len(members), "sessions": len(sessions),
                     "lift_min": min(inside), "lift_max": max(inside)})
    return rows


def tool_clusters(root: Source = None, *, server: str | None = None,
                  min_lift: float = 1.5, min_sessions: int = 2) -> pa.Table:
    """Groups of tools called together beyond chance (the method is in the module docstring).

    Args:
        root: the capture root, or an open ``Store``.
        server: only this server label.
        min_lift: the least lift that links two tools.
        min_sessions: the least number of sessions calling both.

    Returns:
        ``CLUSTERS_SCHEMA``: ``server``, ``cluster`` (from 1, largest first per server), ``tools``
        (sorted), ``size``, ``sessions`` (sessions calling two members or more), ``lift_min`` and
        ``lift_max`` over the links inside the cluster.
    """
    calls = _calls(open_source(root), server, None, None)
    rows: list[dict[str, Any]] = []
    for srv, frame in calls.groupby("server", sort=True):
        sets = {str(tool): set(g["session"]) for tool, g in frame.groupby("tool")}
        found = _server_clusters(str(srv), sets, frame["session"].nunique(), min_lift, min_sessions)
        found.sort(key=lambda r: (-r["size"], r["tools"]))
        rows += [{**r, "cluster": i} for i, r in enumerate(found, start=1)]
    return pa.Table.from_pylist(rows, schema=CLUSTERS_SCHEMA)
