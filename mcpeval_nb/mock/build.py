"""``mock_profile``: a recorded server's behaviour from its capture root, content-free (docs/mock.md).

What counts: the server's **real** ``tools/call`` records in the window (a probe's synthetic calls are
not the traffic being mocked), its complete catalog records, and its result-size history.

- Tools, in order: the latest complete listing in the window (else the latest before its end), then the
  tools of earlier listings in the window that were called, then (no catalog at all) every called tool.
  A tool with a catalog record keeps its skeleton and hints; one without gets a skeleton derived from
  its recorded argument shapes (``schema_source: shapes``).
- Unknown tools: with a catalog, a call of a tool no listing of the window carried (or whose name is
  outside the grammar, ``unlisted``) is evidence of how the server answers unknown tools; the most
  frequent such answer is ``unknown_tool``.
- Outcomes per tool and per argument shape: ``ok``; ``tool-error`` (the shim's ``tool-error`` code) with
  its template id; ``rpc-error`` with its JSON-RPC code and template id.  ``unknown`` outcomes are left out.
  The ``MAX_SHAPES`` most frequent shapes are kept (keys that are labels, values that are tokens).
- Latency per tool: the quantiles q0..q100 and bootstrap 95% intervals of p50 and p95
  (``BOOTSTRAP_RESAMPLES`` resamples with a fixed seed, so a profile is reproducible).
- Result sizes per tool from ``store/probes/sizes.jsonl`` (``ok`` rows in the window), in classes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..analysis.catalog import Listing, Source, catalog_history, listings, open_source
from ..analysis.filters import filter_calls
from ..clock import day_start, format_ms, parse_day
from ..errors import UsageError
from ..jsonfmt import JSONFormatError, loads
from ..privacy.errorinfo import code_value
from ..privacy.grammar import valid_server, valid_tool
from ..sizes.table import result_size_history
from .profile import (
    HINTS,
    Interval,
    LatencyProfile,
    MockProfile,
    OutcomeCount,
    ShapeProfile,
    SizeClass,
    ToolProfile,
    clean_shape,
    merge_outcomes,
)
from .schemas import skeleton_from_shapes

__all__ = ["BOOTSTRAP_RESAMPLES", "MAX_SHAPES", "SIZE_BOUNDS", "bootstrap_percentile", "mock_profile"]

#: Argument shapes kept per tool (the most frequent).
MAX_SHAPES = 32
#: Bootstrap resamples for the latency intervals (fewer for very large samples, see ``_resamples``).
BOOTSTRAP_RESAMPLES = 1000
#: Upper bounds (bytes) of the result size classes; larger results are one more class.
SIZE_BOUNDS = (256, 1024, 4096, 16384, 65536, 262144, 1048576)
_TS = pa.timestamp("ms", tz="UTC")
_HINT_COLUMNS = ("read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint")


def _resamples(n: int) -> int:
    return BOOTSTRAP_RESAMPLES if n <= 5000 else max(200, 5_000_000 // n)


def bootstrap_percentile(values: Any, q: float, *, seed: int = 0) -> Interval:
    """A percentile of ``values`` with its bootstrap 95% interval (percentile method, fixed seed).

    Args:
        values: latencies (milliseconds). q: the percentile, 0-100. seed: the resampling seed.

    Returns:
        The interval (all None for fewer than two values).
    """
    data = np.asarray(values, dtype=np.float64)
    if data.size < 2:
        return Interval()
    rng = np.random.default_rng(seed)
    stats = np.empty(_resamples(data.size))
    for i in range(stats.size):
        stats[i] = np.percentile(rng.choice(data, data.size), q)
    low, high = np.percentile(stats, [2.5, 97.5])
    return Interval(round(float(np.percentile(data, q)), 3), round(float(low), 3), round(float(high), 3))


def _latency(values: list[int]) -> LatencyProfile:
    if len(values) < 2:
        return LatencyProfile()
    data = np.asarray(values, dtype=np.float64)
    quantiles = tuple(round(float(v), 3) for v in np.percentile(data, np.arange(101)))
    return LatencyProfile(len(values), quantiles, bootstrap_percentile(data, 50),
                          bootstrap_percentile(data, 95))


def _outcome(outcome: str, code_text: str | None, template: str | None) -> OutcomeCount | None:
    if outcome == "ok":
        return OutcomeCount("ok", 1)
    if outcome != "error":
        return None
    code = code_value(code_text) if code_text is not None else None
    if code == "tool-error":
        return OutcomeCount("tool-error", 1, None, template)
    number = code if isinstance(code, int) and not isinstance(code, bool) else None
    return OutcomeCount("rpc-error", 1, number, template)


@dataclass
class _Tool:
    """One tool's recorded calls while the profile is built."""

    outcomes: list[OutcomeCount] = field(default_factory=list)
    shapes: dict[str | None, list[OutcomeCount]] = field(default_factory=dict)
    latencies: list[int] = field(default_factory=list)

    def add(self, args: str | None, outcome: OutcomeCount, latency: int | None) -> None:
        self.outcomes.append(outcome)
        self.shapes.setdefault(args, []).append(outcome)
        if latency is not None:
            self.latencies.append(latency)

    def shape_profiles(self) -> tuple[tuple[ShapeProfile, ...], int, list[Any]]:
        """The kept shapes, the calls of the others, and every parseable shape (for a derived schema)."""
        kept: list[ShapeProfile] = []
        other, parsed = 0, []
        ranked = sorted(self.shapes.items(), key=lambda kv: (-len(kv[1]), kv[0] or ""))
        for text, outcomes in ranked:
            ok, shape = _parse_shape(text)
            if ok:
                parsed.append(shape)
            if ok and len(kept) < MAX_SHAPES:
                kept.append(ShapeProfile(shape, len(outcomes), merge_outcomes(outcomes)))
            else:
                other += len(outcomes)
        return tuple(kept), other, parsed


