"""The one clock: what time it is, how a time is written, and how a time or a day is read (SPEC 0.6, 2.1).

Like structlog's ``TimeStamper``, one configured owner stamps every record: ``CLOCK`` reads the system's
UTC time (``time.time_ns``) unless a ``Clock`` with another source is passed in.  Stamps are written as
the Rust tool writes them (``%Y-%m-%dT%H:%M:%S.mmmZ``, exactly three fractional digits) and read as
chrono's ``parse_from_rfc3339`` reads them (ASCII digits only).  A journal's day is the first 10 bytes of
its record's sanitised stamp.  Days and times a user types (``--since``, ``--before``, ``since=``) are
read here, with one error text: ``<what> must be a day, YYYY-MM-DD`` (``... or an RFC 3339 time`` where a
time is also accepted).
"""

from __future__ import annotations

import datetime as _dt
import re
import time
from collections.abc import Callable

from .errors import UsageError

__all__ = [
    "CLOCK",
    "Clock",
    "Moment",
    "day_of",
    "day_start",
    "format_ms",
    "format_ms_auto",
    "is_day",
    "now_ms",
    "now_ts",
    "parse_day",
    "parse_moment",
    "ts_millis",
    "valid_rfc3339",
]

# ASCII digits only (chrono's scanner): Python's str \d would also accept e.g. Arabic-Indic digits.
_RFC3339_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))", re.ASCII
)
_DAY_RE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
#: A day or a time a user may give: text (``YYYY-MM-DD`` or RFC 3339), a ``datetime`` (naive = UTC), a
#: ``date`` (UTC midnight), or None.
Moment = str | _dt.datetime | _dt.date | None


class Clock:
    """Where "now" comes from, and the stamps made of it.

    Args:
        source: nanoseconds since the Unix epoch (default ``time.time_ns``).
    """

    def __init__(self, source: Callable[[], int] = time.time_ns) -> None:
        self.source = source

    def now_ms(self) -> int:
        """Milliseconds since the Unix epoch."""
        return self.source() // 1_000_000

    def now_ts(self) -> str:
        """Now as a record stamp, ``%Y-%m-%dT%H:%M:%S.mmmZ`` (UTC)."""
        return format_ms(self.now_ms())

    def today(self) -> _dt.date:
        """Today's UTC day."""
        return _dt.datetime.fromtimestamp(self.now_ms() // 1000, _dt.UTC).date()


#: The process's clock: every stamp the package writes comes from here.
CLOCK = Clock()


def now_ms() -> int:
    """Milliseconds since the Unix epoch (``CLOCK``)."""
    return CLOCK.now_ms()


def now_ts(now: _dt.datetime | None = None) -> str:
    """``now`` (default: ``CLOCK``'s now) as ``%Y-%m-%dT%H:%M:%S.mmmZ`` in UTC (exactly three fractional
    digits)."""
    if now is None:
        return CLOCK.now_ts()
    now = now.astimezone(_dt.UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def format_ms(ms: int) -> str:
    """Milliseconds since the epoch as ``%Y-%m-%dT%H:%M:%S.mmmZ`` (UTC, exactly three fractional digits)."""
    when = _dt.datetime.fromtimestamp(ms // 1000, _dt.UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def format_ms_auto(ms: int) -> str:
    """Milliseconds since the epoch as RFC 3339 UTC with as many fractional digits as needed, 0 or 3
    (chrono's ``SecondsFormat::AutoSi``, SPEC 0.6)."""
    text = format_ms(ms)
    return text if ms % 1000 else text[:-5] + "Z"


def valid_rfc3339(value: object) -> bool:
    """True when chrono's ``parse_from_rfc3339`` would accept ``value``."""
    if not isinstance(value, str):
        return False
    m = _RFC3339_RE.fullmatch(value)
    if m is None:
        return False
    hour, minute, second = (int(m.group(i)) for i in range(4, 7))
    if m.group(8) and (int(m.group(9)) > 23 or int(m.group(10)) > 59):
        return False
    if hour > 23 or minute > 59 or second > 60:
        return False
    return is_day(m.group(0)[:10])


def ts_millis(ts: str) -> int | None:
    """Milliseconds since the epoch (UTC) of a sanitised timestamp; None for ``unknown``.

    Fractions beyond milliseconds are truncated; a leap second (``:60``) counts as ``:59.999``.
    """
    m = _RFC3339_RE.fullmatch(ts)
    if m is None or not valid_rfc3339(ts):
        return None
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    frac = int((m.group(7) or "0")[:3].ljust(3, "0"))
    if second == 60:
        second, frac = 59, 999
    when = _dt.datetime(year, month, day, hour, minute, second, tzinfo=_dt.UTC)
    if m.group(8):
        offset = _dt.timedelta(hours=int(m.group(9)), minutes=int(m.group(10)))
        when = when - offset if m.group(8) == "+" else when + offset
    delta = when - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1000 + frac


def day_of(ts: str) -> str:
    """The journal day of a sanitised timestamp: its first 10 bytes, or ``unknown``."""
    head = ts[:10]
    return head if _DAY_RE.fullmatch(head) else "unknown"


def is_day(text: str) -> bool:
    """Whether ``text`` is a calendar day written ``YYYY-MM-DD`` (ASCII digits)."""
    if _DAY_RE.fullmatch(text) is None:
        return False
    try:
        _dt.date(int(text[:4]), int(text[5:7]), int(text[8:10]))
    except ValueError:
        return False
    return True


def day_start(day: _dt.date) -> _dt.datetime:
    """UTC midnight at the start of ``day``."""
    return _dt.datetime.combine(day, _dt.time(), _dt.UTC)


def parse_day(value: str | _dt.date | None, *, what: str) -> _dt.date | None:
    """A day a user gave: a ``date``, or text ``YYYY-MM-DD`` (None stays None).

    Raises:
        UsageError: ``<what> must be a day, YYYY-MM-DD``.
    """
    if isinstance(value, _dt.datetime):
        return value.date()
    if value is None or isinstance(value, _dt.date):
        return value
    if not (isinstance(value, str) and is_day(value)):
        raise UsageError(f"{what} must be a day, YYYY-MM-DD")
    return _dt.date.fromisoformat(value)


def parse_moment(value: Moment, *, what: str) -> int | None:
    """Milliseconds since the epoch of a day (UTC midnight) or a time a user gave (None stays None).

    Args:
        value: ``YYYY-MM-DD``, an RFC 3339 time, a ``datetime`` (naive = UTC) or a ``date``.
        what: how the message names the option.

    Raises:
        UsageError: ``<what> must be a day, YYYY-MM-DD, or an RFC 3339 time``.
    """
    if value is None:
        return None
    if isinstance(value, str):
        ms = ts_millis(value) if "T" in value or "t" in value or " " in value else None
        if ms is None and not is_day(value):
            raise UsageError(f"{what} must be a day, YYYY-MM-DD, or an RFC 3339 time")
        return ms if ms is not None else int(day_start(_dt.date.fromisoformat(value)).timestamp() * 1000)
    if not isinstance(value, _dt.datetime):
        value = day_start(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.UTC)
    return int(value.timestamp() * 1000)
