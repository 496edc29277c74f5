"""Analysis functions over small hand-built tables with known answers."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from mcpeval_nb import (
    AnnotationRecord,
    CallRecord,
    UsageError,
    append_records,
    error_templates,
    join_annotations,
    latency_over_time,
    latency_summary,
    open_store,
    outcome_rates,
    slowest_tools,
    template_changes,
    template_daily,
    wilson_interval,
)
from mcpeval_nb.testing import synthetic_store

S1, S2 = "session:" + "1" * 64, "session:" + "2" * 64


def call(seq: int, *, tool: str = "a", latency: int | None = 10, outcome: str = "ok",
         template: str | None = None, ts: str = "2026-08-04T12:00:00.000Z", session: str = S1,
         server: str = "demo") -> CallRecord:
    error = None if template is None else {"code": -32000, "template": "{message}", "template_id": template}
    return CallRecord(ts=ts, session=session, seq=seq, server=server, method="tools/call", tool=tool,
                      latency_ms=latency, outcome=outcome, error=error, shim_self_us=0, kind="real")


def calls_table(root: Path, records: list[CallRecord]) -> pa.Table:
    append_records(root, records)
    return open_store(root).calls


def test_latency_percentiles_match_numpy_per_tool(root: Path) -> None:
    lat_a = list(range(1, 101))
    lat_b = [5, 7, 1000]
    records = [call(i, latency=v) for i, v in enumerate(lat_a, 1)]
    records += [call(200 + i, tool="b", latency=v) for i, v in enumerate(lat_b)]
    records.append(call(999, tool="b", latency=None, outcome="unknown"))
    table = latency_summary(calls_table(root, records), by=("tool",))
    rows = {r["tool"]: r for r in table.to_pylist()}
    for tool, values in (("a", lat_a), ("b", lat_b)):
        assert rows[tool]["count"] == len(values) and rows[tool]["max"] == max(values)
        for p in (50, 90, 95, 99):
            assert rows[tool][f"p{p}"] == pytest.approx(float(np.percentile(values, p)))


def test_slowest_tools_orders_by_p95_and_latency_over_time_buckets(root: Path) -> None:
    records = [call(i, tool="fast", latency=5, ts=f"2026-08-04T0{i % 3}:00:00.000Z") for i in range(1, 30)]
    records += [call(100 + i, tool="slow", latency=500 + i, ts="2026-08-04T01:30:00.000Z") for i in range(10)]
    table = calls_table(root, records)
    assert slowest_tools(table, n=1).column("tool").to_pylist() == ["slow"]
    over = latency_over_time(table, bucket="1h", by=("tool",))
    over = over.filter(pa.array([t == "fast" for t in over.column("tool").to_pylist()]))
    assert over.column("count").to_pylist() == [9, 10, 10]
    assert [b.hour for b in over.column("bucket").to_pylist()] == [0, 1, 2]
    with pytest.raises(UsageError):
        latency_over_time(table, bucket="fortnightly-ish")


def test_outcome_rates_carry_wilson_intervals(root: Path) -> None:
    records = [call(i, outcome="error" if i <= 3 else "ok", template="ab" * 8 if i <= 3 else None)
               for i in range(1, 11)]
    row = outcome_rates(calls_table(root, records)).to_pylist()[0]
    assert (row["count"], row["ok"], row["error"], row["unknown"]) == (10, 7, 3, 0)
    assert row["error_rate"] == pytest.approx(0.3)
    low, high = wilson_interval(3, 10)
    assert (row["error_low"], row["error_high"]) == (low, high)
    assert low == pytest.approx(0.1078, abs=1e-4) and high == pytest.approx(0.6032, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_error_templates_count_sessions_tools_and_days(root: Path) -> None:
    t1, t2 = "aa" * 8, "bb" * 8
    records = [call(1, template=t1, outcome="error", ts="2026-08-03T10:00:00.000Z"),
               call(2, template=t1, outcome="error", tool="b", session=S2, ts="2026-08-04T10:00:00.000Z"),
               call(3, template=t1, outcome="error", ts="2026-08-04T11:00:00.000Z"),
               call(4, template=t2, outcome="error", ts="2026-08-04T12:00:00.000Z"),
               call(5)]
    table = calls_table(root, records)
    rows = error_templates(table).to_pylist()
    assert [r["template_id"] for r in rows] == [t1, t2]
    assert (rows[0]["count"], rows[0]["sessions"], rows[0]["tools"], rows[0]["codes"]) == (3, 2, ["a", "b"],
                                                                                           ["-32000"])
    assert rows[0]["first_seen"] == dt.datetime(2026, 8, 3, 10, tzinfo=dt.UTC)
    daily = [(r["template_id"], r["day"].isoformat(), r["count"]) for r in template_daily(table).to_pylist()]
    assert daily == [(t1, "2026-08-03", 1), (t1, "2026-08-04", 2), (t2, "2026-08-04", 1)]


def test_template_changes_finds_new_and_bursting_templates(root: Path) -> None:
    steady, bursty, fresh = "aa" * 8, "bb" * 8, "cc" * 8
    records, seq = [], 0
    for day in (1, 2):
        for hour in range(0, 24, 4):
            seq += 1
            ts = f"2026-08-0{day}T{hour:02d}:00:00.000Z"
            records.append(call(seq, template=steady, outcome="error", ts=ts))
    seq += 1
    records.append(call(seq, template=bursty, outcome="error", ts="2026-08-01T05:00:00.000Z"))
    for i in range(6):
        seq += 1
        records.append(call(seq, template=bursty, outcome="error", ts=f"2026-08-03T0{i}:00:00.000Z"))
        seq += 1
        records.append(call(seq, template=steady, outcome="error", ts=f"2026-08-03T0{i}:30:00.000Z"))
    seq += 1
    records.append(call(seq, template=fresh, outcome="error", ts="2026-08-03T09:00:00.000Z"))
    out = template_changes(calls_table(root, records), window=("2026-08-03", "2026-08-04"),
                           baseline=("2026-08-01", "2026-08-03"))
    assert [(r["template_id"], r["status"]) for r in out.to_pylist()] == [(fresh, "new"), (bursty, "burst")]
    with pytest.raises(UsageError):
        template_changes(calls_table(root, []), window=("2026-08-04", "2026-08-03"), baseline=("x", "y"))


def test_annotations_join_by_session_and_seq_or_event_id(root: Path) -> None:
    event = "6f1c1e8e-62b4-4b4a-9a51-0d5cf7d2a002"
    from mcpeval_nb.privacy.records import Identity
    ident = Identity("6f1c1e8e-62b4-4b4a-9a51-0d5cf7d2a001", event)
    records = [call(1, tool="click"), call(2, tool="type", outcome="error", template="ab" * 8),
               CallRecord(ts="2026-08-04T12:00:00.000Z", session=S2, seq=1, server="demo",
                          method="tools/call", tool="scroll", outcome="ok", identity=ident)]
    append_records(root, records)
    ts = "2026-08-04T13:00:00.000Z"
    append_records(root, [AnnotationRecord(ts=ts, session=S1, seq=1, kind="false-success", note="n1"),
                          AnnotationRecord(ts=ts, session=S1, seq=9, kind="workaround", note="n2"),
                          AnnotationRecord(ts=ts, session=S1, event_id=event, kind="workaround", note="n3")])
    store = open_store(root)
    rows = join_annotations(store.calls, store.annotations).to_pylist()
    assert [(r["note"], r["matched"], r["tool"]) for r in rows] == [
        ("n1", True, "click"), ("n2", False, None), ("n3", True, "scroll")]
    only = join_annotations(store.calls, store.annotations, kinds=("false-success",))
    assert only.column("note").to_pylist() == ["n1"]


def test_analysis_accepts_a_pandas_frame_and_refuses_other_inputs(root: Path) -> None:
    synthetic_store(root, calls=300, seed=9)
    table = open_store(root).calls
    frame = table.to_pandas()
    assert latency_summary(frame).equals(latency_summary(table))
    with pytest.raises(UsageError, match="no column 'latency_ms'"):
        latency_summary(table.drop_columns(["latency_ms"]))
    with pytest.raises(UsageError):
        outcome_rates([1, 2, 3])