def _parse_shape(text: str | None) -> tuple[bool, Any]:
    if text is None:
        return True, None
    try:
        return clean_shape(loads(text))
    except JSONFormatError:
        return False, None


def _window(since: Any, until: Any) -> tuple[dt.date | None, dt.date | None]:
    first = parse_day(since, what="--since")
    last = parse_day(until, what="--until")
    if first is not None and last is not None and first > last:
        raise UsageError("--since must not be after --until")
    return first, last


def _calls(store: Any, server: str, first: dt.date | None, last: dt.date | None) -> pa.Table:
    calls = filter_calls(store.calls, server=server, method="tools/call", day_from=first, day_to=last)
    calls = calls.filter(pc.equal(calls["kind"].cast(pa.string()), "real"))
    cols = ("ts", "session", "tool", "args", "latency_ms", "outcome", "error_code", "error_template_id")
    return pa.table({c: calls[c].cast(pa.string()) if pa.types.is_dictionary(calls[c].type) else calls[c]
                     for c in cols})


def _in_window(listing: Listing, first: dt.date | None, last: dt.date | None) -> bool:
    if listing.ts is None:
        return first is None and last is None
    return (first is None or listing.ts >= day_start(first)) and (
        last is None or listing.ts < day_start(last + dt.timedelta(days=1)))


def _catalog(store: Any, server: str, first: dt.date | None, last: dt.date | None, *, calls: bool
             ) -> tuple[list[Listing], pa.Table]:
    """The complete listings of the window (or, when the window has calls, the latest before its end),
    and their history rows."""
    history = catalog_history(store, server=server)
    complete = [item for item in listings(history) if item.complete]
    inside = [item for item in complete if _in_window(item, first, last)]
    if not inside and calls:
        before = [i for i in complete if last is None or (i.ts is not None and i.ts < day_start(
            last + dt.timedelta(days=1)))]
        inside = before[-1:]
    return inside, history


def _tool_facts(history: pa.Table, chosen: list[Listing]) -> dict[str, dict[str, Any]]:
    """Per tool name: the skeleton and hints of its latest row among the chosen listings."""
    keys = {(item.session, item.seq) for item in chosen}
    facts: dict[str, dict[str, Any]] = {}
    for row in history.to_pylist():
        if row["tool"] is not None and (row["session"], row["seq"]) in keys:
            skeleton = loads(row["skeleton"]) if row["skeleton"] else None
            hints = {h: row[c] for h, c in zip(HINTS, _HINT_COLUMNS, strict=True)}
            facts[row["tool"]] = {"skeleton": skeleton, "hints": hints}
    return facts


