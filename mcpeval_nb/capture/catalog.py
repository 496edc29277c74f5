"""The shims' catalog capture: ``tools/list`` pages assembled into listings, one catalog record each.

The correlator hands every answered ``tools/list`` request here (``CatalogWatcher.page``) with the
``seq`` of its call record; this runs on the recorder (a forked process behind the stdio shim, a
thread behind shim-http), never on the path a frame is forwarded on.  A request without a cursor starts
a listing; a request whose cursor is the ``nextCursor`` an earlier page returned continues that listing
(matched by the cursor's SHA-256, kept in memory only); a page without ``nextCursor`` completes it.  The
listing is then turned into one ``CatalogRecord`` (``privacy.catalog``) and the raw entries are dropped.

A listing is recorded with ``complete: false`` when a page is missing: it started with a cursor no
earlier page returned, a page was answered with an error, the client never asked for the next page
(recorded when the capture ends, or when more than ``MAX_OPEN_LISTINGS`` listings are open), or it ran
past ``MAX_CATALOG_PAGES`` pages or ``MAX_CATALOG_TOOLS`` tools.
"""

from __future__ import annotations

import contextlib
import hashlib
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..clock import now_ts
from ..errors import MCPEvalError
from ..journal.listing import journals
from ..journal.read import read_records
from ..limits import (
    CATALOG_NAME_DAYS,
    MAX_CATALOG_PAGES,
    MAX_CATALOG_TOOLS,
    MAX_OPEN_LISTINGS,
    MAX_RECORD_BYTES,
)
from ..privacy.catalog import UNLISTED, CatalogRecord, ToolCache, catalog_tool
from ..privacy.grammar import valid_tool
from ..privacy.records import Identity
from ..root.layout import CATALOGS
from .catalog_worker import CatalogWorker

__all__ = ["CatalogWatcher", "cursor_key", "recorded_names"]


def cursor_key(cursor: Any) -> bytes | None:
    """The in-memory key of a pagination cursor (its SHA-256), or None for a request without one."""
    if not isinstance(cursor, str):
        return None
    return hashlib.sha256(cursor.encode("utf-8", "surrogatepass")).digest()


def recorded_names(root: Path, *, days: int = CATALOG_NAME_DAYS) -> frozenset[str]:
    """Names of the tools listed in the root's newest ``days`` catalog journals (best effort: a journal
    that cannot be read is skipped, never an error)."""
    names: set[str] = set()
    try:
        found = journals(root, CATALOGS.name)
    except MCPEvalError:
        return frozenset()
    for journal in found[-days:]:
        with contextlib.suppress(MCPEvalError, OSError):
            for entry in read_records(journal.path):
                names.update(t.name for t in entry.record.tools if t.name != UNLISTED)
    return frozenset(names)


@dataclass
class _Listing:
    seq: int
    entries: list[Any] = field(default_factory=list)
    complete: bool = True
    pages: int = 0


