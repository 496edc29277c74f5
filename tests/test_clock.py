"""The one clock: stamps, days and their parsing, with one error text, and no other reader of the time."""

from __future__ import annotations

import ast
import datetime as dt
from pathlib import Path

import pytest

import mcpeval_nb
from mcpeval_nb import UsageError
from mcpeval_nb.clock import (
    Clock,
    day_of,
    format_ms,
    format_ms_auto,
    is_day,
    now_ts,
    parse_day,
    parse_moment,
    ts_millis,
    valid_rfc3339,
)

PACKAGE = Path(mcpeval_nb.__file__).resolve().parent
NOON = 1_785_585_600_000  # 2026-08-01T12:00:00Z


def test_a_configured_clock_stamps_every_record_the_same_way() -> None:
    clock = Clock(lambda: NOON * 1_000_000 + 250_999_999)
    assert clock.now_ms() == NOON + 250
    assert clock.now_ts() == "2026-08-01T12:00:00.250Z" == format_ms(NOON + 250)
    assert clock.today() == dt.date(2026, 8, 1)
    assert now_ts(dt.datetime(2026, 8, 1, 14, 0, 0, 250999, tzinfo=dt.timezone(dt.timedelta(hours=2)))) == \
        "2026-08-01T12:00:00.250Z"
    assert valid_rfc3339(now_ts())


def test_stamps_round_trip_through_the_one_parser() -> None:
    for ms in (0, NOON, NOON + 1, NOON + 999, -1500):
        assert ts_millis(format_ms(ms)) == ms
        assert ts_millis(format_ms_auto(ms)) == ms
    assert format_ms_auto(NOON) == "2026-08-01T12:00:00Z"
    assert format_ms_auto(NOON + 7) == "2026-08-01T12:00:00.007Z"
    assert ts_millis("2026-08-01T14:00:00+02:00") == NOON
    assert ts_millis("2026-08-01T11:59:60Z") == NOON - 1  # a leap second counts as :59.999
    assert ts_millis("unknown") is None and ts_millis("2026-02-30T00:00:00Z") is None
    assert day_of("2026-08-01T12:00:00.000Z") == "2026-08-01" and day_of("unknown") == "unknown"


@pytest.mark.parametrize("text", ["2026-8-1", "20260801", "2026-W31-6", "2026-02-30", "2026-08-01T00:00:00Z",
                                  "２０２６-08-01", ""])
def test_a_day_a_user_types_is_strictly_yyyy_mm_dd_with_one_error_text(text: str) -> None:
    assert not is_day(text)
    with pytest.raises(UsageError) as info:
        parse_day(text, what="--since")
    assert str(info.value) == "--since must be a day, YYYY-MM-DD"


def test_days_and_times_parse_to_dates_and_milliseconds() -> None:
    assert parse_day("2026-08-01", what="x") == dt.date(2026, 8, 1)
    assert parse_day(dt.datetime(2026, 8, 1, 23, 0), what="x") == dt.date(2026, 8, 1)
    assert parse_day(None, what="x") is None
    assert parse_moment("2026-08-01", what="x") == NOON - 43_200_000
    assert parse_moment("2026-08-01T12:00:00Z", what="x") == NOON
    assert parse_moment(dt.datetime(2026, 8, 1, 12), what="x") == NOON  # naive = UTC
    assert parse_moment(dt.date(2026, 8, 1), what="x") == NOON - 43_200_000
    with pytest.raises(UsageError) as info:
        parse_moment("yesterday", what="--until")
    assert str(info.value) == "--until must be a day, YYYY-MM-DD, or an RFC 3339 time"


def test_the_public_functions_say_the_same_text() -> None:
    with pytest.raises(UsageError, match=r"^--before must be a day, YYYY-MM-DD$"):
        mcpeval_nb.erase("/nonexistent-root", session="s", before="2026-13-01")
    with pytest.raises(UsageError, match=r"^--since must be a day, YYYY-MM-DD, or an RFC 3339 time$"):
        mcpeval_nb.findings("/nonexistent-root", since="soon")


def _clock_readers(path: Path) -> list[str]:
    """Calls in ``path`` that read the wall clock (``time.time``, ``datetime.now``, ``date.today`` ...)."""
    found = []
    readers, owners = ("time", "time_ns", "now", "utcnow", "today"), ("time", "datetime", "date", "dt", "_dt")
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name | ast.Attribute)):
            continue
        if node.attr in readers and ast.unparse(node.value).split(".")[-1] in owners:
            found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    return found


def test_no_module_but_the_clock_reads_the_time(tmp_path: Path) -> None:
    # The fixture servers stand in for third-party servers (OAuth token expiry by the SDK's own rules):
    # they are not the package stamping what it records.
    servers = PACKAGE / "testing" / "servers"
    readers = [hit for path in sorted(PACKAGE.rglob("*.py")) if path.name != "clock.py"
               and servers not in path.parents for hit in _clock_readers(path)]
    assert readers == []
    planted = tmp_path / "planted.py"
    planted.write_text("import time, datetime as dt\na = time.time()\nb = dt.datetime.now(dt.UTC)\n")
    assert _clock_readers(planted) == ["planted.py:2 time.time", "planted.py:3 dt.datetime.now"]
