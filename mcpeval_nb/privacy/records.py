"""Journal record types and their byte-exact encoders (SPEC 2, 5, 7.1-7.2).

Every record type has ``sanitized()`` (its chain of store-side read rules from ``read_rules``,
idempotent), ``to_dict()`` (struct declaration order, as serde's derived ``Serialize`` writes it) and
``encode()`` (compact serde_json text, no newline).  ``from_dict`` reads both the legacy form and the
newer identity form and refuses wrong JSON types the way serde's derived ``Deserialize`` does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, ClassVar

from ..clock import day_of
from ..errors import ProfileError, UsageError
from ..jsonfmt import dumps
from .errorinfo import sanitize_error
from .grammar import valid_tool
from .read_rules import (
    ANNOTATION_KINDS,
    ANNOTATION_RULES,
    CALL_RULES,
    TREND_RULES,
    UUID_RE,
    apply_rules,
    sort_keys,
)

__all__ = [
    "ANNOTATION_KINDS",
    "AnnotationRecord",
    "CallRecord",
    "Identity",
    "MeasurementProfile",
    "TrendPoint",
    "check_unsigned",
    "is_u64",
]


def is_u64(value: Any) -> bool:
    """Whether ``value`` is what serde reads as a ``u64``: an ``int`` (never a bool or a float, not even
    ``1.0`` or ``-0.0``) in ``[0, 2**64)``.  The one integer rule of the writers and the readers."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**64


def check_unsigned(record: Any) -> None:
    """Refuse a record whose unsigned fields (``record.UNSIGNED``) would not read back (SPEC 2.1, 5, 7.1).

    A float ``seq`` (``1.0``, ``-0.0``, ``1e19``) would be written as a JSON float that every reader
    refuses, so the writer refuses it first: nothing is written.

    Raises:
        UsageError: naming the record type and the field, never the value.
    """
    for name in getattr(record, "UNSIGNED", ()):
        value = getattr(record, name)
        if value is not None and not is_u64(value):
            raise UsageError(f"{type(record).__name__} field `{name}` must be an unsigned 64-bit integer "
                             "(not a float or a bool); nothing written")


def _u64(d: dict[str, Any], key: str, *, required: bool = True) -> int | None:
    if key not in d or d[key] is None:
        if required:
            raise ValueError(f"missing field `{key}`")
        return None
    v = d[key]
    if not is_u64(v):
        raise ValueError(f"field `{key}` must be an unsigned integer")
    return int(v)


