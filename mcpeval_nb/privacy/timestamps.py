"""Timestamps as the Rust tool writes and checks them (SPEC 0.6, 2.1)."""

from __future__ import annotations

import datetime as _dt
import re

__all__ = ["day_of", "now_ts", "valid_rfc3339"]

# ASCII digits only (chrono's scanner): Python's str \d would also accept e.g. Arabic-Indic digits.
_RFC3339_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))", re.ASCII
)
_DAY_RE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)


def now_ts(now: _dt.datetime | None = None) -> str:
    """UTC now as ``%Y-%m-%dT%H:%M:%S.mmmZ`` (exactly three fractional digits)."""
    now = now or _dt.datetime.now(_dt.UTC)
    now = now.astimezone(_dt.UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def valid_rfc3339(value: object) -> bool:
    """True when chrono's ``parse_from_rfc3339`` would accept ``value``."""
    if not isinstance(value, str):
        return False
    m = _RFC3339_RE.fullmatch(value)
    if m is None:
        return False
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    if m.group(8) and (int(m.group(9)) > 23 or int(m.group(10)) > 59):
        return False
    if hour > 23 or minute > 59 or second > 60:
        return False
    try:
        _dt.date(year, month, day)
    except ValueError:
        return False
    return True


def day_of(ts: str) -> str:
    """The journal day of a sanitised timestamp: its first 10 bytes, or ``unknown``."""
    head = ts[:10]
    return head if _DAY_RE.fullmatch(head) else "unknown"
