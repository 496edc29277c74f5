"""The incremental refresh of an existing ``index.db``: only the appended bytes, in one transaction.

Preconditions (else the caller makes a full build, and says why): every journal indexed before is still
there and proven, on the descriptor then read, to have only grown since (``journal.proof``), and every
new call sorts after its group's indexed calls.  New windows are computed over each touched group's last five
indexed calls plus its new calls (the only calls a new window can reach), and inserted beside the
existing ones; annotations whose target may have changed are linked again.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from ...errors import FindingsError
from ...journal.proof import Prefix
from ...journal.snapshot import Cursor
from .database import COUNT_LABELS, REFILL_CAPTURES, connect, json_list, transaction
from .encode import Encoded, Encoder, check_captures, label_counts
from .ingest import Ingest, ReadOptions, rows_of, write_sources
from .links import link_refresh, parse_tail
from .result import IndexResult, Rebuild
from .sources import Source
from .windows import compute_windows, group_keys, rank_order

__all__ = ["refresh_index"]


def refresh_index(path: Path, sources: list[Source], options: ReadOptions) -> IndexResult | Rebuild:
    """Refresh ``path`` in place.

    Returns:
        The ``IndexResult`` of the refresh (committed), or a ``Rebuild`` naming why only a full build
        can tell (rolled back: nothing changed).

    Raises:
        FindingsError, InvalidRecord, RecordTooLarge, Cancelled: as ``build_index`` (nothing changed).
    """
    db = connect(path, read_only=False)
    try:
        with transaction(db) as txn:
            try:
                outcome = _refresh(db, path, sources, options)
            except sqlite3.IntegrityError:
                outcome = Rebuild("conflicting records")
            txn.discard = isinstance(outcome, Rebuild)
        return outcome
    finally:
        db.close()


def _refresh(db: sqlite3.Connection, path: Path, sources: list[Source],
             options: ReadOptions) -> IndexResult | Rebuild:
    seen = {
        p: (offset, digest, line)
        for p, offset, digest, line in db.execute("SELECT path, offset, digest, next_line FROM index_sources")
    }
    if set(seen) - {str(s.path) for s in sources}:
        return Rebuild("a journal was removed")
    work: list[tuple[Source, Cursor, Prefix | None]] = []
    for source in sources:
        old = seen.get(str(source.path))
        proof = None if old is None else Prefix.from_text(old[1])
        if old is not None and (proof is None or proof.offset != old[0]):
            return Rebuild("a journal was rewritten")
        work.append((source, Cursor() if old is None else Cursor(offset=old[0], next_line=old[2]), proof))
    replayed, calls, failures, annotations = db.execute(
        "SELECT replayed_events, calls, failures, annotations FROM index_checkpoint"
    ).fetchone()
    first_id = (db.execute("SELECT MAX(id) FROM calls").fetchone()[0] or 0) + 1
    last_note = db.execute("SELECT COALESCE(MAX(rowid), 0) FROM annotations").fetchone()[0]
    ingest = Ingest(db, Encoder(db, fresh=False), next_id=first_id, options=options)
    ingest.total = sum(max(0, s.end - c.offset) for s, c, _ in work)
    done: list[tuple[Source, Cursor, Prefix]] = []
    for source, cursor, proof in work:
        taken = ingest.read(source, cursor, proof)
        if taken is None:
            return Rebuild("a journal was rewritten")
        if taken is not proof:  # read further: its row moves on
            done.append((source, cursor, taken))
    enc, ids = ingest.calls()
    ingest.encoder.flush()
    db.executemany(COUNT_LABELS, rows_of(label_counts(enc.labels)))
    if len(ids):
        reason = _append_windows(db, enc, ids, ingest.encoder)
        if reason is not None:
            return Rebuild(reason)
        if ingest.encoder.capture_ids:
            db.execute(REFILL_CAPTURES, (json_list(ingest.encoder.capture_ids),))
    link_refresh(db, enc, ids, ingest.encoder, last_note)
    write_sources(db, done)
    added_failures = int(enc.failed.sum())
    db.execute(
        "UPDATE index_checkpoint SET replayed_events = ?, calls = ?, failures = ?, annotations = ?",
        (
            replayed + ingest.replayed,
            calls + len(ids),
            failures + added_failures,
            annotations + ingest.annotations,
        ),
    )
    return IndexResult(
        path=path,
        calls=calls + len(ids),
        failures=failures + added_failures,
        annotations=annotations + ingest.annotations,
        replayed_events=replayed + ingest.replayed,
        full=False,
        reason="",
        added=len(ids),
        skipped=len(ingest.report.rows),
        skipped_lines=ingest.report.lines(),
    )


def _append_windows(
    db: sqlite3.Connection, enc: Encoded, ids: np.ndarray, encoder: Encoder
) -> str | None:
    """Insert the windows the new calls create; a reason string when only a full build can tell."""
    key = group_keys(enc.capture, enc.session, enc.server)
    order = rank_order(key, enc.seq, ids)
    starts = np.flatnonzero(np.r_[True, key[order][1:] != key[order][:-1]])
    names = {v: k for k, v in encoder.servers.items()}
    touched = sorted({int(s) for s in enc.session.tolist()} & encoder.known)
    codes = json_list(touched)
    skipped = set(db.execute("SELECT session, server FROM index_skipped WHERE session IN "
                             "(SELECT value FROM json_each(?))", (codes,)).fetchall())
    stored = {(s, v): t for s, v, t in db.execute("SELECT session, server, tail FROM index_groups WHERE "
                                                  "session IN (SELECT value FROM json_each(?))", (codes,))}
    held = {c: (s, v, t) for c, s, v, t in db.execute(
        "SELECT capture, session, server, tail FROM index_capture_groups WHERE capture IN "
        "(SELECT value FROM json_each(?))", (json_list(encoder.capture_ids),))}
    groups: dict[int, tuple[int, str]] = {}
    captured: dict[int, tuple[str, int, str]] = {}
    tail_key: list[int] = []
    tail_rows: list[tuple[int, int, int]] = []
    keep = np.ones(len(ids), dtype=bool)
    for start in starts.tolist():
        i = int(order[start])
        k, session = int(key[i]), int(enc.session[i])
        server, lowest = names[int(enc.server[i])], int(enc.seq[i])
        if k > 0:
            captured[k] = (encoder.capture_ids[k - 1], session, server)
            old_group = held.get(captured[k][0])
            if old_group is not None and old_group[:2] != (session, server):
                raise FindingsError("one capture id spans two sessions or servers (conflicting records)")
            found = None if old_group is None else old_group[2]
        else:
            groups[k] = (session, server)
            if session not in encoder.known:
                continue
            if (session, server) in skipped:
                keep &= key != k
                del groups[k]
                continue
            found = stored.get((session, server))
        rows = [] if found is None else parse_tail(found)[::-1]  # newest first
        if rows and lowest <= rows[0][1]:
            return "an appended call goes back in sequence"
        tail_key += [k] * len(rows)
        tail_rows += rows[::-1]
    check_captures(enc)
    old = np.array(tail_rows, dtype=np.int64).reshape(-1, 3)
    win = compute_windows(
        np.concatenate([np.array(tail_key, dtype=np.int64), key[keep]]),
        np.concatenate([old[:, 1], enc.seq[keep]]),
        np.concatenate([old[:, 0], ids[keep]]),
        np.concatenate([old[:, 2].astype(bool), enc.failed[keep]]),
    )
    if len(win.skipped) or len(win.conflicts):
        return "a group repeats a sequence number"
    db.executemany(
        "INSERT OR IGNORE INTO windows (failure_id, neighbour_id, offset) VALUES (?, ?, ?)", win.rows()
    )
    all_key = np.concatenate([np.array(tail_key, dtype=np.int64), key[keep]])
    keys, texts = win.tail_texts(all_key, np.concatenate([old[:, 1], enc.seq[keep]]),
                                 np.concatenate([old[:, 0], ids[keep]]),
                                 np.concatenate([old[:, 2], enc.failed[keep]]))
    tails = dict(zip(keys.tolist(), texts.to_pylist(), strict=True))
    db.executemany("INSERT OR REPLACE INTO index_groups (session, server, tail) VALUES (?, ?, ?)",
                   [(*groups[k], tail) for k, tail in tails.items() if k in groups])
    db.executemany("INSERT OR REPLACE INTO index_capture_groups (capture, session, server, tail) "
                   "VALUES (?, ?, ?, ?)",
                   [(*captured[k], tail) for k, tail in tails.items() if k in captured])
    return None