def _str(d: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    if key not in d or d[key] is None:
        if required:
            raise ValueError(f"missing field `{key}`")
        return None
    if not isinstance(d[key], str):
        raise ValueError(f"field `{key}` must be a string")
    return str(d[key])


def _bool(d: dict[str, Any], key: str) -> bool:
    if not isinstance(d.get(key), bool):
        raise ValueError(f"field `{key}` must be a boolean")
    return bool(d[key])


@dataclass(frozen=True)
class Identity:
    """Newer records' event identity: the capture (process or probe run) and the event."""

    capture_id: str
    event_id: str

    @classmethod
    def from_record(cls, d: dict[str, Any]) -> Identity | None:
        """Read the nested ``identity`` object or the flattened ``capture_id``/``event_id`` keys."""
        src = d.get("identity")
        if src is None and ("capture_id" in d or "event_id" in d):
            src = {"capture_id": d.get("capture_id"), "event_id": d.get("event_id")}
        if src is None:
            return None
        if not isinstance(src, dict):
            raise ValueError("field `identity` must be an object")
        cap, evt = src.get("capture_id"), src.get("event_id")
        if not (isinstance(cap, str) and isinstance(evt, str)
                and UUID_RE.fullmatch(cap.lower()) and UUID_RE.fullmatch(evt.lower())):
            raise ValueError("identity must hold two UUIDs")
        return cls(cap.lower(), evt.lower())


@dataclass(frozen=True, kw_only=True)
class CallRecord:
    """One line of ``calls-<day>.jsonl`` (SPEC 2.1), extended by ``ext`` (``privacy.ext``).

    ``args`` None means absent; ``error`` is an ErrorInfo dict or None; ``ext`` is the 2026-07-28
    extension object or None (then the line is exactly SPEC's).
    """

    #: The fields stored as JSON unsigned integers (``check_unsigned``).
    UNSIGNED: ClassVar[tuple[str, ...]] = ("seq", "latency_ms", "shim_self_us")

    ts: str
    session: str
    seq: int
    server: str
    method: str
    outcome: str
    shim_self_us: int = 0
    kind: str = "real"
    tool: str | None = None
    args: Any = None
    latency_ms: int | None = None
    error: dict[str, Any] | None = None
    identity: Identity | None = None
    ext: dict[str, Any] | None = None

    def sanitized(self) -> CallRecord:
        """Apply SPEC 2.2 in order (``read_rules.CALL_RULES``): ts, session, server, method, tool, args,
        outcome, kind, error; then ``ext``."""
        clean: CallRecord = apply_rules(CALL_RULES, self)
        return clean

    @property
    def day(self) -> str:
        """The journal day this record belongs to (from its sanitised ``ts``)."""
        return day_of(self.ts)

    def to_dict(self) -> dict[str, Any]:
        """The record in struct declaration order, absent optionals omitted."""
        d: dict[str, Any] = {}
        if self.identity is not None:
            d["identity"] = {"capture_id": self.identity.capture_id, "event_id": self.identity.event_id}
        d.update(ts=self.ts, session=self.session, seq=self.seq, server=self.server, method=self.method)
        if self.tool is not None:
            d["tool"] = self.tool
        if self.args is not None:
            d["args"] = sort_keys(self.args)
        if self.latency_ms is not None:
            d["latency_ms"] = self.latency_ms
        d["outcome"] = self.outcome
        if self.error is not None:
            d["error"] = self.error
        d["shim_self_us"] = self.shim_self_us
        d["kind"] = self.kind
        if self.ext is not None:
            d["ext"] = sort_keys(self.ext)
        return d

    def encode(self) -> str:
        """Compact serde_json text of the record as it is (call ``sanitized()`` first to store it)."""
        return dumps(self.to_dict(), sort_keys=False)

    @classmethod
    def from_dict(cls, d: Any) -> CallRecord:
        """Build a record from parsed JSON, legacy or identity form.

        Raises:
            ValueError: a required field is missing or has the wrong JSON type.
        """
        if not isinstance(d, dict):
            raise ValueError("record must be a JSON object")
        error = d.get("error")
        if error is not None and not isinstance(error, dict):
            raise ValueError("field `error` must be an object")
        if error is not None:
            try:
                sanitize_error(error)
            except TypeError as exc:
                raise ValueError(str(exc)) from None
        return cls(
            identity=Identity.from_record(d), ts=_str(d, "ts") or "", session=_str(d, "session") or "",
            seq=_u64(d, "seq") or 0, server=_str(d, "server") or "", method=_str(d, "method") or "",
            tool=_str(d, "tool", required=False), args=d.get("args"),
            latency_ms=_u64(d, "latency_ms", required=False), outcome=_str(d, "outcome") or "",
            error=error, shim_self_us=_u64(d, "shim_self_us") or 0, kind=_str(d, "kind") or "",
            ext=d.get("ext"),  # any JSON value: the read rule keeps what it may (SPEC's reader ignores it)
        )


@dataclass(frozen=True, kw_only=True)
class AnnotationRecord:
    """One line of ``annotations-<day>.jsonl`` (SPEC 5).

    ``seq`` and ``event_id`` are both optional on read (newer records may target an event id).
    """

    UNSIGNED: ClassVar[tuple[str, ...]] = ("seq",)

    ts: str
    session: str
    kind: str
    note: str = ""
    seq: int | None = None
    event_id: str | None = None

    def sanitized(self) -> AnnotationRecord:
        """Hash the session, coerce an unknown kind, strip controls, cap the note, check the event id
        (``read_rules.ANNOTATION_RULES``)."""
        clean: AnnotationRecord = apply_rules(ANNOTATION_RULES, self)
        return clean

    @property
    def day(self) -> str:
        """The journal day of the annotation."""
        return day_of(self.ts)

    def to_dict(self) -> dict[str, Any]:
        """Struct order ``ts, session, seq, kind, note`` (``event_id`` after ``seq`` when present)."""
        d: dict[str, Any] = {"ts": self.ts, "session": self.session}
        if self.seq is not None:
            d["seq"] = self.seq
        if self.event_id is not None:
            d["event_id"] = self.event_id
        d["kind"] = self.kind
        d["note"] = self.note
        return d

    def encode(self) -> str:
        """Compact serde_json text of the annotation."""
        return dumps(self.to_dict(), sort_keys=False)

    @classmethod
    def from_dict(cls, d: Any) -> AnnotationRecord:
        """Build an annotation from parsed JSON; raises ValueError on wrong types."""
        if not isinstance(d, dict):
            raise ValueError("record must be a JSON object")
        return cls(ts=_str(d, "ts") or "", session=_str(d, "session") or "",
                   seq=_u64(d, "seq", required=False), event_id=_str(d, "event_id", required=False),
                   kind=_str(d, "kind") or "", note=_str(d, "note", required=False) or "")


_VERSION_RE = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.\-]+)?(?:\+[0-9A-Za-z.\-]+)?")
_IDENT_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.:\-]{0,63}")
PROFILE_SCHEMA = "mcpeval.measurement-profile/v1"
_PROFILE_KEYS = ("schema", "evaluator_version", "platform", "architecture", "client_capabilities",
                 "attested_read_only", "skip_tools", "call_timeout_ms", "repeats")


