"""A capture root whose promotion answers are known by hand (tests/test_triage_promote.py).

Sessions (server ``ka``; ``E(code, T, retryable)`` is a failed ``tools/call``):

- A (legacy): read ok, boom E(-32000,T1,F), read ok, list ok, boom E(-32000,T1,F), read ok
- B (capture C1): boom E(-32000,T1,F), read ok, a notification, boom ok
- C (legacy): flaky E(-32001,T2,T), flaky ok, boom E(-32002,T3,-)
- E (legacy): flaky E(-32001,T2,T), read ok, boom E("broken",T3,-)
- F (legacy): note E(-32000,T4,-), note ok;  G (legacy): note E(-32000,T4,-)
- H (legacy): lonely E(-32000,T5,-)
- I (legacy, seq 1 twice: its windows are skipped): read ok, boom E(-32000,T1,F)
- D (synthetic): boom E(-32000,T1,F) (never counted)

Annotations: blocked-optimal-path on B's first call (by event id), false-success on F1 (by session,
seq), workaround on A2, false-success on (I, 1) (ambiguous: stays unlinked).

Expected groups (failures, calls, sessions, cost, blast, class):

- T1 boom: 4, 7, 3, median(5, 6, 4, 1) = 4.5, {boom, read, list} = 3, blocked-optimal-path
- T2 flaky: 2, 3, 2, 3, {flaky, boom, read} = 3, recovers-on-retry
- T3 boom: 2, 7, 2, 3, {boom, flaky, read} = 3, unstable-error-code (codes "broken", -32002)
- T4 note: 2, 3, 2, 1.5, 1, false-success
- T5 lonely: 1, 1, 1, 1, 1, recurring-error (one session only)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcpeval_nb as me
from mcpeval_nb.privacy.records import Identity

SERVER = "ka"
C1 = "6f1f0c4e-2b9a-4d8e-9a51-3c2d1e0f4a5b"
EVENTS = [f"7a2b3c4d-0000-4000-8000-00000000000{i}" for i in range(4)]
MESSAGES = {
    "T1": "session gone",
    "T2": "busy, retry",
    "T3": "broken state",
    "T4": "note failed",
    "T5": "lonely failure",
}


@dataclass(frozen=True)
class Expected:
    """One group's hand-computed promotion fields."""

    tool: str
    template: str
    failures: int
    calls: int
    sessions: int
    cost: float
    blast: int
    klass: str
    err_code: str
    err_codes: str
    retryable: int | None
    last_seen: str


def _ts(minute: int, second: int) -> str:
    return f"2026-08-04T12:{minute:02d}:{second:02d}.{second * 7 % 1000:03d}Z"


def _err(code: Any, template: str, retryable: bool | None, salt: bytes) -> dict[str, Any]:
    payload: dict[str, Any] = {"code": code, "message": MESSAGES[template]}
    if retryable is not None:
        payload["retryable"] = retryable
    return me.error_info(payload, salt)


