"""One store, two tools: ``index.db`` holds what SPEC 12.1/12.4 say the reference tool (the Rust
``mcpeval``) reads and writes, and the lifecycle rows the reference writes there are taken in.

Every check opens ``index.db`` with plain sqlite3, as another program would; the reference's own files
are written here from SPEC's text (its source is not read, and it is not run).
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest

import mcpeval_nb as me
from mcpeval_nb.privacy import code_value
from mcpeval_nb.testing import synthetic_store
from mcpeval_nb.triage.findings import list_findings
from mcpeval_nb.triage.index.database import NULL_TS, SPEC_TS, VERSION
from mcpeval_nb.triage.index.spec_rows import spec_ts
from mcpeval_nb.triage.lifecycle import lifecycle

from .triage_support import build

#: SPEC 12.1's tables and SPEC 12.4's, with their declared types (an untyped column declares "").
SPEC_CALLS = [("id", "INTEGER"), ("capture_id", "TEXT"), ("event_id", "TEXT"), ("ts", ""), ("session", ""),
              ("seq", ""), ("server", ""), ("method", ""), ("tool", ""), ("latency_ms", ""), ("outcome", ""),
              ("err_code", "TEXT"), ("err_template", "TEXT"), ("err_template_id", "TEXT"),
              ("err_retryable", "INTEGER"), ("args", "TEXT"), ("kind", "")]
SPEC_COLUMNS = {
    "windows": ["failure_id", "neighbour_id", "offset"],
    "annotations": ["call_id", "event_id", "session", "seq", "ts", "kind", "note"],
    "index_sources": ["path", "offset", "digest"],
    "index_events": ["event", "digest"],
    "index_captures": ["capture", "session", "server"],
    "index_checkpoint": ["singleton", "version", "schema_digest", "replayed_events"],
    "findings": ["issue_id", "finding_id"],
    "finding_lifecycle": ["finding_id", "server", "tool", "err_code", "err_template_id", "probe_id", "state",
                          "consecutive_passes", "updated_at"],
    "probe_history": ["id", "finding_id", "probe_id", "passed", "ts"],
}
#: SPEC 12.5's fields a finding is rendered from (``repro`` is the issue's ``args``, SPEC 8.5).
ISSUE_FIELDS = ["finding_id", "server", "tool", "err_code", "err_template_id", "failures", "calls",
                "sessions", "last_seen", "cost", "blast", "rate", "confidence", "recency", "score",
                "threshold", "severity", "args", "class", "err_codes", "retryable"]

#: What the reference's full rebuild writes, from SPEC 12.1 and 12.4 (checkpoint version 1, its digest).
REFERENCE_LAYOUT = """
CREATE TABLE calls(id INTEGER PRIMARY KEY, capture_id TEXT, event_id TEXT UNIQUE, ts, session, seq, server,
  method, tool, latency_ms, outcome, err_code TEXT, err_template TEXT, err_template_id TEXT,
  err_retryable INTEGER, args TEXT, kind);
CREATE INDEX calls_issue ON calls(server, tool, err_code, err_template_id);
CREATE INDEX calls_coordinates ON calls(session, seq);
CREATE UNIQUE INDEX calls_capture_sequence ON calls(capture_id, seq) WHERE capture_id IS NOT NULL;
CREATE TABLE windows(failure_id, neighbour_id, offset, PRIMARY KEY(failure_id, neighbour_id));
CREATE TABLE annotations(call_id, event_id, session, seq, ts, kind, note);
CREATE INDEX annotations_call ON annotations(call_id);
CREATE TABLE index_sources(path PRIMARY KEY, offset, digest);
CREATE TABLE index_events(event PRIMARY KEY, digest);
CREATE TABLE index_captures(capture PRIMARY KEY, session, server);
CREATE TABLE index_checkpoint(singleton PRIMARY KEY CHECK (singleton = 1), version, schema_digest,
  replayed_events);
