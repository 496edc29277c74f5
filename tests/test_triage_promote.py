"""Promotion over a store whose every answer was computed by hand (tests/triage_support.py)."""

from __future__ import annotations

import datetime as dt
import json
import math
import sqlite3
from pathlib import Path

import pytest

import mcpeval_nb as me
from mcpeval_nb.triage.findings import list_findings
from mcpeval_nb.triage.scoring import finding_id

from .triage_support import SERVER, Expected, build

Z = 1.959963984540054


def _ms(text: str) -> int:
    return int(dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def _score(e: Expected, promoted_at: int) -> float:
    p = e.failures / e.calls
    wilson = (p + Z * Z / (2 * e.calls) - Z * math.sqrt((p * (1 - p) + Z * Z / (4 * e.calls)) / e.calls)) / (
        1 + Z * Z / e.calls
    )
    age = max(0, promoted_at - _ms(e.last_seen)) / 86_400_000
    return wilson * 0.5 ** (age / 14) * math.log2(1 + e.cost) * (1 + math.log2(e.blast))


@pytest.fixture
def known(root: Path) -> dict[str, Expected]:
    return build(root)


def test_every_promote_field_matches_the_hand_computed_answer(root: Path, known: dict[str, Expected]) -> None:
    result = me.promote(root, threshold=0)
    assert result.line() == "promoted 4 of 5 issues (1 seen in one session only)"
    issues = {f.err_template_id: f for f in list_findings(root, promoted=False)}
    assert set(issues) == {e.template for e in known.values()}
    for name, e in known.items():
        f = issues[e.template]
        assert (f.server, f.tool) == (SERVER, e.tool), name
        assert (f.failures, f.calls, f.sessions) == (e.failures, e.calls, e.sessions), name
        assert (f.cost, f.blast, f.klass) == (e.cost, e.blast, e.klass), name
        assert (f.err_code, f.err_codes, f.retryable) == (e.err_code, e.err_codes, e.retryable), name
        assert f.last_seen == e.last_seen and f.rate == e.failures / e.calls, name
        assert f.score == _score(e, f.promoted_at), name
        assert f.finding_id == finding_id(SERVER, e.tool, None, e.template), name
        assert f.repro == '{"q":"str<8"}'


def test_promotion_counts_sessions_and_threshold_separately(root: Path, known: dict[str, Expected]) -> None:
    me.promote(root, threshold=0)
    scores = sorted(f.score for f in list_findings(root, promoted=False) if f.sessions >= 2)
    middle = (scores[1] + scores[2]) / 2
    result = me.promote(root, threshold=middle)
    assert (
        result.line()
        == f"promoted 2 of 5 issues (1 seen in one session only, 2 below threshold {middle:.6f})"
    )
    assert len(me.findings(root)) == 2


def test_synthetic_calls_skipped_groups_and_annotation_links(root: Path, known: dict[str, Expected]) -> None:
    me.build_index(root)
    db = sqlite3.connect(root / "index.db")
    (synthetic,) = db.execute("SELECT id FROM calls WHERE kind = 'synthetic'").fetchone()
    assert db.execute("SELECT COUNT(*) FROM windows WHERE failure_id = ?", (synthetic,)).fetchone() == (0,)
    skipped_failure = db.execute(
        "SELECT c.id FROM calls c WHERE c.tool = 'boom' AND c.seq = 1 AND c.session = "
        "(SELECT session FROM annotations WHERE kind = 'false-success' AND call_id IS "
        "NULL)"
    ).fetchone()[0]
    assert db.execute("SELECT COUNT(*) FROM windows WHERE failure_id = ?", (skipped_failure,)).fetchone() == (
        0,
    )
    links = dict(db.execute("SELECT kind || ':' || COALESCE(seq, -1), call_id FROM annotations").fetchall())
    first_b = db.execute(
        "SELECT id FROM calls WHERE event_id = ?", ("7a2b3c4d-0000-4000-8000-000000000000",)
    ).fetchone()[0]
    assert links["blocked-optimal-path:-1"] == first_b
    assert links["false-success:1"] is None  # (I, 1) matches two calls: unlinked
    notes = [n for (n,) in db.execute("SELECT note FROM annotations")]
    assert notes == [None] * 4  # the user's prose never enters index.db


def test_findings_json_keeps_spec_field_order(root: Path, known: dict[str, Expected]) -> None:
    me.promote(root, threshold=0)
    rows = json.loads(me.render_findings(root, format="json"))
    assert list(rows[0]) == [
        "finding_id",
        "state",
        "probe_id",
        "consecutive_passes",
        "server",
        "tool",
        "err_code",
        "err_template_id",
        "failures",
        "calls",
        "sessions",
        "last_seen",
        "cost",
        "blast",
        "rate",
        "confidence",
        "recency",
        "score",
        "threshold",
        "severity",
        "repro",
        "class",
        "hint",
        "err_codes",
        "retryable",
    ]
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    t3 = next(r for r in rows if r["class"] == "unstable-error-code")
    assert t3["err_code"] == "broken" and t3["err_codes"] == ["broken", -32002] and t3["retryable"] is None


def test_agent_lines_follow_spec(root: Path, known: dict[str, Expected]) -> None:
    me.promote(root, threshold=0)
    lines = me.render_findings(root).splitlines()
    assert len(lines) == 12
    first = lines[0].split()
    assert first[0] == "finding" and first[2].startswith(f"{SERVER}/")
    assert [w.split("=")[0] for w in first[3:]] == [
        "state",
        "probe",
        "consecutive_passes",
        "severity",
        "score",
        "threshold",
        "rate",
        "confidence",
        "recency",
        "failures",
        "sessions",
        "cost",
        "blast",
    ]
    assert lines[1].startswith("  cause code=") and lines[2].startswith("  repro=")


def test_since_until_window_promotes_only_what_failed_in_it(root: Path, known: dict[str, Expected]) -> None:
    result = me.promote(root, threshold=0, since="2026-08-04T12:03:00Z", until="2026-08-04T12:05:00Z")
    assert result.line() == "promoted 2 of 2 issues"  # T2 and T3 fail only in sessions C and E
    assert {f.klass for f in list_findings(root)} == {"recovers-on-retry", "unstable-error-code"}
    assert len(me.findings(root, since="2026-08-05")) == 0
    assert len(me.findings(root, until="2026-08-05")) == 2


def test_config_threshold_is_used_when_no_flag(root: Path, known: dict[str, Expected]) -> None:
    (root / "config.json").write_text('{"promotion_threshold": 1000, "other": 1}')
    assert (
        me.promote(root).line() == "promoted 0 of 5 issues (1 seen in one session only, 4 below threshold "
        "1000.000000)"
    )
    with pytest.raises(me.UsageError):
        me.promote(root, threshold=-1)