def build(root: Path) -> dict[str, Expected]:
    """Write the store (through the real writer) and return the expected groups by template name."""
    salt = me.load_salt(root)
    calls: list[me.CallRecord] = []

    def call(
        session: str,
        seq: int,
        tool: str | None,
        minute: int,
        second: int,
        *,
        error: tuple[Any, str, bool | None] | None = None,
        kind: str = "real",
        method: str = "tools/call",
        identity: Identity | None = None,
    ) -> None:
        info = None if error is None else _err(*error, salt)
        outcome = "error" if error else ("ok" if method == "tools/call" else "notification")
        calls.append(
            me.CallRecord(
                ts=_ts(minute, second),
                session=session,
                seq=seq,
                server=SERVER,
                method=method,
                tool=tool,
                args={"q": "str<8"} if tool else None,
                latency_ms=5 if method == "tools/call" else None,
                outcome=outcome,
                error=info,
                kind=kind,
                identity=identity,
            )
        )

    t1 = (-32000, "T1", False)
    for seq, tool, err in (
        (1, "read", None),
        (2, "boom", t1),
        (3, "read", None),
        (4, "list", None),
        (5, "boom", t1),
        (6, "read", None),
    ):
        call("sA", seq, tool, 1, seq, error=err)
    b = [
        (1, "boom", t1, "tools/call"),
        (2, "read", None, "tools/call"),
        (3, None, None, "notifications/message"),
        (4, "boom", None, "tools/call"),
    ]
    for (seq, tool, err, method), event in zip(b, EVENTS, strict=True):
        call("sB", seq, tool, 2, seq, error=err, method=method, identity=Identity(C1, event))
    call("sC", 1, "flaky", 3, 1, error=(-32001, "T2", True))
    call("sC", 2, "flaky", 3, 2)
    call("sC", 3, "boom", 3, 3, error=(-32002, "T3", None))
    call("sE", 1, "flaky", 4, 1, error=(-32001, "T2", True))
    call("sE", 2, "read", 4, 2)
    call("sE", 3, "boom", 4, 3, error=("broken", "T3", None))
    call("sF", 1, "note", 5, 1, error=(-32000, "T4", None))
    call("sF", 2, "note", 5, 2)
    call("sG", 1, "note", 6, 1, error=(-32000, "T4", None))
    call("sH", 1, "lonely", 7, 1, error=(-32000, "T5", None))
    call("sI", 1, "read", 8, 1)
    call("sI", 1, "boom", 8, 2, error=t1)
    call("sD", 1, "boom", 9, 1, error=t1, kind="synthetic")
    me.append_records(root, calls)
    notes = [
        me.AnnotationRecord(
            ts=_ts(10, 1), session="ignored", kind="blocked-optimal-path", note="n", event_id=EVENTS[0]
        ),
        me.AnnotationRecord(ts=_ts(10, 2), session="sF", seq=1, kind="false-success", note="n"),
        me.AnnotationRecord(ts=_ts(10, 3), session="sA", seq=2, kind="workaround", note="n"),
        me.AnnotationRecord(ts=_ts(10, 4), session="sI", seq=1, kind="false-success", note="n"),
    ]
    me.append_records(root, notes)
    tid = {name: me.template_id(salt, message) for name, message in MESSAGES.items()}
    return {
        "T1": Expected(
            "boom",
            tid["T1"],
            4,
            7,
            3,
            4.5,
            3,
            "blocked-optimal-path",
            "-32000",
            "[-32000]",
            0,
            "2026-08-04T12:08:02.014Z",
        ),
        "T2": Expected(
            "flaky",
            tid["T2"],
            2,
            3,
            2,
            3.0,
            3,
            "recovers-on-retry",
            "-32001",
            "[-32001]",
            1,
            "2026-08-04T12:04:01.007Z",
        ),
        "T3": Expected(
            "boom",
            tid["T3"],
            2,
            7,
            2,
            3.0,
            3,
            "unstable-error-code",
            '"broken"',
            '["broken",-32002]',
            None,
            "2026-08-04T12:04:03.021Z",
        ),
        "T4": Expected(
            "note",
            tid["T4"],
            2,
            3,
            2,
            1.5,
            1,
            "false-success",
            "-32000",
            "[-32000]",
            None,
            "2026-08-04T12:06:01.007Z",
        ),
        "T5": Expected(
            "lonely",
            tid["T5"],
            1,
            1,
            1,
            1.0,
            1,
            "recurring-error",
            "-32000",
            "[-32000]",
            None,
            "2026-08-04T12:07:01.007Z",
        ),
    }