INSERT INTO index_checkpoint VALUES (1, 1, 'reference-digest', 0);
CREATE TABLE finding_lifecycle(finding_id PRIMARY KEY, server, tool, err_code, err_template_id, probe_id,
  state CHECK (state IN ('open','fix-claimed','verifying','closed')), consecutive_passes DEFAULT 0,
  updated_at);
CREATE TABLE probe_history(id INTEGER PRIMARY KEY, finding_id, probe_id, passed, ts);
CREATE INDEX probe_history_finding ON probe_history(finding_id);
"""
SPEC_TABLES = ["calls", *SPEC_COLUMNS, "issues"]


def _db(root: Path) -> sqlite3.Connection:
    db = sqlite3.connect(root / "index.db", isolation_level=None)
    db.execute("PRAGMA foreign_keys=ON")  # SPEC 12.1
    return db


def _promoted(root: Path) -> list[dict[str, object]]:
    build(root)
    me.promote(root, threshold=0)
    return me.findings(root).to_pylist()


def test_index_db_holds_spec_12s_tables_with_their_names_and_types(root: Path) -> None:
    _promoted(root)
    db = _db(root)
    kinds = dict(db.execute("SELECT name, type FROM sqlite_master"))
    assert {name: kinds.get(name) for name in SPEC_TABLES} == dict.fromkeys(SPEC_TABLES, "table")
    columns = [(r[1], r[2]) for r in db.execute("PRAGMA table_info(calls)")]  # SPEC's, then the compact
    compact = [("ts_ms", "INTEGER"), ("session_code", "INTEGER"), ("labels_code", "INTEGER"),  # ones (ours,
               ("args_code", "INTEGER")]  # after SPEC's, as elsewhere)
    assert columns == [*SPEC_CALLS, *compact]
    db.execute("BEGIN")  # a row naming SPEC's columns only is taken
    names = ", ".join(n for n, _ in SPEC_CALLS)
    db.execute(f"INSERT INTO calls ({names}) VALUES ({', '.join('?' * len(SPEC_CALLS))})",
               (10**9, None, None, "unknown", "s", 1, "srv", "tools/call", "t", 5, "ok", None, None, None,
                None, "{}", "real"))
    db.execute("ROLLBACK")
    for table, columns in SPEC_COLUMNS.items():
        found = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
        assert found[: len(columns)] == columns, table
    issue_columns = {r[1] for r in db.execute("PRAGMA table_info(issues)")}
    assert set(ISSUE_FIELDS) <= issue_columns
    assert db.execute("SELECT version FROM index_checkpoint").fetchone() == (VERSION,)
    with pytest.raises(sqlite3.IntegrityError):  # SPEC 12.4's state check
        db.execute("INSERT INTO finding_lifecycle (finding_id, state, updated_at) VALUES ('x', 'fixed', 1)")


def test_calls_holds_every_stored_call_as_spec_12_1_spells_it(root: Path) -> None:
    _promoted(root)
    stored = me.open_store(root).calls.to_pylist()
    db = _db(root)
    rows = db.execute("SELECT session, seq, server, method, tool, outcome, kind, err_code, args, ts, "
                      "capture_id, event_id FROM calls").fetchall()
    assert len(rows) == len(stored)

    def spelled(c: dict[str, object]) -> tuple[object, ...]:
        # the table shows a string code as itself; index.db keeps the journal's JSON text of the code
        code = None if c["error_code"] is None else json.dumps(code_value(str(c["error_code"])),
                                                              separators=(",", ":"))
        return (c["session"], c["seq"], c["server"], c["method"], c["tool"], c["outcome"], c["kind"], code)

    assert sorted(map(repr, (r[:8] for r in rows))) == sorted(repr(spelled(c)) for c in stored)
    for args, ts in ((r[8], r[9]) for r in rows):
        assert args is None or isinstance(json.loads(args), dict)  # compact JSON text of the shape
        assert ts.endswith("Z") and ts[10] == "T"
    captured = {r[10] for r in rows if r[10] is not None}
    assert captured == {c for (c,) in db.execute("SELECT capture FROM index_captures")}
    coded = db.execute(  # each row's compact columns code its own texts (this package's readers use them)
        "SELECT c.session IS ses.value, c.args IS shape.value, c.server IS l.server, c.method IS l.method, "
        "c.tool IS l.tool, c.outcome IS l.outcome, c.kind IS l.kind, c.ts IS " + SPEC_TS.format("c.ts_ms")
        + " FROM calls c LEFT JOIN strings ses ON ses.id = c.session_code LEFT JOIN strings shape "
        "ON shape.id = c.args_code LEFT JOIN call_labels l ON l.id = c.labels_code").fetchall()
    assert len(coded) == len(stored) and set(coded) == {(1,) * 8}


def test_the_reference_promotion_and_findings_queries_run_on_the_file(root: Path) -> None:
    shown = {f["finding_id"]: f for f in _promoted(root)}
    db = _db(root)
    groups = {(s, t, tid): n for s, t, tid, n in db.execute(  # SPEC 12.2's grouping, on plain SQL
        "SELECT server, tool, err_template_id, COUNT(*) FROM calls WHERE outcome = 'error' "
        "AND method = 'tools/call' AND kind = 'real' GROUP BY server, tool, err_template_id")}
    issues = {(s, t, tid): n for s, t, tid, n in db.execute(
        "SELECT server, tool, err_template_id, failures FROM issues")}
    assert groups == issues
    for server, tool, calls in db.execute("SELECT server, tool, calls FROM issues"):
        assert db.execute("SELECT COUNT(*) FROM calls WHERE method = 'tools/call' AND kind = 'real' "
                          "AND server = ? AND tool IS ?", (server, tool)).fetchone() == (calls,)
    neighbours = db.execute("SELECT COUNT(*) FROM windows w JOIN calls f ON f.id = w.failure_id "
                            "JOIN calls n ON n.id = w.neighbour_id WHERE f.outcome = 'error'").fetchone()[0]
    assert neighbours == db.execute("SELECT COUNT(*) FROM windows").fetchone()[0] > 0
    linked = db.execute("SELECT COUNT(*) FROM annotations WHERE call_id IS NOT NULL").fetchone()[0]
    assert db.execute("SELECT COUNT(*) FROM annotations a JOIN calls c ON c.id = a.call_id").fetchone() == (
        linked,) and linked == 3
    rendered = db.execute(  # what the reference's findings reads: issue, promotion and lifecycle rows
        f"SELECT {', '.join('i.' + f for f in ISSUE_FIELDS)}, l.state, l.probe_id, l.consecutive_passes "
        "FROM findings f JOIN issues i ON i.id = f.issue_id JOIN finding_lifecycle l "
        "ON l.finding_id = f.finding_id").fetchall()
    assert {r[0]: (r[16], r[-3]) for r in rendered} == {
        fid: (f["severity"], f["state"]) for fid, f in shown.items()}
    # The reference's promotion writes (SPEC 12.2) succeed with the file's constraints
    db.execute("BEGIN")
    db.execute("DELETE FROM findings")
    db.execute("DELETE FROM issues")
    db.execute("INSERT INTO finding_lifecycle (finding_id, server, tool, err_code, err_template_id, state, "
               "consecutive_passes, updated_at) VALUES ('finding-0000000000000001', 'ka', 'boom', NULL, 't', "
               "'open', 0, 1) ON CONFLICT DO NOTHING")
    db.execute("ROLLBACK")


def test_the_reference_rebuild_can_drop_every_table_it_owns(root: Path) -> None:
    _promoted(root)
    db = _db(root)
    for table in SPEC_TABLES:  # a view here was "use DROP VIEW to delete view calls"
        db.execute(f"DROP TABLE IF EXISTS {table}")
    db.executescript(REFERENCE_LAYOUT)
    db.close()
    result = me.build_index(root)  # the reference's checkpoint: rebuilt here, and said why
    assert result.full and "another layout" in result.reason
    assert [r[0] for r in _db(root).execute("SELECT version FROM index_checkpoint")] == [VERSION]


def test_a_lifecycle_the_reference_moved_is_kept_after_the_next_promote(root: Path) -> None:
    """The reference rebuilt index.db (its layout), promoted and verified: its fix-claimed row and its
    verify are read here before and after the next promote, and land in lifecycle.db."""
    first = _promoted(root)
    target = first[0]["finding_id"]
    later = max(f.promoted_at for f in list_findings(root)) + 60_000
    db = _db(root)
    for table in SPEC_TABLES:
        db.execute(f"DROP TABLE IF EXISTS {table}")
    db.executescript(REFERENCE_LAYOUT)
    db.executemany("INSERT INTO finding_lifecycle VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?)", [
        (f["finding_id"], f["server"], f["tool"], f["err_template_id"],
         "case-1" if f["finding_id"] == target else None,
         "fix-claimed" if f["finding_id"] == target else "open", 0, later if f["finding_id"] == target else 1)
        for f in first])
    db.execute("INSERT INTO probe_history (finding_id, probe_id, passed, ts) VALUES (?, 'case-1', 0, ?)",
               (target, later))
    db.close()

    assert me.promote(root, threshold=0).promoted == len(first)
    after = {f["finding_id"]: f for f in me.findings(root).to_pylist()}
    assert (after[target]["state"], after[target]["probe_id"]) == ("fix-claimed", "case-1")
    assert [f["state"] for f in after.values() if f["finding_id"] != target] == ["open"] * (len(first) - 1)
    assert [(h["probe_id"], h["passed"]) for h in me.finding_history(root, target).to_pylist()] == [
        ("case-1", False)]
    with lifecycle(root) as life:  # taken into the authoritative record, not only shown
        row = life.get(target)
        assert row is not None
        assert (row.state, row.probe_id, row.updated_at) == ("fix-claimed", "case-1", later)
    mirror = _db(root).execute("SELECT state, probe_id FROM finding_lifecycle WHERE finding_id = ?",
                               (target,)).fetchone()
    assert mirror == ("fix-claimed", "case-1")
    me.promote(root, threshold=0)  # adopted once: the verify is not repeated
    assert len(me.finding_history(root, target).to_pylist()) == 1


def test_a_reference_verify_written_into_this_index_is_read_and_adopted(root: Path) -> None:
    first = _promoted(root)
    target = first[-1]["finding_id"]
    db = _db(root)
    db.execute("UPDATE finding_lifecycle SET state = 'verifying', probe_id = 'case-2', "
               "consecutive_passes = 1, updated_at = updated_at + 1000 WHERE finding_id = ?", (target,))
    db.execute("INSERT INTO probe_history (finding_id, probe_id, passed, ts) VALUES (?, 'case-2', 1, 5)",
               (target,))
    stale = first[0]["finding_id"]  # an older row there never overrides lifecycle.db's
    db.execute("UPDATE finding_lifecycle SET state = 'closed', updated_at = 0 WHERE finding_id = ?", (stale,))
    db.close()

    def states() -> dict[object, tuple[object, ...]]:
        return {f["finding_id"]: (f["state"], f["probe_id"], f["consecutive_passes"])
                for f in me.findings(root).to_pylist()}

    assert states()[target] == ("verifying", "case-2", 1) and states()[stale][0] == "open"  # before promote
    me.promote(root, threshold=0)
    assert states()[target] == ("verifying", "case-2", 1) and states()[stale][0] == "open"
    assert _db(root).execute("SELECT state FROM finding_lifecycle WHERE finding_id = ?",
                             (stale,)).fetchone() == ("open",)


def test_an_older_index_is_rebuilt_and_a_newer_one_refused(root: Path) -> None:
    _promoted(root)
    db = _db(root)  # this package's version-2 layout: calls was a view
    db.execute("DROP TABLE calls")
    db.execute("CREATE VIEW calls AS SELECT id FROM call_rows")
    db.execute("UPDATE index_checkpoint SET version = 2, schema_digest = 'mcpeval-nb:older'")
    db.close()
    with pytest.raises(me.FindingsError, match="run `mcpeval-nb index` to rebuild it"):
        me.findings(root)
    result = me.build_index(root)
    assert result.full and "another layout" in result.reason
    assert _db(root).execute("SELECT type FROM sqlite_master WHERE name = 'calls'").fetchone() == ("table",)
    _db(root).execute("UPDATE index_checkpoint SET version = ?", (VERSION + 1,))
    with pytest.raises(me.FindingsError, match=f"checkpoint version {VERSION + 1}"):
        me.findings(root)


def test_an_incremental_refresh_appends_to_calls(root: Path) -> None:
    _promoted(root)
    before = _db(root).execute("SELECT COUNT(*) FROM calls").fetchone()[0]
    me.append_record(root, me.CallRecord(ts="2026-08-04T12:00:00.000Z", session="later-session", seq=1,
                                         server="ka", method="tools/call", tool="boom", latency_ms=3,
                                         outcome="ok"))
    result = me.build_index(root)
    assert not result.full and result.added == 1
    assert _db(root).execute("SELECT COUNT(*), MAX(tool) FROM calls WHERE seq = 1 AND server = 'ka' "
                             "AND id > ?", (before,)).fetchone() == (1, "boom")
    assert _db(root).execute("SELECT COUNT(*) FROM calls").fetchone()[0] == before + 1


# -- calls as SPEC 12.1 spells it, whichever path wrote it ---------------------------------------------

#: Times at the edges of what ``calls.ts`` spells (milliseconds since the epoch): before 1970, leap days,
#: the first and last millisecond of years 0001 and 9999, and times SQLite spells otherwise or not at all.
EDGE_MS = [0, -1, 1, 999, 1000, -86_400_000, 951_782_400_000, 4_107_542_399_999, 1_785_542_399_999,
           -62_135_596_800_000, -62_135_596_800_001, -62_167_219_200_000, -62_167_219_200_001,
           253_402_300_799_999, 253_402_300_800_000, -210_866_760_000_001, NULL_TS, 2**63 - 1]


def test_spec_ts_spells_every_time_as_sqlites_strftime_does() -> None:
    rng = random.Random(29)
    values = EDGE_MS + [rng.randrange(-62_135_596_800_000, 253_402_300_800_000) for _ in range(20_000)]
    values += [rng.randrange(-86_400_000 * 3, 86_400_000 * 3) for _ in range(2_000)]
    db = sqlite3.connect(":memory:")
    query = f"SELECT CASE WHEN ?1 = {NULL_TS} THEN 'unknown' ELSE {SPEC_TS.format('?1')} END"
    expected = [db.execute(query, (v,)).fetchone()[0] for v in values]
    assert spec_ts(np.array(values, dtype=np.int64)).to_pylist() == expected  # spread: dates row by row
    assert spec_ts(np.array(values[-2_000:], dtype=np.int64)).to_pylist() == expected[-2_000:]  # a few days
    assert expected[:3] == ["1970-01-01T00:00:00.000Z", "1969-12-31T23:59:59.999Z",
                            "1970-01-01T00:00:00.001Z"]


def _edge_lines() -> list[dict[str, object]]:
    """Journal records with odd times, latencies and error codes, a replay with an error, an identity."""
    codes: list[object] = [-32000, "tool-error", 2**63 + 5, 1.5, None, "-32000", 0]
    lines: list[dict[str, object]] = []
    times = ["0001-01-01T00:00:00.000Z", "1969-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z",
             "2026-08-01T00:00:00.5+01:00", "2028-02-29T23:59:59.999Z", "not a time"]
    for i, ts in enumerate(times):
        for j, code in enumerate([None, *codes]):
            line: dict[str, object] = {"ts": ts, "session": f"edge-{i}", "seq": j + 1, "server": "edge",
                                       "method": "tools/call", "tool": f"t{j}", "args": {"a": i},
                                       "latency_ms": [None, 0, 2**64 - 1, 7][j % 4], "shim_self_us": 1,
                                       "kind": "real", "outcome": "ok" if j == 0 else "error"}
            if j:
                line["error"] = {"code": code, "template": "{message}", "template_id": "db353212bf91d2d5",
                                 "retryable": j % 2 == 0}
            lines.append(line)
    replayed = {"ts": "2026-08-02T00:00:03Z", "session": "rep", "seq": 3, "server": "edge",
                "method": "tools/call", "tool": "r", "outcome": "error", "shim_self_us": 1, "kind": "real",
                "error": {"code": -32001, "template": "{message}", "template_id": "db353212bf91d2d5"},
                "identity": {"capture_id": "11111111-1111-4111-8111-111111111111",
                             "event_id": "33333333-3333-4333-8333-333333333333"}}
    return [*lines, replayed, replayed, {"ts": "2026-08-02T00:00:04Z", "session": "rep", "seq": 4,
                                         "server": "edge", "method": "ping", "outcome": "ok",
                                         "shim_self_us": 1, "kind": "real"}]


def _calls(root: Path) -> list[tuple[object, ...]]:
    """Every ``calls`` row but its id, in id order (a full build leaves a dropped replay's id unused)."""
    return [row[1:] for row in _db(root).execute("SELECT * FROM calls ORDER BY id")]


def test_a_full_build_and_a_refresh_write_the_same_calls_spelled_as_spec_says(root: Path,
                                                                           tmp_path: Path) -> None:
    """A full build's bulk writer appends ``calls`` and ``call_errors`` from Arrow, a refresh inserts the
    same batches' rows with ``executemany``: the same rows, byte for byte, over odd times, codes and
    latencies, a replay and many batches."""
    synthetic_store(root, calls=3_000, servers=2, tools=3, days=2, sessions=6, seed=4)
    journal = root / "store" / "calls-2026-08-02.jsonl"
    with journal.open("a", encoding="utf-8") as out:
        out.writelines(json.dumps(line) + "\n" for line in _edge_lines())
    full = me.build_index(root, full=True)
    assert full.replayed_events == 1 and full.skipped == 0
    other = tmp_path / "other"
    (other / "store").mkdir(parents=True)
    if (root / ".salt").exists():
        (other / ".salt").write_bytes((root / ".salt").read_bytes())
    assert me.build_index(other).calls == 0
    for path in sorted((root / "store").glob("calls-*.jsonl")):
        (other / "store" / path.name).write_bytes(path.read_bytes())
    refreshed = me.build_index(other)
    assert not refreshed.full and refreshed.calls == full.calls
    assert _calls(other) == _calls(root)
    edge = {(r[4], r[5]): r for r in _db(root).execute("SELECT * FROM calls WHERE server = 'edge'")}
    first = [edge[(s, q)] for s, q in sorted(edge) if s.startswith("session:")]  # edge-* sessions are hashed
    spelled = {(r[3], r[9], r[11], r[14]) for r in first}
    for expected in [("0001-01-01T00:00:00.000Z", None, None, None),  # ts, latency_ms, err_code, retryable
                     ("1969-12-31T23:59:59.999Z", 0, "-32000", 0),
                     ("9999-12-31T23:59:59.999Z", 2**63 - 1, '"tool-error"', 1),
                     ("2026-07-31T23:00:00.500Z", 7, "9223372036854775813", 0),
                     ("2028-02-29T23:59:59.999Z", None, "1.5", 1),
                     ("unknown", 7, "0", 0)]:
        assert expected in spelled, expected
    assert {r[11] for r in first} >= {None, "null", "0", "1.5"}
