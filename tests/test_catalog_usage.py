"""tool_usage, tool_transitions and tool_clusters on a hand-computed store (records written through the
real writer): the verdicts and their evidence rule, chains and their probabilities, clusters by lift."""

from __future__ import annotations

from pathlib import Path

import pytest

import mcpeval_nb as me
from mcpeval_nb.analysis.usage import verdict_of
from mcpeval_nb.privacy.catalog import CatalogRecord, catalog_tool

SALT = bytes(32)
TOOLS = ["search", "fetch", "export_pdf", "translate", "ping"]


def _listing(session: str, day: int, names: list[str], server: str = "docs") -> CatalogRecord:
    tools = tuple(catalog_tool({"name": n, "description": f"{n} the docs", "inputSchema": {"type": "object"}},
                               SALT) for n in names)
    return CatalogRecord(ts=f"2026-08-{day:02d}T09:00:00.000Z", session=session, seq=1, server=server,
                         complete=True, tools=tools)


def _calls(session: str, day: int, tools: list[str], *, server: str = "docs",
           fail: frozenset[str] = frozenset(), kind: str = "real") -> list[me.CallRecord]:
    return [me.CallRecord(ts=f"2026-08-{day:02d}T09:00:{i:02d}.000Z", session=session, seq=i + 2,
                          server=server, method="tools/call", tool=tool, kind=kind, latency_ms=5,
                          outcome="error" if tool in fail else "ok") for i, tool in enumerate(tools)]


@pytest.fixture
def usage_root(tmp_path: Path) -> Path:
    """40 sessions listing five tools: search always called (then fetch in half), translate in 2 sessions,
    export_pdf never, ping listed only in the last session; probe calls of export_pdf do not count."""
    records: list[object] = []
    for i in range(40):
        session, day = f"s{i:02d}", 1 + i % 20
        names = TOOLS if i == 39 else TOOLS[:4]
        records.append(_listing(session, day, names))
        called = ["search", "fetch"] if i % 2 == 0 else ["search"]
        if i in (3, 7):
            called.append("translate")
        records += _calls(session, day, called, fail=frozenset({"fetch"}) if i % 4 == 0 else frozenset())
    records += _calls("probe-run", 20, ["export_pdf"] * 5, kind="synthetic")
    me.append_records(tmp_path, records)  # type: ignore[arg-type]
    return tmp_path


def test_verdicts_need_evidence_and_a_tool_listed_once_is_never_dead(usage_root: Path) -> None:
    rows = {r["tool"]: r for r in me.tool_usage(usage_root).to_pylist()}
    assert rows["export_pdf"]["verdict"] == "dead" and rows["export_pdf"]["calls"] == 0  # probes do not count
    assert rows["export_pdf"]["listed_sessions"] == 40 and rows["export_pdf"]["rate_high"] < 0.10
    assert rows["ping"]["verdict"] == "insufficient-evidence" and rows["ping"]["listed_sessions"] == 1
    assert rows["translate"]["verdict"] == "rare" and rows["translate"]["called_sessions"] == 2
    assert rows["search"]["verdict"] == "used" and rows["search"]["call_rate"] == 1.0
    assert rows["fetch"]["verdict"] == "used" and rows["fetch"]["calls"] == 20
    assert rows["fetch"]["error_rate"] == pytest.approx(10 / 20)
    assert rows["search"]["catalog_tokens"] == catalog_tool(
        {"name": "search", "description": "search the docs", "inputSchema": {"type": "object"}}, SALT).tokens
    assert [r["verdict"] for r in me.tool_usage(usage_root).to_pylist()][:1] == ["dead"]  # dead first


def test_the_evidence_rule_is_the_wilson_interval_against_the_thresholds() -> None:
    assert verdict_of(34, 0)[0] == "insufficient-evidence" and verdict_of(35, 0)[0] == "dead"
    assert verdict_of(1, 0)[0] == "insufficient-evidence" and verdict_of(0, 0)[0] == "insufficient-evidence"
    assert verdict_of(100, 2)[0] == "rare" and verdict_of(3, 3)[0] == "used"
    assert verdict_of(10, 2)[0] == "insufficient-evidence"
    assert verdict_of(35, 0, dead_below=0.05)[0] == "insufficient-evidence"


def test_since_and_until_keep_listings_and_calls_of_those_days(usage_root: Path) -> None:
    day = me.tool_usage(usage_root, since="2026-08-01", until="2026-08-01")
    rows = {r["tool"]: r for r in day.to_pylist()}
    assert rows["search"]["listed_sessions"] == 2 and rows["search"]["calls"] == 2
    with pytest.raises(me.UsageError, match="--until must be a day"):
        me.tool_usage(usage_root, until="soon")


def test_transitions_count_what_follows_what_within_each_session(usage_root: Path) -> None:
    rows = {(r["from_tool"], r["to_tool"]): r for r in me.tool_transitions(usage_root).to_pylist()}
    assert rows[("search", "fetch")]["count"] == 20 and rows[("search", "fetch")]["sessions"] == 20
    assert rows[("search", "translate")]["count"] == 2  # sessions 3 and 7 (odd: search then translate)
    assert rows[("search", "fetch")]["probability"] == pytest.approx(20 / 22)
    assert ("fetch", "translate") not in rows and ("fetch", "search") not in rows
    assert sum(r["probability"] for k, r in rows.items() if k[0] == "search") == pytest.approx(1.0)


def test_clusters_group_tools_called_together_beyond_chance(tmp_path: Path) -> None:
    records: list[object] = []
    for i in range(12):
        if i < 6:
            tools = ["get_order", "refund_order"]
        elif i < 10:
            tools = ["list_products", "get_product"]
        else:
            tools = ["get_order"]
        records += _calls(f"c{i}", 3, ["ping", *tools], server="shop")
    me.append_records(tmp_path, records)  # type: ignore[arg-type]
    clusters = me.tool_clusters(tmp_path).to_pylist()
    assert [c["tools"] for c in clusters] == [["get_order", "refund_order"], ["get_product", "list_products"]]
    assert clusters[0]["sessions"] == 6 and clusters[1]["sessions"] == 4
    assert clusters[0]["lift_min"] == pytest.approx(6 * 12 / (8 * 6))
    assert me.tool_clusters(tmp_path, min_sessions=5)["tools"].to_pylist() == [["get_order", "refund_order"]]
    assert me.tool_clusters(tmp_path, min_lift=10).num_rows == 0  # ping, in every session, joins none


def test_empty_stores_give_empty_tables_with_their_columns(tmp_path: Path) -> None:
    for table in (me.tool_usage(tmp_path), me.tool_transitions(tmp_path), me.tool_clusters(tmp_path),
                  me.catalog_history(tmp_path), me.catalog_drift(tmp_path)):
        assert table.num_rows == 0 and table.num_columns > 3
