"""explain_finding and failure_windows over the store whose every answer was computed by hand
(tests/triage_support.py): the factors, their inputs and product, and the calls around each failure."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import pytest

import mcpeval_nb as me
from mcpeval_nb.triage.findings import list_findings
from mcpeval_nb.triage.rows import Finding

from .triage_support import Expected, _ts, build

Z = 1.959963984540054


@pytest.fixture
def issues(root: Path) -> tuple[dict[str, Expected], dict[str, Finding]]:
    known = build(root)
    me.promote(root, threshold=0)
    return known, {f.err_template_id or "": f for f in list_findings(root, promoted=False)}


def _wilson(failures: int, calls: int) -> float:
    p = failures / calls
    return (p + Z * Z / (2 * calls) - Z * math.sqrt((p * (1 - p) + Z * Z / (4 * calls)) / calls)) / (
        1 + Z * Z / calls)


def test_each_factor_comes_from_the_hand_computed_inputs_and_they_multiply_to_the_score(
        root: Path, issues: tuple[dict[str, Expected], dict[str, Finding]]) -> None:
    known, found = issues
    for name, e in known.items():
        f = found[e.template]
        x = me.explain_finding(root, f.finding_id)
        confidence, recency, cost, blast = x.factors
        assert [r.name for r in x.factors] == ["confidence", "recency", "cost", "blast"], name
        assert (confidence.inputs["failures"], confidence.inputs["calls"]) == (e.failures, e.calls), name
        assert math.isclose(confidence.value, _wilson(e.failures, e.calls), rel_tol=1e-12), name
        assert recency.inputs["last_seen"] == e.last_seen, name
        assert math.isclose(recency.value, 0.5 ** (recency.inputs["age_days"] / 14), rel_tol=1e-3), name
        assert (cost.inputs["median_window_calls"], cost.value) == (e.cost, math.log2(1 + e.cost)), name
        assert (blast.inputs["tools"], blast.value) == (e.blast, 1 + math.log2(e.blast)), name
        assert len(x.tools) == e.blast and f.tool in x.tools, name
        assert math.isclose(x.score, f.score, rel_tol=1e-12), name
        assert x.promoted == (e.sessions >= 2), name  # the threshold is 0


def test_failure_windows_are_the_calls_around_each_failure(
        root: Path, issues: tuple[dict[str, Expected], dict[str, Finding]]) -> None:
    known, found = issues
    finding = found[known["T1"].template].finding_id
    rows = me.failure_windows(root, finding, limit=None).to_pylist()
    around: dict[int, list[tuple[int, str | None, str]]] = defaultdict(list)
    for r in rows:
        around[r["failure_id"]].append((r["offset"], r["tool"], r["outcome"]))
    at = {r["ts"]: r["failure_id"] for r in rows if r["offset"] == 0}
    ok, error = "ok", "error"
    assert {ts: around[failure] for ts, failure in at.items()} == {
        _ts(1, 2): [(-1, "read", ok), (0, "boom", error), (1, "read", ok), (2, "list", ok),
                    (3, "boom", error)],
        _ts(1, 5): [(-4, "read", ok), (-3, "boom", error), (-2, "read", ok), (-1, "list", ok),
                    (0, "boom", error), (1, "read", ok)],
        # a capture's calls: its notification is a neighbour too (its outcome is stored as unknown)
        _ts(2, 1): [(0, "boom", error), (1, "read", ok), (2, None, "unknown"), (3, "boom", ok)],
        _ts(8, 2): [(0, "boom", error)],  # its (session, seq) repeats: the legacy group has no windows
    }
    assert {r["args"] for r in rows} <= {'{"q":"str<8"}', None}  # shapes only
    latest = me.failure_windows(root, finding, limit=2).to_pylist()
    assert {r["ts"] for r in latest if r["offset"] == 0} == {_ts(8, 2), _ts(2, 1)}  # the two most recent
    other = found[known["T2"].template].finding_id
    assert {r["tool"] for r in me.failure_windows(root, other).to_pylist() if r["offset"] == 0} == {"flaky"}