@dataclass(frozen=True, kw_only=True)
class MeasurementProfile:
    """The conditions a readiness score was measured under (SPEC 7.2)."""

    evaluator_version: str
    platform: str
    architecture: str
    attested_read_only: bool = False
    skip_tools: tuple[str, ...] = ()
    call_timeout_ms: int = 15000
    repeats: int = 3
    client_capabilities: str = "none"
    schema: str = PROFILE_SCHEMA

    def validate(self) -> MeasurementProfile:
        """Check the four rules of SPEC 7.2 in order; returns self.

        Raises:
            ProfileError: with SPEC's message, never the offending value.
        """
        if self.schema != PROFILE_SCHEMA:
            raise ProfileError("unsupported measurement profile")
        v = self.evaluator_version
        if not isinstance(v, str) or len(v.encode()) > 64 or not _VERSION_RE.fullmatch(v):
            raise ProfileError("invalid measurement evaluator version")
        if not (isinstance(self.platform, str) and _IDENT_RE.fullmatch(self.platform)
                and isinstance(self.architecture, str) and _IDENT_RE.fullmatch(self.architecture)
                and self.client_capabilities == "none" and _pos(self.call_timeout_ms)
                and _pos(self.repeats)):
            raise ProfileError("invalid measurement conditions")
        tools = self.skip_tools
        if not all(valid_tool(t) for t in tools) or any(a >= b for a, b in pairwise(tools)):
            raise ProfileError("invalid measurement skip tools")
        return self

    def to_dict(self) -> dict[str, Any]:
        """Struct order of SPEC 7.2."""
        return {"schema": self.schema, "evaluator_version": self.evaluator_version,
                "platform": self.platform, "architecture": self.architecture,
                "client_capabilities": self.client_capabilities,
                "attested_read_only": self.attested_read_only, "skip_tools": list(self.skip_tools),
                "call_timeout_ms": self.call_timeout_ms, "repeats": self.repeats}

    @classmethod
    def from_dict(cls, d: Any) -> MeasurementProfile:
        """Parse and validate (unknown fields denied).

        Raises:
            ProfileError: the object is malformed or fails a rule.
        """
        if not isinstance(d, dict) or set(d) - set(_PROFILE_KEYS) or set(_PROFILE_KEYS) - set(d):
            raise ProfileError("unsupported measurement profile")
        if not isinstance(d["skip_tools"], list) or not isinstance(d["attested_read_only"], bool):
            raise ProfileError("invalid measurement conditions")
        if not all(isinstance(x, str) for x in d["skip_tools"]):
            raise ProfileError("invalid measurement skip tools")
        return cls(schema=d["schema"], evaluator_version=d["evaluator_version"], platform=d["platform"],
                   architecture=d["architecture"], client_capabilities=d["client_capabilities"],
                   attested_read_only=d["attested_read_only"], skip_tools=tuple(d["skip_tools"]),
                   call_timeout_ms=d["call_timeout_ms"], repeats=d["repeats"]).validate()


def _pos(v: Any) -> bool:
    return is_u64(v) and v > 0


@dataclass(frozen=True, kw_only=True)
class TrendPoint:
    """One line of ``store/probes/history.jsonl`` (SPEC 7.1)."""

    UNSIGNED: ClassVar[tuple[str, ...]] = ("cases_total", "cases_passed", "score")

    ts: str
    server: str
    passed: bool
    cases_total: int
    cases_passed: int
    score: int
    manifest_sha256: str | None = None
    standard: str | None = None
    measurement_profile: MeasurementProfile | None = field(default=None)

    def sanitized(self) -> TrendPoint:
        """Validate the profile (raises ProfileError), normalise the timestamp, label, hash and standard
        (``read_rules.TREND_RULES``)."""
        clean: TrendPoint = apply_rules(TREND_RULES, self)
        return clean

    def to_dict(self) -> dict[str, Any]:
        """Struct order of SPEC 7.1, the three optional fields omitted when absent."""
        d: dict[str, Any] = {"ts": self.ts, "server": self.server, "passed": self.passed,
                             "cases_total": self.cases_total, "cases_passed": self.cases_passed,
                             "score": self.score}
        if self.manifest_sha256 is not None:
            d["manifest_sha256"] = self.manifest_sha256
        if self.standard is not None:
            d["standard"] = self.standard
        if self.measurement_profile is not None:
            d["measurement_profile"] = self.measurement_profile.to_dict()
        return d

    def encode(self) -> str:
        """Compact serde_json text of the trend point."""
        return dumps(self.to_dict(), sort_keys=False)

    @classmethod
    def from_dict(cls, d: Any) -> TrendPoint:
        """Parse a trend point; older lines without the optional fields load.

        Raises:
            ValueError: wrong types; ProfileError: an invalid measurement profile.
        """
        if not isinstance(d, dict):
            raise ValueError("record must be a JSON object")
        profile = d.get("measurement_profile")
        return cls(ts=_str(d, "ts") or "", server=_str(d, "server") or "", passed=_bool(d, "passed"),
                   cases_total=_u64(d, "cases_total") or 0, cases_passed=_u64(d, "cases_passed") or 0,
                   score=_u64(d, "score") or 0, manifest_sha256=_str(d, "manifest_sha256", required=False),
                   standard=_str(d, "standard", required=False),
                   measurement_profile=None if profile is None else MeasurementProfile.from_dict(profile))