def _sizes(root: Any, server: str, first: dt.date | None, last: dt.date | None) -> dict[str, list[int]]:
    table = result_size_history(root=root, server=server)
    out: dict[str, list[int]] = {}
    for row in table.to_pylist():
        day = row["ts"].date() if row["ts"] is not None else None
        inside = day is not None and (first is None or day >= first) and (last is None or day <= last)
        if inside and row["outcome"] == "ok" and row["result_bytes"] is not None and row["tool"]:
            out.setdefault(row["tool"], []).append(int(row["result_bytes"]))
    return out


def _size_classes(values: list[int]) -> tuple[SizeClass, ...]:
    classes: dict[int | None, list[int]] = {}
    for value in values:
        upper = next((b for b in SIZE_BOUNDS if value <= b), None)
        classes.setdefault(upper, []).append(value)
    order = [*SIZE_BOUNDS, None]
    return tuple(SizeClass(u, len(classes[u]), int(np.median(classes[u]))) for u in order if u in classes)


def _unknown(rows: Iterable[OutcomeCount]) -> OutcomeCount | None:
    merged = merge_outcomes(rows)
    return max(merged, key=lambda o: o.count) if merged else None


def _time(calls: pa.Table, how: str) -> str | None:
    value = pc.min(calls["ts"]) if how == "min" else pc.max(calls["ts"])
    scalar = value.as_py()
    return None if scalar is None else format_ms(int(scalar.timestamp() * 1000))


def mock_profile(root: Source = None, *, server: str, since: Any = None, until: Any = None) -> MockProfile:
    """The recorded behaviour of one server, as a mock profile (see the module docstring).

    Args:
        root: the capture root (default ``$MCPEVAL_HOME``, else ``~/.mcp-eval``), or an open ``Store``.
        server: the server label.
        since / until: an inclusive window of UTC days (``YYYY-MM-DD``, a ``date``), None for open.

    Returns:
        The profile (``to_json()`` is the ``mcpeval-nb.mock-profile/v1`` document).

    Raises:
        UsageError: an invalid label or day, or nothing recorded for the server in the window.
    """
    if not valid_server(server):
        raise UsageError("server label is invalid")
    first, last = _window(since, until)
    store = open_source(root)
    calls = _calls(store, server, first, last)
    chosen, history = _catalog(store, server, first, last, calls=calls.num_rows > 0)
    if calls.num_rows == 0 and not chosen:
        raise UsageError(f"nothing recorded for server {server} in the window: no real tools/call records "
                         "and no complete catalog listing")
    known = {name for item in chosen for name in item.tools}
    tools: dict[str, _Tool] = {}
    unknown: list[OutcomeCount] = []
    for row in calls.to_pylist():
        outcome = _outcome(row["outcome"], row["error_code"], row["error_template_id"])
        if outcome is None:
            continue
        name = row["tool"]
        if name is None or not valid_tool(name) or name == "unlisted" or (chosen and name not in known):
            unknown.append(outcome)
            continue
        tools.setdefault(name, _Tool()).add(row["args"], outcome, row["latency_ms"])
    facts = _tool_facts(history, chosen)
    latest = list(chosen[-1].tools) if chosen else []
    order = latest + [n for n in tools if n not in latest]
    sizes = _sizes(store.root, server, first, last)
    profiles = tuple(_tool_profile(name, tools.get(name, _Tool()), facts.get(name), name in latest,
                                   sizes.get(name, [])) for name in order)
    some = calls.num_rows > 0
    return MockProfile(
        server=server, tools=profiles, since=None if first is None else first.isoformat(),
        until=None if last is None else last.isoformat(), first_call=_time(calls, "min") if some else None,
        last_call=_time(calls, "max") if some else None, calls=calls.num_rows,
        sessions=len(calls["session"].unique()), catalog_listings=len(chosen), unknown_tool=_unknown(unknown))


def _tool_profile(name: str, tool: _Tool, facts: dict[str, Any] | None, listed: bool,
                  sizes: list[int]) -> ToolProfile:
    shapes, other, parsed = tool.shape_profiles()
    if facts is not None:
        source, skeleton, hints = "catalog", facts["skeleton"], facts["hints"]
    else:
        source, skeleton, hints = "shapes", skeleton_from_shapes(parsed), dict.fromkeys(HINTS)
    return ToolProfile(name=name, listed=listed, schema_source=source, skeleton=skeleton, hints=hints,
                       calls=len(tool.outcomes), outcomes=merge_outcomes(tool.outcomes), shapes=shapes,
                       other_shape_calls=other, latency=_latency(tool.latencies), sizes=_size_classes(sizes))
