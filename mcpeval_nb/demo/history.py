"""The demo's generated history: four weeks of calls and two weeks of readiness for one server.

A capture made in one minute cannot show a trend, so the demo root also holds history for the server
``generated-docs`` (the label says what it is), written through the real writer (``append_records``,
``record_trend``) with timestamps in the past.  It is made to show what the notebooks are for:

- calls on each of the 28 days before today, in research sessions (``search`` and ``fetch_page``
  chained) and browsing sessions (``list_sections``), with a latency regression of ``search`` from day 11
  to day 16 and its recovery, sub-millisecond ``list_sections`` calls, an error template that fades out
  (``search``'s "index not ready", days 0-9) and one that appears mid-way (``fetch_page``'s "upstream
  rate limited", from day 14);
- 12 readiness points over 22 days with a regression, a fix, a standard change (``mcpeval-standard/1``
  to ``/2``) and a measurement profile change (read-only attestation turned on);
- one catalog record per generated session (``seq`` 0: the listing before its first call; its digests
  and skeletons built in memory from the definitions below, as a shim builds them).  The catalog
  grows ``translate_page`` on day 12 and ``fetch_page`` gains a ``format`` argument on day 20 (drift
  over time), and two listed tools are never called: ``export_pdf`` and ``translate_page`` are dead,
  listed in every session and paid for in context tokens.

Everything else in the demo root is captured today from real servers.  The values are deterministic
for a given day (seeded), and no record carries anything but shapes, template ids and numbers.
"""

from __future__ import annotations

import datetime as dt
import random
import uuid
from dataclasses import dataclass
from pathlib import Path

from mcpeval_nb import (
    CallRecord,
    TrendPoint,
    append_records,
    error_info,
    load_salt,
    measurement_profile,
    record_trend,
    shape,
)
from mcpeval_nb.clock import CLOCK, day_start, now_ts
from mcpeval_nb.privacy.catalog import CatalogRecord, catalog_tool

__all__ = ["GENERATED_SERVER", "HistorySummary", "generate_history"]

GENERATED_SERVER = "generated-docs"
DAYS = 28
_MANIFEST = "1ee2036ff783d9ee501e5420062b7d21b90791da7f0434f4c37d68418de2033b"
_STANDARD_OLD, _STANDARD = "mcpeval-standard/1", "mcpeval-standard/2"


@dataclass(frozen=True)
class HistorySummary:
    """What was generated: calls, days, trend points, and the first and last day."""

    calls: int
    days: int
    points: int
    first_day: dt.date
    last_day: dt.date


def _latency(rng: random.Random, tool: str, day: int) -> int:
    if tool == "list_sections":
        return int(rng.random() < 0.2)  # under a millisecond most of the time
    median = {"search": 240.0 if 11 <= day <= 16 else 38.0, "fetch_page": 85.0}[tool]
    return max(0, int(rng.lognormvariate(0.0, 0.45) * median))


def _error(rng: random.Random, tool: str, day: int) -> str | None:
    """The message of a failed call (only its salted template id is stored), or None."""
    if tool == "search" and day < 10 and rng.random() < 0.14 * (1 - day / 10):
        return f"index not ready: shard {rng.randint(1, 9)} is still warming up"
    if tool == "fetch_page" and day >= 14 and rng.random() < 0.09:
        return f"upstream rate limited: retry in {rng.randint(2, 9)} s"
    if tool == "fetch_page" and rng.random() < 0.02:
        return f"page not found: /guide/{rng.randint(100, 999)}"
    return None


def _args(rng: random.Random, tool: str) -> object:
    if tool == "search":
        return shape({"query": "how do I configure retries for the client", "limit": rng.choice([5, 10])})
    if tool == "fetch_page":
        return shape({"url": f"https://docs.example.com/guide/{rng.randint(1, 60)}"})
    return shape({})


def _next_tool(rng: random.Random, research: bool, previous: str | None) -> str:
    """Research sessions chain ``search`` and ``fetch_page`` (search, then mostly a page, then search
    again); browsing sessions only list sections.  So the two are called together beyond chance (a
    cluster) and the transitions have a shape."""
    if not research:
        return "list_sections"
    if previous == "search":
        return "fetch_page" if rng.random() < 0.6 else "search"
    return "search" if previous is None or rng.random() < 0.7 else "fetch_page"


def _day_calls(rng: random.Random, day: int, start: dt.datetime, salt: bytes) -> list[CallRecord]:
    records = []
    for _session in range(rng.randint(4, 7)):
        session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        when = start + dt.timedelta(seconds=rng.randint(7 * 3600, 19 * 3600))
        research, tool = rng.random() < 0.65, None
        for seq in range(1, rng.randint(15, 30) + 1):
            tool = _next_tool(rng, research, tool)
            message = _error(rng, tool, day)
            error = None if message is None else error_info({"code": -32000, "message": message}, salt)
            records.append(CallRecord(
                ts=now_ts(when), session=session, seq=seq, server=GENERATED_SERVER, method="tools/call",
                tool=tool, args=_args(rng, tool), latency_ms=_latency(rng, tool, day),
                outcome="ok" if error is None else "error", error=error, shim_self_us=rng.randint(20, 90)))
            when += dt.timedelta(seconds=rng.randint(2, 40))
    return records


