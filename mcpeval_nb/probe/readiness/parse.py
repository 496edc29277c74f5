"""Parsing a saved readiness object (SPEC 9.2): strict under ``mcpeval-standard/2``, display-only otherwise.

Every place a document can be wrong is named in the message (``<where> area 2 check 1: unknown reason``);
a value from the document never is.
"""

from __future__ import annotations

import copy
from typing import Any

from ...errors import DocumentError, ProfileError
from ...privacy.grammar import valid_tool
from ...privacy.records import MeasurementProfile
from .labels import AREAS, READINESS_REASONS, SCORED_STANDARDS, check_ids
from .model import Area, Check, Readiness, Surface

__all__ = ["parse_readiness"]


def _u64(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**64:
        raise DocumentError(f"{where} must be an unsigned integer")
    return value


def _obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DocumentError(f"{where} must be an object")
    return value


def _parse_check(raw: Any, area: str, where: str, ids: dict[str, tuple[str, ...]]) -> Check:
    d = _obj(raw, where)
    if d.get("id") not in ids[area]:
        raise DocumentError(f"{where}: unknown check id")
    if d.get("reason") not in READINESS_REASONS:
        raise DocumentError(f"{where}: unknown reason")
    score = _u64(d.get("score"), f"{where} score")
    if score > 99:
        raise DocumentError(f"{where} score must be below 100")
    observed = None if d.get("observed") is None else _u64(d.get("observed"), f"{where} observed")
    tool = d.get("tool")
    if tool is not None and not (isinstance(tool, str) and valid_tool(tool)):
        raise DocumentError(f"{where} tool is not a valid tool name")
    return Check(d["id"], d["reason"], score, observed, tool)


def _parse_area(raw: Any, where: str, ids: dict[str, tuple[str, ...]]) -> Area:
    d = _obj(raw, where)
    weights = dict(AREAS)
    name = d.get("name")
    if name not in weights:
        raise DocumentError(f"{where}: unknown area")
    if d.get("weight") != weights[name]:
        raise DocumentError(f"{where}: weight does not match the standard")
    score = _u64(d.get("score"), f"{where} score")
    if score > 100:
        raise DocumentError(f"{where} score must be at most 100")
    checks = d.get("checks", [])
    if not isinstance(checks, list):
        raise DocumentError(f"{where} checks must be an array")
    measurements = _obj(d.get("measurements", {}), f"{where} measurements")
    parsed = {k: _u64(v, f"{where} measurement") for k, v in measurements.items() if isinstance(k, str)}
    return Area(name, weights[name], score,
                tuple(_parse_check(c, name, f"{where} check {i + 1}", ids) for i, c in enumerate(checks)),
                parsed)


def parse_readiness(raw: Any, *, where: str = "readiness") -> Readiness:
    """Parse a report's readiness object; strict under the scored standards (``mcpeval-standard/2``,
    ``mcpeval-modern/1``: each with its own protocol check ids).

    Other standards keep only ``score`` and ``standard`` (display-only, not comparable) and the object
    itself, which ``Readiness.to_json`` writes back unchanged.

    Args:
        raw: the readiness object as read (a parsed JSON value).
        where: how messages name it (``<source>: readiness`` when read from a report).

    Returns:
        The readiness.

    Raises:
        DocumentError: an unknown area, check id or reason, a wrong type, an invalid measurement profile
            or an inconsistent read-only attestation; the message names the place, never the value.
    """
    d = _obj(raw, where)
    score = _u64(d.get("score"), f"{where} score")
    standard = d.get("standard")
    if not isinstance(standard, str):
        raise DocumentError(f"{where} standard must be a string")
    if score > 100:
        raise DocumentError(f"{where} score must be at most 100")
    attested = d.get("attested_read_only", False)
    if not isinstance(attested, bool):
        raise DocumentError(f"{where} attested_read_only must be a boolean")
    profile = None
    if d.get("measurement_profile") is not None:
        try:
            profile = MeasurementProfile.from_dict(d["measurement_profile"])
        except ProfileError as exc:
            raise DocumentError(f"{where}: {exc}") from None
        if profile.attested_read_only != attested:
            raise DocumentError(f"{where}: inconsistent read-only attestation")
    if standard not in SCORED_STANDARDS:
        return Readiness(score, (), Surface(0, 0, 0, 0), attested, profile, standard, copy.deepcopy(d))
    areas_raw = d.get("areas")
    if not isinstance(areas_raw, list):
        raise DocumentError(f"{where} areas must be an array")
    ids = check_ids(standard)
    areas = tuple(_parse_area(a, f"{where} area {i + 1}", ids) for i, a in enumerate(areas_raw))
    if sorted(a.name for a in areas) != sorted(n for n, _ in AREAS):
        raise DocumentError(f"{where} must score each of the six areas once")
    s = _obj(d.get("surface"), f"{where} surface")
    surface = Surface(*(_u64(s.get(k), f"{where} surface {k}") for k in ("tools", "read_only", "writers",
                                                                           "exercised")))
    return Readiness(score, areas, surface, attested, profile, standard)
