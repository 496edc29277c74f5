"""Annotation links and legacy group tails: the two look-ups an index needs beyond its rows.

An annotation links to the call with its event id, else to the one call with its (session, seq)
(``matches`` keeps how many calls have that coordinate, so a refresh can tell "none yet" from "two"
without a (session, seq) index over every call).  A full build counts the matches with numpy over the
sorted calls; a refresh adds the new calls' matches to the old annotations and counts new annotations'
matches with one scan of the calls of their sessions.  ``index_groups`` keeps each legacy (session,
server) group's last five calls (``id:seq:failed``), the only calls a new call's window can reach.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict

import numpy as np

from .encode import Encoded, Encoder
from .windows import BEFORE, Tail

__all__ = ["Tail", "link_events", "link_full", "link_refresh", "parse_tail", "tail_text"]

_BY_EVENT = ("UPDATE annotations SET call_id = (SELECT r.id FROM call_rows r WHERE r.event IS NOT NULL AND "
             "r.event = annotations.event_id) WHERE event_id IS NOT NULL")


def tail_text(rows: Tail) -> str:
    """A tail as stored: ``id:seq:failed`` joined by commas (at most the last five)."""
    return ",".join(f"{i}:{s}:{f}" for i, s, f in rows[-BEFORE:])


def parse_tail(text: str) -> Tail:
    """The rows of a stored tail."""
    out: Tail = []
    for part in filter(None, text.split(",")):
        i, s, f = part.split(":")
        out.append((int(i), int(s), int(f)))
    return out


def link_events(db: sqlite3.Connection, *, only_unlinked: bool) -> None:
    """Link annotations that name an event id (all, or only those not linked yet)."""
    db.execute(_BY_EVENT + (" AND call_id IS NULL" if only_unlinked else ""))


def link_full(db: sqlite3.Connection, enc: Encoded, ids: np.ndarray, encoder: Encoder) -> None:
    """A full build's links: by event id in SQL, by (session, seq) by binary search over sorted calls."""
    link_events(db, only_unlinked=False)
    notes = db.execute("SELECT rowid, session, seq FROM annotations WHERE event_id IS NULL").fetchall()
    codes = np.array([encoder.strings.get(s, 0) for _, s, _ in notes], dtype=np.int64)
    wanted = np.array([-1 if q is None else min(q, 2**62) for _, _, q in notes], dtype=np.int64)
    width = int(max(enc.seq.max(initial=0), wanted.max(initial=0))) + 2
    if (int(enc.session.max(initial=0)) + 1) * width < 2**62:  # one int64 key per (session, seq)
        order = np.argsort(enc.session * width + enc.seq, kind="stable")
        keys = (enc.session * width + enc.seq)[order]
        targets = codes * width + wanted
        left = np.searchsorted(keys, targets, side="left")
        counts = np.searchsorted(keys, targets, side="right") - left
        counts[(codes == 0) | (wanted < 0)] = 0
        first = ids[order[np.minimum(left, max(0, len(order) - 1))]] if len(order) else left
        updates = [(n, c if n == 1 else None, r) for (r, _, _), n, c in
                   zip(notes, counts.tolist(), first.tolist(), strict=True)]
    else:  # keys would overflow: one binary search per annotation
        order = np.lexsort((enc.seq, enc.session))
        sessions, seqs = enc.session[order], enc.seq[order]
        updates = []
        for (rowid, _, _), code, seq in zip(notes, codes.tolist(), wanted.tolist(), strict=True):
            lo, hi = np.searchsorted(sessions, [code, code + 1])
            lft, rgt = lo + np.searchsorted(seqs[lo:hi], [seq, seq + 1])
            n = int(rgt - lft) if code and seq >= 0 else 0
            updates.append((n, int(ids[order[lft]]) if n == 1 else None, rowid))
    db.executemany("UPDATE annotations SET matches = ?, call_id = ? WHERE rowid = ?", updates)


def link_refresh(db: sqlite3.Connection, enc: Encoded, ids: np.ndarray, encoder: Encoder,
                 last_note: int) -> None:
    """A refresh's links: new calls add to old annotations' matches; new annotations are counted."""
    link_events(db, only_unlinked=True)
    fresh: dict[tuple[int, int], list[int]] = defaultdict(list)
    for session, seq, call in zip(enc.session.tolist(), enc.seq.tolist(), ids.tolist(), strict=True):
        fresh[(session, seq)].append(call)
    updates: list[tuple[int, int | None, int]] = []
    if fresh:
        for rowid, session, seq, matches in db.execute(
                "SELECT rowid, session, seq, matches FROM annotations WHERE event_id IS NULL AND rowid <= ?",
                (last_note,)).fetchall():
            hits = fresh.get((encoder.strings.get(session, 0), seq))
            if hits:
                total = matches + len(hits)
                updates.append((total, hits[0] if total == 1 else None, rowid))
    new = db.execute("SELECT rowid, session, seq FROM annotations WHERE event_id IS NULL AND rowid > ?",
                     (last_note,)).fetchall()
    if new:
        codes = {s: c for s, c in db.execute(
            "SELECT value, id FROM strings WHERE value IN (SELECT value FROM json_each(?))",
            (_json([s for _, s, _ in new]),))}
        wanted = {(codes.get(s), q) for _, s, q in new}
        found: dict[tuple[int, int], list[int]] = defaultdict(list)
        marks = ", ".join(str(c) for c in set(codes.values())) or "NULL"
        scan = f"SELECT id, session, seq FROM call_rows WHERE session IN ({marks})"
        for call, session, seq in db.execute(scan):
            if (session, seq) in wanted:
                found[(session, seq)].append(call)
        for rowid, session, seq in new:
            hits = found.get((codes.get(session, -1), seq), [])
            updates.append((len(hits), hits[0] if len(hits) == 1 else None, rowid))
    db.executemany("UPDATE annotations SET matches = ?, call_id = ? WHERE rowid = ?", updates)


def _json(values: list[str]) -> str:
    from ..jsonfmt import dumps
    return dumps(values, sort_keys=False)
