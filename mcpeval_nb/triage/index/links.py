"""Annotation links and legacy group tails: the two look-ups an index needs beyond its rows.

An annotation links to the call with its event id, else to the one call with its (session, seq)
(``matches`` keeps how many calls have that coordinate, so a refresh can tell "none yet" from "two"
without a (session, seq) index over every call).  A full build counts the matches with numpy over the
sorted calls before the annotations are written; a refresh adds the new calls' matches to the old
annotations at their coordinates (found through ``annotations_at``) and counts new annotations' matches
with one scan of the calls of their sessions.
``index_groups`` keeps each legacy (session, server) group's last five calls (``id:seq:failed``), the
only calls a new call's window can reach.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .database import json_list
from .encode import Encoded, Encoder
from .events import EventOrder, event_calls
from .windows import Tail

__all__ = ["Tail", "link_events", "link_refresh", "linked_notes", "parse_tail"]


def parse_tail(text: str) -> Tail:
    """The rows of a stored tail."""
    out: Tail = []
    for part in filter(None, text.split(",")):
        i, s, f = part.split(":")
        out.append((int(i), int(s), int(f)))
    return out


def link_events(db: sqlite3.Connection) -> None:
    """Link the annotations that name an event id and are not linked yet (to the call with that id)."""
    notes = db.execute(
        "SELECT rowid, event_id FROM annotations WHERE event_id IS NOT NULL AND call_id IS NULL").fetchall()
    if notes:
        calls = event_calls(db, [event for _, event in notes])
        db.executemany("UPDATE annotations SET call_id = ? WHERE rowid = ?",
                       [(calls[event], rowid) for rowid, event in notes if event in calls])


def linked_notes(notes: pa.Table, enc: Encoded, ids: np.ndarray, encoder: Encoder,
                 events: EventOrder) -> pa.Table:
    """A full build's annotations with their links (``call_id``, ``matches``), computed before they are
    written: by event id (the call with that event, else none), else by (session, seq) with a binary
    search over the sorted calls (``matches`` counts the calls there; the link needs exactly one).

    Args:
        notes: ``annotation_rows`` of every annotation read. enc / ids: every call row and its id.
        encoder: the build's codes (sessions are looked up by their text). events: the calls' event ids
            in key order (``Ingest.events``).
    """
    count = notes.num_rows
    call_id = np.full(count, -1, dtype=np.int64)
    matches = np.full(count, -1, dtype=np.int64)
    event = notes.column("event_id").combine_chunks() if count else pa.array([], pa.string())
    by_event = pc.is_valid(event).to_numpy(zero_copy_only=False)
    if by_event.any():
        call_id[:] = events.find(event, enc.event)
    rows = np.flatnonzero(~by_event)
    sessions = notes.column("session").take(pa.array(rows)).to_pylist()
    seqs = notes.column("seq").take(pa.array(rows)).to_pylist()
    codes = np.array([encoder.strings.get(s, 0) for s in sessions], dtype=np.int64)
    wanted = np.array([-1 if q is None else q for q in seqs], dtype=np.int64)  # stored as calls' are
    width = int(max(enc.seq.max(initial=0), wanted.max(initial=0))) + 2
    if (int(enc.session.max(initial=0)) + 1) * width < 2**62:  # one int64 key per (session, seq)
        # The few wanted coordinates sorted, every call's looked up among them: no sort of the calls.
        targets = codes * width + wanted
        wanted_ok = (codes != 0) & (wanted >= 0)
        uniq = np.unique(targets[wanted_ok])
        counts, first = np.zeros(len(rows), dtype=np.int64), np.full(len(rows), -1, dtype=np.int64)
        if len(uniq):
            keys = pa.array(enc.session * width + enc.seq, pa.int64())
            at = pc.fill_null(pc.index_in(keys, value_set=pa.array(uniq, pa.int64())), -1).to_numpy()
            hits = np.flatnonzero(at >= 0)  # calls at a wanted coordinate, in row (= id) order
            per = np.bincount(at[hits], minlength=len(uniq))
            seen, earliest = np.unique(at[hits], return_index=True)
            first_of = np.full(len(uniq), -1, dtype=np.int64)
            first_of[seen] = ids[hits[earliest]]
            slot = np.minimum(np.searchsorted(uniq, targets), len(uniq) - 1)
            counts = np.where(wanted_ok, per[slot], 0)
            first = np.where(wanted_ok, first_of[slot], -1)
    else:  # keys would overflow: one binary search per annotation
        order = np.lexsort((enc.seq, enc.session))
        by_session, by_seq = enc.session[order], enc.seq[order]
        counts, first = np.zeros(len(rows), dtype=np.int64), np.zeros(len(rows), dtype=np.int64)
        for k, (code, seq) in enumerate(zip(codes.tolist(), wanted.tolist(), strict=True)):
            lo, hi = np.searchsorted(by_session, [code, code + 1])
            lft = lo + np.searchsorted(by_seq[lo:hi], seq, side="left")
            rgt = lo + np.searchsorted(by_seq[lo:hi], seq, side="right")
            counts[k] = int(rgt - lft) if code and seq >= 0 else 0
            first[k] = ids[order[lft]] if counts[k] == 1 else -1
    matches[rows] = counts
    call_id[rows] = np.where(counts == 1, first, -1)
    return notes.append_column("call_id", pa.array(call_id, mask=call_id < 0)).append_column(
        "matches", pa.array(matches, mask=matches < 0))


def link_refresh(db: sqlite3.Connection, enc: Encoded, ids: np.ndarray, encoder: Encoder,
                 last_note: int) -> None:
    """A refresh's links: new calls add to old annotations' matches; new annotations are counted."""
    link_events(db)
    fresh: dict[tuple[int, int], list[int]] = defaultdict(list)
    for session, seq, call in zip(enc.session.tolist(), enc.seq.tolist(), ids.tolist(), strict=True):
        fresh[(session, seq)].append(call)
    updates: list[tuple[int, int | None, int]] = []
    if fresh:  # only the old annotations at a new call's (session, seq): SQLite picks them out
        texts = {code: text for text, code in encoder.strings.items()}
        keys = json_list([[texts[session], seq] for session, seq in fresh if session in texts])
        for rowid, session, seq, matches in db.execute(
                "SELECT a.rowid, a.session, a.seq, a.matches FROM json_each(?) k JOIN annotations a "
                "ON a.session = k.value ->> 0 AND a.seq = k.value ->> 1 "
                "WHERE a.event_id IS NULL AND a.rowid <= ?", (keys, last_note)).fetchall():
            hits = fresh.get((encoder.strings.get(session, 0), seq))
            if hits:
                total = matches + len(hits)
                updates.append((total, hits[0] if total == 1 else None, rowid))
    new = db.execute("SELECT rowid, session, seq FROM annotations WHERE event_id IS NULL AND rowid > ?",
                     (last_note,)).fetchall()
    if new:
        codes = {s: c for s, c in db.execute(
            "SELECT value, id FROM strings WHERE value IN (SELECT value FROM json_each(?))",
            (json_list([s for _, s, _ in new]),))}
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
