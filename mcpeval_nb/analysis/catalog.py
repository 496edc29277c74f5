"""Catalog history and drift: what each server listed over time, and every change (docs/catalog.md).

``catalog_history`` is the store's catalog table (one row per listed tool of every recorded listing).
``catalog_drift`` walks each server's complete listings in time order and reports every change between
consecutive distinct catalogs, or, with ``pins``, between each listing and the pinned catalog:

* ``added`` / ``removed``: a name appears or disappears;
* ``renamed``: a name disappears and another appears with the same definition digest (the definition
  digest covers everything but the name);
* ``description-changed``, ``schema-changed``, ``annotations-changed``: that digest changed;
* ``definition-changed``: only another part of the definition changed (title, output schema, icons...);
* ``mid-session``: one more row for each change seen between two listings of one session (an agent's
  tools changed under it); ``list_changed`` says whether the server announced it with
  ``notifications/tools/list_changed`` in between.

The order in which a server lists its tools is never a change.  Incomplete listings (a page missing)
are left out: a missing page is not a removal.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from ..clock import Moment, parse_moment
from ..errors import UsageError
from ..root import RootLike
from .catalog_pins import CatalogPins, ToolState, load_pins, parse_pins

if TYPE_CHECKING:
    from ..tables.store import Store

__all__ = ["CHANGES", "DRIFT_SCHEMA", "HISTORY_SCHEMA", "Listing", "Source", "catalog_drift",
           "catalog_history", "listings", "moment", "open_source", "resolve_pins", "tool_changes"]

_TS = pa.timestamp("ms", tz="UTC")
#: The change kinds of ``catalog_drift``, in the order rows of one listing are reported.
CHANGES = ("removed", "added", "renamed", "description-changed", "schema-changed", "annotations-changed",
           "definition-changed", "mid-session")
#: The columns of ``catalog_drift``.
DRIFT_SCHEMA = pa.schema([
    ("server", pa.string()), ("tool", pa.string()), ("change", pa.string()), ("previous_tool", pa.string()),
    ("first_seen", _TS), ("session", pa.string()), ("seq", pa.uint64()), ("sessions", pa.int64()),
    ("mid_session", pa.bool_()), ("list_changed", pa.bool_()), ("against", pa.string()),
    ("before", pa.string()), ("after", pa.string()),
])
_LIST_CHANGED = "notifications/tools/list_changed"
#: What the analysis functions accept as ``root``: a capture root (``RootLike``; None: the default root) or
#: an open ``Store``.
Source: TypeAlias = "RootLike | Store"


def open_source(root: Any) -> Store:
    """A ``Store`` for ``root`` (a capture root path, or an open ``Store`` used as it is)."""
    from ..tables.store import Store, open_store

    return root if isinstance(root, Store) else open_store(root)


def _plain(table: pa.Table) -> pa.Table:
    cols = [c.cast(pa.string()) if pa.types.is_dictionary(c.type) else c for c in table.columns]
    return pa.table(cols, names=table.column_names)


def _history_schema() -> pa.Schema:
    from ..tables.schemas import CATALOGS_SCHEMA

    return pa.schema([pa.field(f.name, pa.string(), f.nullable) if pa.types.is_dictionary(f.type) else f
                      for f in CATALOGS_SCHEMA])


HISTORY_SCHEMA = _history_schema()


def catalog_history(root: Source = None, *, server: str | None = None) -> pa.Table:
    """One row per (listing, tool): every catalog record the shims wrote, in time order.

    Args:
        root: the capture root (default ``$MCPEVAL_HOME``, else ``~/.mcp-eval``), or an open ``Store``.
        server: only this server label.

    Returns:
        ``HISTORY_SCHEMA`` (the store's catalog columns, text columns as plain strings): ``ts``,
        ``session``, ``seq``, ``server``, ``complete``, ``capture_id``, ``event_id``, ``listing_tools``,
        ``position``, ``tool``, the four digests, ``desc_bucket``, ``skeleton`` (JSON text), ``depth``,
        ``properties``, the four hints, ``icons``, ``tokens``, ``flags``.  Sorted by ``ts``, then session,
        ``seq`` and position (a listing's tools stay in the order listed).

    Raises:
        RecordTooLarge, InvalidRecord: a bad catalog line; LockTimeout: a journal stayed locked.
    """
    table = _plain(open_source(root).catalogs)
    if server is not None:
        table = table.filter(pc.equal(table["server"], server))
    if table.num_rows:
        table = table.sort_by([("ts", "ascending"), ("session", "ascending"), ("seq", "ascending"),
                               ("position", "ascending")])
    return table.cast(HISTORY_SCHEMA)


@dataclass(frozen=True)
class Listing:
    """One recorded listing: where it came from and each tool's state, in the order listed."""

    server: str
    session: str
    seq: int
    ts: dt.datetime | None
    complete: bool
    tools: dict[str, ToolState]
    tokens: dict[str, int]


def listings(history: pa.Table) -> list[Listing]:
    """The listings of a ``catalog_history`` table, in its row order (one per catalog record)."""
    out: list[Listing] = []
    key: Any = None
    for row in history.to_pylist():
        row_key = (row["event_id"], row["session"], row["seq"], row["ts"], row["server"])
        if row_key != key:
            key = row_key
            out.append(Listing(row["server"], row["session"], row["seq"], row["ts"], row["complete"], {}, {}))
        if row["tool"] is not None:
            out[-1].tools[row["tool"]] = ToolState(
                row["def_digest"], row["desc_digest"], row["schema_digest"], row["annotations_digest"],
                tuple(row["flags"] or ()))
            out[-1].tokens[row["tool"]] = row["tokens"] or 0
    return out


def moment(value: Moment, what: str) -> dt.datetime | None:
    """A day (UTC midnight) or a time a user gave, as an aware UTC datetime (``clock.parse_moment``).

    Raises:
        UsageError: ``<what> must be a day, YYYY-MM-DD, or an RFC 3339 time``.
    """
    ms = parse_moment(value, what=what)
    return None if ms is None else dt.datetime.fromtimestamp(ms / 1000, dt.UTC)


Change = tuple[str, str, str | None, str | None, str | None]  # tool, change, previous tool, before, after


def tool_changes(before: dict[str, ToolState], after: dict[str, ToolState]) -> list[Change]:
    """Every change from one catalog to another (tool, change, previous tool, digest before, after).

    Reordering is no change: catalogs are compared by name.
    """
    removed = [n for n in before if n not in after]
    added = [n for n in after if n not in before]
    rows: list[Change] = []
    for name in list(added):
        digest = after[name].def_digest
        match = next((r for r in removed if digest is not None and before[r].def_digest == digest), None)
        if match is not None:
            removed.remove(match)
            added.remove(name)
            rows.append((name, "renamed", match, digest, digest))
    rows = [(n, "removed", None, before[n].def_digest, None) for n in removed] + \
        [(n, "added", None, None, after[n].def_digest) for n in added] + rows
    for name, now in after.items():
        was = before.get(name)
        if was is not None:
            rows += _changed(name, was, now)
    return rows


def _changed(name: str, was: ToolState, now: ToolState) -> list[Change]:
    rows: list[Change] = [(name, kind, None, a, b) for kind, a, b in (
        ("description-changed", was.desc_digest, now.desc_digest),
        ("schema-changed", was.schema_digest, now.schema_digest),
        ("annotations-changed", was.annotations_digest, now.annotations_digest)) if a != b]
    if not rows and was.def_digest != now.def_digest:
        rows.append((name, "definition-changed", None, was.def_digest, now.def_digest))
    return rows


def _shows(change: Change) -> Callable[[dict[str, ToolState]], bool]:
    """Whether a catalog still carries a change (the tool in its new state, or still absent)."""
    tool, kind, _, _, after = change
    field = {"description-changed": "desc_digest", "schema-changed": "schema_digest",
             "annotations-changed": "annotations_digest"}.get(kind, "def_digest")
    if kind == "removed":
        return lambda tools: tool not in tools
    return lambda tools: tool in tools and getattr(tools[tool], field) == after


def _same_state(a: dict[str, ToolState], b: dict[str, ToolState]) -> bool:
    return a.keys() == b.keys() and all(a[k].digests() == b[k].digests() for k in a)


class _Announcements:
    """The ``seq`` of every ``notifications/tools/list_changed`` per session, read only when needed."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._seqs: dict[str, list[int]] | None = None

    def between(self, session: str, low: int, high: int) -> bool:
        if self._seqs is None:
            calls = self._store.calls
            hits = calls.filter(pc.equal(calls["method"].cast(pa.string()), _LIST_CHANGED))
            self._seqs = {}
            sessions = hits["session"].cast(pa.string()).to_pylist()
            for s, q in zip(sessions, hits["seq"].to_pylist(), strict=True):
                self._seqs.setdefault(s, []).append(q)
        return any(low < q < high for q in self._seqs.get(session, ()))


def _sessions(change: Change, later: list[Listing], stop: bool) -> int:
    shows, seen = _shows(change), set()
    for listing in later:
        if shows(listing.tools):
            seen.add(listing.session)
        elif stop:
            break
    return len(seen)


def _row(server: str, change: Change, at: Listing, prev: Listing | None, sessions: int, against: str,
         notes: _Announcements) -> dict[str, Any]:
    mid = prev is not None and prev.session == at.session
    return {"server": server, "tool": change[0], "change": change[1], "previous_tool": change[2],
            "first_seen": at.ts, "session": at.session, "seq": at.seq, "sessions": sessions,
            "mid_session": mid,
            "list_changed": mid and prev is not None and notes.between(at.session, prev.seq, at.seq),
            "against": against, "before": change[3], "after": change[4]}


def _consecutive(server: str, items: list[Listing], notes: _Announcements) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i in range(1, len(items)):
        prev, now = items[i - 1], items[i]
        if _same_state(prev.tools, now.tools):
            continue
        for change in tool_changes(prev.tools, now.tools):
            lasted = _sessions(change, items[i:], True)
            rows.append(_row(server, change, now, prev, lasted, "previous", notes))
    return rows


def _against_pin(server: str, pinned: dict[str, ToolState], items: list[Listing],
                 notes: _Announcements) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    seen: set[Change] = set()
    last: dict[str, Listing] = {}
    for i, now in enumerate(items):
        prev = last.get(now.session)
        for change in tool_changes(pinned, now.tools):
            if change in seen:
                continue
            seen.add(change)
            before = prev if prev is not None and not _shows(change)(prev.tools) else None
            rows.append(_row(server, change, now, before, _sessions(change, items[i:], False), "pin", notes))
        last[now.session] = now
    return rows


def _with_mid_session(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for row in rows:
        out.append(row)
        if row["mid_session"]:
            out.append({**row, "change": "mid-session", "previous_tool": None})
    return out


def resolve_pins(pins: Any, store: Store) -> CatalogPins | None:
    """``pins=`` as given: None, True (the root's pins file), a ``CatalogPins``, a pins document, or a
    path to one."""
    if pins is None or pins is False:
        return None
    if pins is True:
        return load_pins(store.root)
    if isinstance(pins, CatalogPins):
        return pins
    if isinstance(pins, dict):
        return parse_pins(pins)
    if isinstance(pins, str | os.PathLike):
        try:
            return parse_pins(open(pins, "rb").read(), source=os.fspath(pins))
        except OSError as exc:
            raise UsageError(f"cannot read {os.fspath(pins)}: {exc.strerror}") from None
    raise UsageError("pins must be True, a path, a pins document or CatalogPins")


def _by_server(items: Iterable[Listing]) -> dict[str, list[Listing]]:
    grouped: dict[str, list[Listing]] = {}
    for listing in items:
        if listing.complete:
            grouped.setdefault(listing.server, []).append(listing)
    return grouped


def catalog_drift(root: Source = None, *, server: str | None = None,
                  since: Moment = None, pins: Any = None) -> pa.Table:
    """Every change of each server's catalog, per tool (see the module docstring for the kinds).

    Args:
        root: the capture root, or an open ``Store``.
        server: only this server label.
        since: only changes first seen on or after this day or time (``YYYY-MM-DD``, RFC 3339, a date or a
            datetime); the
            listings before it are still the baseline (against a pin: only listings from then on).
        pins: compare against pinned catalogs instead of the previous listing: True (the root's
            ``catalog-pins.json``), a path, a pins document or ``CatalogPins``.  Servers without a pin
            are compared listing to listing.

    Returns:
        ``DRIFT_SCHEMA``: ``server``, ``tool``, ``change``, ``previous_tool`` (a rename's old name),
        ``first_seen``, ``session`` and ``seq`` of the listing it was first seen in, ``sessions`` (how many
        sessions listed it: until it changed again, or against a pin in all later listings),
        ``mid_session``, ``list_changed``, ``against`` (``previous`` or ``pin``), and ``before``/``after``:
        the digest the change is about (the description's for ``description-changed``, the definition's
        for added, removed and renamed tools).  Sorted by server, then first seen.

    Raises:
        UsageError: a bad ``since`` or ``pins``.
    """
    store = open_source(root)
    start = moment(since, "--since")
    pinned = resolve_pins(pins, store)
    notes = _Announcements(store)
    rows: list[dict[str, Any]] = []
    for name, items in sorted(_by_server(listings(catalog_history(store, server=server))).items()):
        pin = pinned.servers.get(name) if pinned is not None else None
        if pin is not None:  # against the pin: only the listings from ``since`` on
            later = [i for i in items if start is None or (i.ts is not None and i.ts >= start)]
            rows += _with_mid_session(_against_pin(name, dict(pin.tools), later, notes))
            continue
        rows += [r for r in _with_mid_session(_consecutive(name, items, notes))
                 if start is None or (r["first_seen"] is not None and r["first_seen"] >= start)]
    return pa.Table.from_pylist(rows, schema=DRIFT_SCHEMA)
