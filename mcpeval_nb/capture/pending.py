"""The correlator's table of requests awaiting an answer, bounded by count and by bytes.

A client (or anyone who can reach shim-http's loopback listener) can send requests that are never
answered; without a bound every one of them would be kept for the life of the process.  The table keeps
at most ``MAX_PENDING_REQUESTS`` entries and ``MAX_PENDING_BYTES`` of them (an entry's shaped arguments
are held encoded, so its size is what it costs), and hands back the oldest entries it evicts so the
correlator can journal them as content-free ``unknown`` records.  Entries of one HTTP exchange (a
non-empty scope) can be dropped together when the exchange ends.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ..limits import MAX_PENDING_BYTES, MAX_PENDING_REQUESTS
from .wire import NO_FACTS, RequestFacts

__all__ = ["Pending", "PendingTable"]

#: What an entry costs beyond its encoded arguments (the object, its key, the table slot).
ENTRY_OVERHEAD = 256


@dataclass
class Pending:
    """One request awaiting its answer.

    Attributes:
        method: the request's method.
        tool: the tool name (``tools/call``), ``unlisted``, or None.
        args_json: the shaped arguments as compact JSON text, or None when the request had none.
        sent_ms: wall-clock ms when the request was read.
        overhead_us: the request frame's share of ``shim_self_us``.
        scope: the correlation scope (``""`` on stdio).
        collided: a second request with the same id arrived while this one was pending: its answer
            cannot be told from the other's.
        cursor: a ``tools/list`` request's pagination cursor as ``capture.catalog.cursor_key`` keeps it
            (its SHA-256), or None.
        facts: the request's content-free 2026-07-28 facts (``wire.request_facts``).
        flags: content-free flags it earned (a header mismatch, a retry's state flag with no operation).
        op: the multi round-trip or task operation it continues (``operations.Operation``), or None.
        acked: a ``subscriptions/listen`` whose stream was acknowledged.
    """

    method: str
    tool: str | None
    args_json: str | None
    sent_ms: int
    overhead_us: int
    scope: str = ""
    collided: bool = False
    cursor: bytes | None = None
    facts: RequestFacts = NO_FACTS
    flags: frozenset[str] = frozenset()
    op: Any = None
    acked: bool = False

    @property
    def size(self) -> int:
        """Bytes this entry is accounted for (an entry's facts and flags are within the fixed cost)."""
        return ENTRY_OVERHEAD + len(self.args_json or "")

    @property
    def args(self) -> Any:
        """The shaped arguments (decoded again), or None."""
        return None if self.args_json is None else json.loads(self.args_json)

    @staticmethod
    def encode_args(shape: Any) -> str | None:
        """Encode a shape for storage in an entry (None stays None)."""
        return None if shape is None else json.dumps(shape, separators=(",", ":"))


class PendingTable:
    """Pending requests in arrival order, bounded by count and bytes.

    Args:
        max_entries: the most entries kept.
        max_bytes: the most bytes kept (entries' ``size``); the newest entry is always kept.
    """

    def __init__(self, *, max_entries: int = MAX_PENDING_REQUESTS,
                 max_bytes: int = MAX_PENDING_BYTES) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: OrderedDict[str, Pending] = OrderedDict()
        self._scopes: dict[str, set[str]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def put(self, key: str, entry: Pending) -> tuple[Pending | None, list[Pending]]:
        """Add an entry as the newest.

        Args:
            key: the request's key (scope and id).
            entry: the request.

        Returns:
            The entry it displaced under the same key (a collision), or None; and the oldest entries
            evicted to stay within the bounds, oldest first.
        """
        previous = self._remove(key)
        if previous is not None:
            entry.collided = True
        self._entries[key] = entry
        self.bytes += entry.size
        if entry.scope:
            self._scopes.setdefault(entry.scope, set()).add(key)
        evicted: list[Pending] = []
        while len(self._entries) > 1 and (len(self._entries) > self.max_entries
                                          or self.bytes > self.max_bytes):
            oldest = next(iter(self._entries))
            gone = self._remove(oldest)
            assert gone is not None
            evicted.append(gone)
        return previous, evicted

    def pop(self, key: str) -> Pending | None:
        """Remove and return the entry under ``key``, or None."""
        return self._remove(key)

    def get(self, key: str) -> Pending | None:
        """The entry under ``key`` (left in place), or None."""
        return self._entries.get(key)

    def drain(self) -> list[Pending]:
        """Remove every entry; returns them oldest first."""
        entries = list(self._entries.values())
        self._entries.clear()
        self._scopes.clear()
        self.bytes = 0
        return entries

    def drop_scope(self, scope: str) -> list[Pending]:
        """Remove every entry of an ended HTTP exchange; returns them oldest first."""
        keys = self._scopes.get(scope, set())
        ordered = [k for k in self._entries if k in keys] if len(keys) > 1 else list(keys)
        return [entry for key in ordered if (entry := self._remove(key)) is not None]

    def _remove(self, key: str) -> Pending | None:
        entry = self._entries.pop(key, None)
        if entry is None:
            return None
        self.bytes -= entry.size
        if entry.scope:
            keys = self._scopes.get(entry.scope)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._scopes[entry.scope]
        return entry