class CatalogWatcher:
    """Assembles ``tools/list`` pages into listings and turns each into a catalog record.

    Args:
        server: the server label.
        session: the opaque session token (the call records').
        salt: the capture root's salt.
        known_names: names of tools other servers listed (read once, at the first completed listing).
        capture_id: the recorder's id (default: a fresh uuid4).
    """

    def __init__(self, *, server: str, session: str, salt: bytes,
                 known_names: Callable[[], frozenset[str]] = frozenset,
                 capture_id: str | None = None) -> None:
        self.server, self.session, self._salt = server, session, salt
        self.capture_id = capture_id or str(uuid.uuid4())
        self._known_names = known_names
        self._names: frozenset[str] | None = None
        self._last: frozenset[str] = frozenset()
        self._cache = ToolCache()
        self._worker: CatalogWorker | None = None
        self._open: OrderedDict[bytes, _Listing] = OrderedDict()
        self._ready: list[_Listing] = []
        self.failed = 0  # listings lost to an error here (the call records are never lost with them)

    def page(self, cursor: bytes | None, seq: int, message: dict[str, Any]) -> None:
        """One answered ``tools/list`` request; never raises (a failure is counted in ``failed``).

        Args:
            cursor: ``cursor_key`` of the request's cursor (None for a first page).
            seq: the ``seq`` of the request's call record.
            message: the answer (a result or an error), in memory only.
        """
        try:
            self._page(cursor, seq, message)
        except Exception:  # a catalog bug must not cost the call record or the capture
            self.failed += 1

    def _page(self, cursor: bytes | None, seq: int, message: dict[str, Any]) -> None:
        listing = self._open.pop(cursor, None) if cursor is not None else None
        result = message.get("result")
        tools = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(result, dict) or not isinstance(tools, list):  # an error, or a malformed page
            if listing is not None:
                listing.complete = False
                self._finish(listing)
            return
        if listing is None:
            listing = _Listing(seq, complete=cursor is None)
        self._add(listing, tools)
        nxt = cursor_key(result.get("nextCursor")) if result.get("nextCursor") else None
        if nxt is not None and listing.pages < MAX_CATALOG_PAGES and listing.complete:
            self._open[nxt] = listing
            while len(self._open) > MAX_OPEN_LISTINGS:
                _, oldest = self._open.popitem(last=False)
                oldest.complete = False
                self._finish(oldest)
            return
        if nxt is not None:
            listing.complete = False
        self._finish(listing)

    def _add(self, listing: _Listing, tools: list[Any]) -> None:
        listing.pages += 1
        room = MAX_CATALOG_TOOLS - len(listing.entries)
        if len(tools) > room:
            listing.complete = False
        listing.entries += tools[:max(0, room)]

    def offload(self, root: Path) -> None:
        """Build records in a helper process from now on (shim-http: see ``catalog_worker``); ``drain``
        then ships listings and returns nothing, and the helper appends the records."""
        self._worker = CatalogWorker(root=root, server=self.server, session=self.session,
                                     capture_id=self.capture_id)

    def drain(self) -> list[CatalogRecord]:
        """The records of the listings completed since the last call (built here, after the call record
        of the page that completed them, so that its ``shim_self_us`` holds none of this work)."""
        ready, self._ready = self._ready, []
        records = []
        for listing in ready:
            entries, listing.entries = listing.entries, []
            try:
                if self._worker is not None:
                    self._worker.ship(seq=listing.seq, complete=listing.complete, ts=now_ts(),
                                      entries=entries)
                else:
                    records.append(self.build(listing.seq, listing.complete, entries))
            except Exception:  # a catalog bug must not cost the call records or the capture
                self.failed += 1
        return records

    def close(self) -> list[CatalogRecord]:
        """The capture ended: every open listing is recorded incomplete; returns what is left to write."""
        while self._open:
            _, listing = self._open.popitem(last=False)
            listing.complete = False
            self._finish(listing)
        records = self.drain()
        if self._worker is not None:
            self.failed += self._worker.close()
        return records

    def _names_for(self, entries: list[Any]) -> frozenset[str]:
        if self._names is None:
            self._names = self._known_names()
        own = {e.get("name") for e in entries if isinstance(e, dict) and valid_tool(e.get("name"))}
        names = self._names | frozenset(str(n) for n in own)
        if names == self._last:  # the same object again: the tool cache compares it by identity first
            return self._last
        self._last = names
        return names

    def _finish(self, listing: _Listing) -> None:
        self._ready.append(listing)

    def build(self, seq: int, complete: bool, entries: list[Any], *, ts: str | None = None) -> CatalogRecord:
        """The catalog record of one completed listing (its raw entries are read here and dropped).

        Args:
            seq: the ``seq`` of the listing's first ``tools/list`` call record.
            complete: every page was seen.
            entries: the raw entries, in the order listed (in memory only).
            ts: when the listing completed (default: now).
        """
        names = self._names_for(entries)
        tools = tuple(catalog_tool(e, self._salt, names, cache=self._cache) for e in entries)
        record = CatalogRecord(ts=ts or now_ts(), session=self.session, seq=seq, server=self.server,
                               complete=complete, tools=tools,
                               identity=Identity(self.capture_id, str(uuid.uuid4())))  # sanitised on append
        # A tool's stored form is shorter than its listing entry plus a few hundred bytes: encode to check
        # the bound only when the listing itself comes near it.
        if sum(t.tokens for t in tools) * 4 + 600 * len(tools) >= MAX_RECORD_BYTES and \
                len(record.encode().encode("utf-8")) >= MAX_RECORD_BYTES:
            record = record.without_skeletons()
        return record