def canonical(path: Path) -> dict[str, Any]:
    """An index's content with call ids replaced by the call's values (ids depend on load order)."""
    import sqlite3
    from collections import Counter

    db = sqlite3.connect(path)
    try:
        from mcpeval_nb.triage.index.spec_rows import SPEC_CALLS_COLUMNS

        spec = ", ".join(f"c.{name}" for name in SPEC_CALLS_COLUMNS)
        calls = {row[0]: row[1:] for row in db.execute(  # the compact columns as the values they code
            f"SELECT {spec}, c.ts_ms, ses.value, shape.value, l.server, l.method, l.tool, l.outcome, l.kind "
            "FROM calls c LEFT JOIN strings ses ON ses.id = c.session_code "
            "LEFT JOIN strings shape ON shape.id = c.args_code "
            "LEFT JOIN call_labels l ON l.id = c.labels_code")}
        windows = Counter((calls[f], calls[n], o) for f, n, o in db.execute("SELECT * FROM windows"))
        notes = Counter(
            (calls.get(c), *rest)
            for c, *rest in db.execute(
                "SELECT call_id, event_id, session, seq, ts, kind, note, matches FROM annotations"
            )
        )
        check = db.execute(
            "SELECT replayed_events, calls, failures, annotations FROM index_checkpoint"
        ).fetchone()
        sources = sorted(db.execute("SELECT path, offset, next_line FROM index_sources"))
        skipped = db.execute("SELECT COUNT(*) FROM index_skipped").fetchone()
        from mcpeval_nb.triage.index.links import parse_tail

        groups = {
            (session, server): [(calls[i], s, f) for i, s, f in parse_tail(tail)]
            for session, server, tail in db.execute(
                "SELECT s.value, g.server, g.tail FROM index_groups g JOIN strings s ON s.id = g.session"
            )
        }
        captures = {
            capture: (session, server, [(calls[i], s, f) for i, s, f in parse_tail(tail)])
            for capture, session, server, tail in db.execute(
                "SELECT g.capture, s.value, g.server, g.tail FROM index_capture_groups g "
                "JOIN strings s ON s.id = g.session"
            )
        }
        events = Counter((key, calls[call_id]) for key, call_id in db.execute("SELECT * FROM call_events"))
        labels = {tuple(row): n for *row, n in db.execute(  # counted by the index, and as its calls count
            "SELECT server, method, tool, outcome, kind, calls FROM call_labels WHERE calls > 0")}
        assert labels == Counter(values[-5:] for values in calls.values())
        return {
            "groups": groups,
            "captures": captures,
            "events": events,
            "calls": Counter(calls.values()),
            "labels": labels,
            "windows": windows,
            "annotations": notes,
            "checkpoint": check,
            "sources": sources,
            "skipped": skipped,
        }
    finally:
        db.close()


def append_more(root: Path, *, per_session: int, seed: int = 7) -> int:
    """Append calls that continue every legacy session of a synthetic store (seq after its last) and new
    captured calls, some failing, through the real writer; returns how many."""
    import random

    from mcpeval_nb.tables import open_store

    rng = random.Random(seed)
    salt = me.load_salt(root)
    calls = open_store(root).calls.to_pylist()
    last: dict[tuple[str, str], int] = {}
    for c in calls:
        if c["capture_id"] is None:
            key = (c["session"], c["server"])
            last[key] = max(last.get(key, 0), c["seq"])
    out = []
    for (session, server), seq in sorted(last.items()):
        for i in range(1, per_session + 1):
            failed = rng.random() < 0.3
            out.append(
                me.CallRecord(
                    ts="2026-08-30T10:00:00.000Z",
                    session=session,
                    seq=seq + i,
                    server=server,
                    method="tools/call",
                    tool=f"tool_{rng.randrange(3)}",
                    args={},
                    latency_ms=3,
                    outcome="error" if failed else "ok",
                    error=_err(-32000, "T1", None, salt) if failed else None,
                )
            )
    capture = "0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b"
    for i in range(1, 6):
        out.append(
            me.CallRecord(
                ts="2026-08-30T11:00:00.000Z",
                session="appended",
                seq=i,
                server="server-0",
                method="tools/call",
                tool="tool_0",
                outcome="error" if i == 3 else "ok",
                error=_err(-32001, "T2", True, salt) if i == 3 else None,
                identity=Identity(capture, f"1e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5{i}"),
            )
        )
    me.append_records(root, out)
    return len(out)
