"""Readiness history: trend points per server with the delta rules of SPEC 7.3."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import pyarrow as pa

from ..jsonfmt import dumps
from ..privacy.records import MeasurementProfile, TrendPoint
from ._frames import as_frame, to_table

__all__ = ["HISTORY_SCHEMA", "readiness_history", "trend_delta"]

#: The columns of ``readiness_history``.
HISTORY_SCHEMA = pa.schema([("ts", pa.timestamp("ms", tz="UTC")), ("server", pa.string()),
                           ("passed", pa.bool_()), ("cases_total", pa.uint64()),
                           ("cases_passed", pa.uint64()), ("score", pa.uint64()),
                           ("manifest_sha256", pa.string()), ("standard", pa.string()),
                           ("measurement_profile", pa.string()), ("delta", pa.string()),
                           ("standard_changed", pa.bool_()), ("profile_changed", pa.bool_()),
                           ("manifest_changed", pa.bool_())])
_COLS = ("ts", "server", "passed", "cases_total", "cases_passed", "score", "manifest_sha256", "standard",
         "measurement_profile")


def _get(point: TrendPoint | Mapping[str, Any], key: str) -> Any:
    value = getattr(point, key) if isinstance(point, TrendPoint) else point.get(key)
    return None if value is None or (isinstance(value, float) and pd.isna(value)) else value


def _profile(point: TrendPoint | Mapping[str, Any]) -> str | None:
    value = _get(point, "measurement_profile")
    if isinstance(value, MeasurementProfile):
        return dumps(value.to_dict(), sort_keys=False)
    if isinstance(value, Mapping):
        return dumps(dict(value), sort_keys=False)
    return value if isinstance(value, str) else None


def trend_delta(previous: TrendPoint | Mapping[str, Any] | None,
                current: TrendPoint | Mapping[str, Any]) -> str:
    """The delta part of a trend line against the previous point of the same server (SPEC 7.3).

    Args:
        previous: the previous point (a ``TrendPoint`` or a row mapping), or None for the first point.
        current: the point being rendered.

    Returns:
        ``""`` for the first point; otherwise, by the first rule that applies: ``standard changed``,
        ``measurement profile unavailable``, ``measurement profile changed``, the signed score delta
        (``+0``, ``-1``, ``+5``) when a standard is present or the manifests are equal, else
        ``manifest changed``.  The trends line puts one space before it.
    """
    if previous is None:
        return ""
    standard = _get(current, "standard")
    if _get(previous, "standard") != standard:
        return "standard changed"
    before, after = _profile(previous), _profile(current)
    if standard is not None and (before is None or after is None):
        return "measurement profile unavailable"
    if before != after:
        return "measurement profile changed"
    if standard is not None or _get(previous, "manifest_sha256") == _get(current, "manifest_sha256"):
        return f"{int(_get(current, 'score') or 0) - int(_get(previous, 'score') or 0):+d}"
    return "manifest changed"


def readiness_history(trends: Any, *, last: int | None = None) -> pa.Table:
    """Trend points per server, oldest first, with their delta against the previous shown point.

    Args:
        trends: the trends table (or a frame with its columns).
        last: keep only the newest ``last`` points per server (``0`` keeps none).

    Returns:
        The trend columns plus ``delta`` (``trend_delta`` text) and the flags ``standard_changed``,
        ``profile_changed`` (changed or unavailable) and ``manifest_changed``; grouped by server in
        ascending order, oldest first (unknown timestamps last).
    """
    frame = as_frame(trends, _COLS).reset_index(drop=True)
    frame = frame.sort_values(["server", "ts"], kind="stable", na_position="last")
    if last is not None:
        frame = frame.groupby("server", sort=False).tail(max(0, last)) if last > 0 else frame.iloc[0:0]
    rows: list[dict[str, Any]] = [{str(k): v for k, v in r.items()} for r in frame.to_dict("records")]
    deltas, std, prof, man = [], [], [], []
    prev: dict[str, Any] | None = None
    for row in rows:
        same = prev if prev is not None and prev["server"] == row["server"] else None
        delta = trend_delta(same, row)
        deltas.append(delta)
        std.append(delta == "standard changed")
        prof.append(delta.startswith("measurement profile"))
        man.append(same is not None and _get(same, "manifest_sha256") != _get(row, "manifest_sha256"))
        prev = row
    frame = frame.assign(delta=deltas, standard_changed=std, profile_changed=prof, manifest_changed=man)
    return to_table(frame, HISTORY_SCHEMA)
