"""A capture root whose journals were hand-edited to carry unique marker strings.

``canary_store`` writes lines directly (not through the writer, which would sanitise them), so every
place a foreign or edited journal could smuggle content holds a marker: timestamps, sessions, labels,
methods, tools, argument values, outcomes, kinds, every error field and message, unknown fields, and
whole lines that are not valid records.  Every marker contains ``!``, which no label, method, tool,
identifier or canonical token grammar admits, so a correct reader must drop or bucket all of them.
Argument *keys* and annotation notes are kept by the format itself (SPEC 3.6, 5) and carry no marker.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..root import Root, RootLike
from ..root.layout import annotations_path, calls_path, history_path

__all__ = ["CanaryStore", "canary_store"]

_SESSION = "session:" + "5a" * 32
_DAY = "2026-08-04"


@dataclass(frozen=True)
class CanaryStore:
    """What ``canary_store`` wrote.

    Attributes:
        root: the capture root.
        markers: every marker string written; none may appear in any output.
        invalid_lines: how many lines are not valid records (load with ``errors="report"``).
    """

    root: Path
    markers: tuple[str, ...]
    invalid_lines: int


def _call(seq: int, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"ts": f"{_DAY}T10:00:0{seq % 10}.000Z", "session": _SESSION, "seq": seq,
                            "server": "canary-demo", "method": "tools/call", "tool": "lookup",
                            "args": {"q": "str<32"}, "latency_ms": 10 + seq, "outcome": "ok",
                            "shim_self_us": 1, "kind": "real"}
    base.update(fields)
    return base


def _lines(m: dict[str, str], invalid: bool) -> dict[str, list[dict[str, Any] | str]]:
    calls: list[dict[str, Any] | str] = [
        _call(1), _call(2, outcome="error", error={"code": -32000, "template": "{message}",
                                                   "template_id": "0123456789abcdef"}),
        _call(3, ts=m["ts"], session=m["session"], server=m["server"], method=m["method"], tool=m["tool"]),
        _call(4, args={"q": m["arg"], "nested": {"deep": [m["arg_nested"]]}, "n": m["arg_number"]}),
        _call(5, outcome=m["outcome"], kind=m["kind"], extra=m["extra"]),
        _call(6, outcome="error", error={"code": m["code"], "message": m["message"], "data": m["data"],
                                         "layer": m["layer"], "kind": m["error_kind"],
                                         "template": m["template"], "template_id": m["template_id"]}),
        _call(7, outcome="error", error={"code": {m["code_key"]: 1}, "message": m["message"]}),
    ]
    notes: list[dict[str, Any] | str] = [
        {"ts": f"{_DAY}T11:00:00.000Z", "session": _SESSION, "seq": 1, "kind": "false-success", "note": "ok"},
        {"ts": m["note_ts"], "session": m["note_session"], "seq": 2, "event_id": m["event_id"],
         "kind": m["note_kind"], "note": "edited", "extra": m["note_extra"]},
    ]
    points: list[dict[str, Any] | str] = [
        {"ts": f"{_DAY}T12:00:00.000Z", "server": "canary-demo", "passed": True, "cases_total": 2,
         "cases_passed": 2, "score": 80},
        {"ts": m["trend_ts"], "server": m["trend_server"], "passed": False, "cases_total": 2,
         "cases_passed": 1, "score": 70, "manifest_sha256": m["manifest"], "standard": m["standard"],
         "extra": m["trend_extra"]},
    ]
    if invalid:
        calls += [json.dumps({"canary": m["invalid_call"]}), "{" + m["broken_json"],
                  {**_call(8), "seq": m["wrong_type"]}]
        notes.append(json.dumps({"session": m["invalid_note"]}))
        points.append({"ts": f"{_DAY}T13:00:00.000Z", "server": "canary-demo", "passed": True,
                       "cases_total": 1, "cases_passed": 1, "score": 1,
                       "measurement_profile": {"schema": m["profile"]}})
    return {"calls": calls, "annotations": notes, "trends": points}


def canary_store(root: RootLike, *, invalid_lines: bool = True, tag: str = "c4n4ry") -> CanaryStore:
    """Write hand-edited journals carrying unique markers under ``root``.

    Args:
        root: the capture root (journals are appended to).
        invalid_lines: also write lines that are not valid records (they hold markers too).
        tag: distinguishes the markers of several canary stores.

    Returns:
        A ``CanaryStore`` with the marker strings.
    """
    root = Root.of(root, check=False).path
    places = ("ts", "session", "server", "method", "tool", "arg", "arg_nested", "arg_number", "outcome",
              "kind", "extra", "code", "message", "data", "layer", "error_kind", "template", "template_id",
              "code_key", "note_ts", "note_session", "event_id", "note_kind", "note_extra", "trend_ts",
              "trend_server", "manifest", "standard", "trend_extra", "invalid_call", "broken_json",
              "wrong_type", "invalid_note", "profile")
    markers = {p: f"CANARY!{p}!{tag}" for p in places}
    groups = _lines(markers, invalid_lines)
    paths = {"calls": calls_path(root, _DAY), "annotations": annotations_path(root, _DAY),
             "trends": history_path(root)}
    for kind, rows in groups.items():
        paths[kind].parent.mkdir(parents=True, exist_ok=True)
        with paths[kind].open("a", encoding="utf-8") as fh:
            for row in rows:
                fh.write((row if isinstance(row, str) else json.dumps(row, ensure_ascii=False)) + "\n")
    used = tuple(v for k, v in markers.items() if invalid_lines or k not in (
        "invalid_call", "broken_json", "wrong_type", "invalid_note", "profile"))
    return CanaryStore(root=root, markers=used, invalid_lines=5 if invalid_lines else 0)