#: (day, score, gate passed of 5, standard, attested read-only): regression at day 12, fixed at 16.
_POINTS = ((6, 64, 5, _STANDARD_OLD, False), (8, 66, 5, _STANDARD_OLD, False), (9, 71, 5, _STANDARD, False),
           (10, 72, 5, _STANDARD, False), (12, 58, 3, _STANDARD, False), (13, 60, 3, _STANDARD, False),
           (16, 75, 5, _STANDARD, False), (17, 76, 5, _STANDARD, False), (20, 80, 5, _STANDARD, True),
           (22, 81, 5, _STANDARD, True), (25, 81, 5, _STANDARD, True), (27, 82, 5, _STANDARD, True))


def _points(start: dt.datetime) -> list[TrendPoint]:
    points = []
    for day, score, passed, standard, attested in _POINTS:
        profile = measurement_profile(attested_read_only=attested) if standard == _STANDARD else None
        points.append(TrendPoint(
            ts=now_ts(start + dt.timedelta(days=day, hours=9, minutes=30)), server=GENERATED_SERVER,
            passed=passed == 5, cases_total=5, cases_passed=passed, score=score, manifest_sha256=_MANIFEST,
            standard=standard, measurement_profile=profile))
    return points


def _tool(name: str, description: str, properties: dict[str, object],
          required: tuple[str, ...] = ()) -> dict[str, object]:
    schema: dict[str, object] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return {"name": name, "description": description, "inputSchema": schema,
            "annotations": {"readOnlyHint": True}}


#: The generated server's catalog (in memory only: its records keep digests, skeletons and counts).
CATALOG = (
    _tool("search", "Search the documentation; returns the best matching sections with their titles.",
          {"query": {"type": "string", "description": "Words to look for."},
           "limit": {"type": "integer", "minimum": 1, "maximum": 50}}, ("query",)),
    _tool("fetch_page", "Fetch one documentation page as text.", {"url": {"type": "string"}}, ("url",)),
    _tool("list_sections", "List the documentation's sections.", {}),
    _tool("export_pdf", "Export a documentation page as a PDF file, with its images and a table of "
          "contents, in the given paper size and orientation.",
          {"url": {"type": "string"}, "paper": {"type": "string", "enum": ["a4", "letter"]},
           "landscape": {"type": "boolean"}}, ("url",)),
    _tool("translate_page", "Translate a documentation page into another language, keeping code blocks "
          "and links as they are; long pages are translated section by section.",
          {"url": {"type": "string"}, "language": {"type": "string", "enum": ["de", "fr", "ja", "es"]}},
          ("url", "language")),
)


#: Day -> the catalog listed from that day on.
_FETCH_FORMAT = {**CATALOG[1], "inputSchema": {"type": "object", "required": ["url"], "properties": {
    "url": {"type": "string"}, "format": {"type": "string", "enum": ["text", "markdown"]}}}}
_CATALOGS = ((0, CATALOG[:4]), (12, CATALOG), (20, (CATALOG[0], _FETCH_FORMAT, *CATALOG[2:])))


def _listings(calls: list[CallRecord], salt: bytes, start: dt.datetime) -> list[CatalogRecord]:
    """One listing per generated session, stamped at its first call, of the catalog of its day."""
    built = [(day, tuple(catalog_tool(entry, salt) for entry in tools)) for day, tools in _CATALOGS]
    first: dict[str, str] = {}
    for call in calls:
        first.setdefault(call.session, call.ts)
    records = []
    for session, ts in first.items():
        day = (dt.datetime.fromisoformat(ts.replace("Z", "+00:00")) - start).days
        tools = [t for since, t in built if since <= day][-1]
        records.append(CatalogRecord(ts=ts, session=session, seq=0, server=GENERATED_SERVER, complete=True,
                                     tools=tools))
    return records


def generate_history(root: Path, *, today: dt.date | None = None) -> HistorySummary:
    """Write the generated history into the capture root (see the module docstring).

    Args:
        root: the capture root (its salt is created on demand, as for any capture).
        today: the day the history ends before (default: today, UTC).

    Returns:
        What was written.

    Raises:
        JournalError: the store could not be written.
    """
    end = today or CLOCK.today()
    first = end - dt.timedelta(days=DAYS)
    start = day_start(first)
    rng = random.Random(f"mcpeval-nb demo history {first.isoformat()}")
    salt = load_salt(root)
    calls = [r for day in range(DAYS) for r in _day_calls(rng, day, start + dt.timedelta(days=day), salt)]
    append_records(root, calls)
    append_records(root, _listings(calls, salt, start))
    points = _points(start)
    for point in points:
        record_trend(point, root=root)
    return HistorySummary(calls=len(calls), days=DAYS, points=len(points), first_day=first,
                          last_day=end - dt.timedelta(days=1))
