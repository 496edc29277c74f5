"""The mock profile: a recorded server's behaviour as a small, content-free JSON document (docs/mock.md).

``MockProfile`` holds exactly the distributions the mock draws from and replay compares with: per tool
its name, schema skeleton and hints, outcome counts (``ok``, ``tool-error`` with its template id,
``rpc-error`` with its code and template id), the same per recorded argument shape, latency quantiles
with bootstrap intervals of p50 and p95, and result size classes; and how the server answered unknown
tools.  ``to_json`` is the document (``mcpeval-nb.mock-profile/v1``, published as
``schemas/mock-profile.schema.json``); ``parse_profile`` reads one back through the same read rules
(``sanitized``), so a hand-edited profile can carry no text: labels outside their grammar, template ids
that are not 16 hex digits, shapes with a key outside the label grammar or a non-token value, and
skeleton parts outside the catalog's rules are dropped or counted, as the journals' read rules do.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..errors import DocumentError
from ..jsonfmt import JSONFormatError, dumps, loads
from ..privacy.catalog_schema import skeleton_of, valid_label
from ..privacy.grammar import valid_server, valid_template_id
from ..privacy.shape import is_canonical_token, sanitize_shape
from ..schemacheck import packaged_checker, packaged_text
from ..wilson import wilson_interval

__all__ = [
    "HINTS",
    "OUTCOME_KINDS",
    "PROFILE_SCHEMA",
    "LatencyProfile",
    "MockProfile",
    "OutcomeCount",
    "ShapeProfile",
    "SizeClass",
    "ToolProfile",
    "load_profile",
    "parse_profile",
    "profile_schema_text",
    "clean_shape",
    "merge_outcomes",
    "shape_key",
]

PROFILE_SCHEMA = "mcpeval-nb.mock-profile/v1"
#: The outcome kinds of a recorded call, in document order.
OUTCOME_KINDS = ("ok", "tool-error", "rpc-error")
#: The four annotation hints a tool may carry.
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
_I64 = 2**63
_MAX_PROFILE_BYTES = 16 * 1024 * 1024
_FLAGGED = ("password",)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _I64 else 0


def _ms(value: Any) -> float | None:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if number and math.isfinite(value) and value >= 0 else None


def _code(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and -_I64 <= value < _I64 else None


def _token_ok(value: Any) -> bool:
    """A shape value a profile may keep: tokens and structure only, keys and enums that are labels."""
    if isinstance(value, str):
        return is_canonical_token(value) and not any(w in value.lower() for w in _FLAGGED)
    if not isinstance(value, dict):
        return False
    for key, sub in value.items():
        if key in ("array", "object") and isinstance(sub, int) and not isinstance(sub, bool):
            continue
        if not (valid_label(key) and _token_ok(sub)):
            return False
    return True


def clean_shape(shape: Any) -> tuple[bool, Any]:
    """``(kept, shape)``: a recorded argument shape through the store-side rule (``sanitize_shape``),
    kept only when every key is a label and every value a token (None: a call without arguments)."""
    if shape is None:
        return True, None
    cleaned = sanitize_shape(shape)
    return (isinstance(cleaned, dict) and _token_ok(cleaned)), cleaned


def shape_key(shape: Any) -> str:
    """The canonical text of a shape (how shapes are matched): compact, key-sorted JSON."""
    return dumps(shape, sort_keys=True)


@dataclass(frozen=True)
class OutcomeCount:
    """How often a recorded call ended one way.

    Attributes:
        outcome: ``ok``, ``tool-error`` (an ``isError`` result) or ``rpc-error`` (a JSON-RPC error).
        count: recorded calls. code: the JSON-RPC code of an ``rpc-error`` (None when unknown or not one).
        template_id: the salted template id of the error text (None when ok or textless).
    """

    outcome: str
    count: int
    code: int | None = None
    template_id: str | None = None

    @property
    def key(self) -> tuple[str, int | None, str | None]:
        """What identifies the outcome: kind, code, template."""
        return self.outcome, self.code, self.template_id

    def to_json(self) -> dict[str, Any]:
        """The outcome object."""
        return {"outcome": self.outcome, "code": self.code, "template_id": self.template_id,
                "count": self.count}

    @classmethod
    def from_json(cls, d: Any) -> OutcomeCount | None:
        """Read through the read rules (None: not an outcome this format knows)."""
        if not isinstance(d, dict) or d.get("outcome") not in OUTCOME_KINDS:
            return None
        kind = d["outcome"]
        template = d.get("template_id") if kind != "ok" and valid_template_id(d.get("template_id")) else None
        code = _code(d.get("code")) if kind == "rpc-error" else None
        return cls(kind, _count(d.get("count")), code, template)


def merge_outcomes(items: Iterable[OutcomeCount]) -> tuple[OutcomeCount, ...]:
    """Counts of equal outcomes added up; ``ok`` first, then by count (most first), then by key."""
    totals: dict[tuple[str, int | None, str | None], int] = {}
    for item in items:
        totals[item.key] = totals.get(item.key, 0) + item.count
    rows = [OutcomeCount(k[0], n, k[1], k[2]) for k, n in totals.items() if n > 0]
    return tuple(sorted(rows, key=lambda o: (o.outcome != "ok", -o.count, o.outcome, str(o.code),
                                             o.template_id or "")))


def _outcomes(value: Any) -> tuple[OutcomeCount, ...]:
    items = value if isinstance(value, list) else []
    return merge_outcomes(o for o in (OutcomeCount.from_json(d) for d in items) if o is not None)


@dataclass(frozen=True)
class ShapeProfile:
    """The outcomes of the calls with one argument shape.

    Attributes:
        shape: the shape (tokens only), or None for calls without arguments.
        calls: recorded calls with it. outcomes: how they ended.
    """

    shape: Any
    calls: int
    outcomes: tuple[OutcomeCount, ...]

    def to_json(self) -> dict[str, Any]:
        """The shape object."""
        return {"shape": self.shape, "calls": self.calls, "outcomes": [o.to_json() for o in self.outcomes]}


@dataclass(frozen=True)
class Interval:
    """A point estimate and its interval (None when there was nothing to estimate from)."""

    value: float | None = None
    low: float | None = None
    high: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The interval object."""
        return {"value": self.value, "low": self.low, "high": self.high}

    @classmethod
    def from_json(cls, d: Any) -> Interval:
        """Read through the read rules (non-numbers become None)."""
        d = d if isinstance(d, dict) else {}
        return cls(_ms(d.get("value")), _ms(d.get("low")), _ms(d.get("high")))


@dataclass(frozen=True)
class LatencyProfile:
    """A tool's recorded latencies, as quantiles.

    Attributes:
        n: calls with a latency. quantiles: q0, q1, ... q100 in milliseconds ([] when ``n`` is 0).
        p50 / p95: the percentile with its bootstrap 95% interval.
    """

    n: int = 0
    quantiles: tuple[float, ...] = ()
    p50: Interval = field(default_factory=Interval)
    p95: Interval = field(default_factory=Interval)

    def to_json(self) -> dict[str, Any]:
        """The latency object."""
        return {"n": self.n, "quantiles": list(self.quantiles), "p50": self.p50.to_json(),
                "p95": self.p95.to_json()}

    @classmethod
    def from_json(cls, d: Any) -> LatencyProfile:
        """Read through the read rules: quantiles are numbers, sorted, 0 or 2..101 of them."""
        d = d if isinstance(d, dict) else {}
        raw = d.get("quantiles") if isinstance(d.get("quantiles"), list) else []
        values = [v for v in (_ms(q) for q in raw[:101]) if v is not None]
        quantiles = tuple(sorted(values)) if len(values) >= 2 else ()
        return cls(_count(d.get("n")) if quantiles else 0, quantiles, Interval.from_json(d.get("p50")),
                   Interval.from_json(d.get("p95")))


@dataclass(frozen=True)
class SizeClass:
    """Result sizes in one class: at most ``upper`` bytes (None: beyond the last bound), how many
    recorded results fell in it, and their median size in bytes (what the mock answers with)."""

    upper: int | None
    count: int
    bytes: int

    def to_json(self) -> dict[str, Any]:
        """The size-class object."""
        return {"upper": self.upper, "count": self.count, "bytes": self.bytes}


@dataclass(frozen=True)
class ToolProfile:
    """One tool's recorded behaviour.

    Attributes:
        name: the tool name (tool grammar). listed: in the recorded catalog's latest listing.
        schema_source: ``catalog`` (the skeleton of its catalog record) or ``shapes`` (derived from the
            recorded argument shapes: no catalog record). skeleton: the input schema's skeleton.
        hints: the four annotation hints (true, false or None).
        calls: recorded calls. outcomes: how they ended. shapes: the same per recorded argument shape
            (the most frequent first). other_shape_calls: calls of shapes not kept.
        latency: the latency quantiles. sizes: result size classes (from result-size history).
    """

    name: str
    listed: bool
    schema_source: str
    skeleton: dict[str, Any] | None
    hints: Mapping[str, bool | None]
    calls: int
    outcomes: tuple[OutcomeCount, ...]
    shapes: tuple[ShapeProfile, ...] = ()
    other_shape_calls: int = 0
    latency: LatencyProfile = field(default_factory=LatencyProfile)
    sizes: tuple[SizeClass, ...] = ()

    @property
    def failures(self) -> int:
        """Calls that did not end ``ok``."""
        return sum(o.count for o in self.outcomes if o.outcome != "ok")

    def to_json(self) -> dict[str, Any]:
        """The tool object."""
        return {"name": self.name, "listed": self.listed, "schema_source": self.schema_source,
                "skeleton": self.skeleton, "hints": {h: self.hints.get(h) for h in HINTS},
                "calls": self.calls, "outcomes": [o.to_json() for o in self.outcomes],
                "shapes": [s.to_json() for s in self.shapes],
                "other_shape_calls": self.other_shape_calls, "latency_ms": self.latency.to_json(),
                "sizes": [s.to_json() for s in self.sizes]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ToolProfile | None:
        """Read through the read rules (None: a name outside the tool grammar)."""
        name = d.get("name")
        if not valid_label(name):
            return None
        shapes, other = [], _count(d.get("other_shape_calls"))
        for item in d.get("shapes") or ():
            kept, shape = clean_shape(item.get("shape")) if isinstance(item, dict) else (False, None)
            calls = _count(item.get("calls")) if isinstance(item, dict) else 0
            if kept:
                shapes.append(ShapeProfile(shape, calls, _outcomes(item.get("outcomes"))))
            else:
                other += calls
        raw_hints = d.get("hints")
        hints: dict[str, Any] = raw_hints if isinstance(raw_hints, dict) else {}
        sizes = [SizeClass(u if isinstance(u, int) and u > 0 else None, _count(s.get("count")),
                           _count(s.get("bytes")))
                 for s in d.get("sizes") or () if isinstance(s, dict) for u in [s.get("upper")]]
        source = "catalog" if d.get("schema_source") == "catalog" else "shapes"
        return cls(str(name), d.get("listed") is True, source, skeleton_of(d.get("skeleton")),
                   {h: hints.get(h) if isinstance(hints.get(h), bool) else None for h in HINTS},
                   _count(d.get("calls")), _outcomes(d.get("outcomes")), tuple(shapes), other,
                   LatencyProfile.from_json(d.get("latency_ms")), tuple(sizes))


#: The columns of ``MockProfile.outcomes``.
OUTCOMES_SCHEMA = pa.schema([
    ("tool", pa.string()), ("outcome", pa.string()), ("code", pa.int64()), ("template_id", pa.string()),
    ("count", pa.int64()), ("calls", pa.int64()), ("share", pa.float64()), ("share_low", pa.float64()),
    ("share_high", pa.float64()),
])
#: The columns of ``MockProfile.latency``.
LATENCY_SCHEMA = pa.schema([
    ("tool", pa.string()), ("n", pa.int64()), ("p50", pa.float64()), ("p50_low", pa.float64()),
    ("p50_high", pa.float64()), ("p95", pa.float64()), ("p95_low", pa.float64()), ("p95_high", pa.float64()),
])


@dataclass(frozen=True)
class MockProfile:
    """A recorded server's behaviour (``mock_profile`` builds it, ``serve_mock`` serves it).

    Attributes:
        server: the server label. since / until: the window's days as given (None: open).
        first_call / last_call: the first and last recorded call's time.
        calls / sessions: recorded tool calls and sessions in the window.
        catalog_listings: complete catalog listings in the window.
        tools: per tool, in the recorded catalog's order (tools only seen called follow).
        unknown_tool: how the server answered tools it did not list (None: no evidence; -32602).
    """

    server: str
    tools: tuple[ToolProfile, ...]
    since: str | None = None
    until: str | None = None
    first_call: str | None = None
    last_call: str | None = None
    calls: int = 0
    sessions: int = 0
    catalog_listings: int = 0
    unknown_tool: OutcomeCount | None = None

    def tool(self, name: str) -> ToolProfile | None:
        """The tool of that name, or None."""
        return next((t for t in self.tools if t.name == name), None)

    def to_json(self) -> dict[str, Any]:
        """The ``mcpeval-nb.mock-profile/v1`` document."""
        return {"schema": PROFILE_SCHEMA, "server": self.server,
                "window": {"since": self.since, "until": self.until, "first_call": self.first_call,
                           "last_call": self.last_call},
                "calls": self.calls, "sessions": self.sessions, "catalog_listings": self.catalog_listings,
                "tools": [t.to_json() for t in self.tools],
                "unknown_tool": None if self.unknown_tool is None else self.unknown_tool.to_json()}

    def to_text(self) -> str:
        """The document as written to a file: pretty, key-sorted JSON and a newline."""
        return dumps(self.to_json(), sort_keys=True, indent=2) + "\n"

    def write(self, path: str | Path) -> Path:
        """Write the document to ``path`` (replacing an existing file); returns the path.

        Raises:
            UsageError: the file cannot be written (named). DocumentError: a line the redaction check
                flags (never expected: every string passed the read rules).
        """
        from ..review.detectors import line_detectors
        from ..root.outputs import write_new_file

        text = self.to_text()
        for number, line in enumerate(text.encode("utf-8").split(b"\n"), start=1):
            found = line_detectors(line, annotation=False).detectors
            if found:  # the read rules make this unreachable; the redaction check stays the verifier
                raise DocumentError(f"the mock profile's line {number} was flagged ({', '.join(found)}); "
                                    "nothing was written")
        target = Path(path)
        write_new_file(target, text, force=True)
        return target

    @property
    def outcomes(self) -> pa.Table:
        """One row per tool and outcome: counts, shares and their Wilson 95% intervals."""
        rows = []
        for tool in self.tools:
            for o in tool.outcomes:
                low, high = wilson_interval(o.count, tool.calls)
                rows.append({"tool": tool.name, "outcome": o.outcome, "code": o.code,
                             "template_id": o.template_id, "count": o.count, "calls": tool.calls,
                             "share": o.count / tool.calls if tool.calls else None, "share_low": low,
                             "share_high": high})
        return pa.Table.from_pylist(rows, schema=OUTCOMES_SCHEMA)

    @property
    def latency(self) -> pa.Table:
        """One row per tool: latency p50 and p95 with their bootstrap 95% intervals."""
        rows = [{"tool": t.name, "n": t.latency.n, "p50": t.latency.p50.value, "p50_low": t.latency.p50.low,
                 "p50_high": t.latency.p50.high, "p95": t.latency.p95.value, "p95_low": t.latency.p95.low,
                 "p95_high": t.latency.p95.high} for t in self.tools]
        return pa.Table.from_pylist(rows, schema=LATENCY_SCHEMA)

    def __repr__(self) -> str:
        return (f"MockProfile(server={self.server!r}, tools={len(self.tools)}, calls={self.calls}, "
                f"sessions={self.sessions})")

    def _repr_html_(self) -> str:
        head = (f"<p><b>mock profile</b> {self.server}: {len(self.tools)} tools, {self.calls} recorded "
                "calls</p>")
        table: str = self.outcomes.to_pandas().to_html(index=False)
        return head + table

    def sanitized(self) -> MockProfile:
        """The profile through its read rules (idempotent)."""
        return parse_profile(self.to_json())


def _where(path: tuple[str | int, ...]) -> str:
    return "/" + "/".join(str(p) for p in path)


def parse_profile(document: Any, *, source: str = "the mock profile") -> MockProfile:
    """A profile from its JSON document (parsed, bytes or text), through the schema and the read rules.

    Raises:
        DocumentError: not JSON, or not a ``mcpeval-nb.mock-profile/v1`` document (the first violation
            named by its JSON pointer, never a value).
    """
    if isinstance(document, bytes | str):
        try:
            document = loads(document)
        except (JSONFormatError, UnicodeDecodeError):
            raise DocumentError(f"{source} is not JSON") from None
    violation = next(packaged_checker("mock-profile").iter_errors(document), None)
    if violation is not None:
        raise DocumentError(f"{source} is not a {PROFILE_SCHEMA} document: {_where(violation.path)} "
                            f"fails {violation.validator}")
    window = document["window"]
    tools = [t for t in (ToolProfile.from_json(d) for d in document["tools"]) if t is not None]
    unique = list({t.name: t for t in reversed(tools)}.values())[::-1]
    server = document["server"]
    return MockProfile(
        server=server if valid_server(server) else "invalid", tools=tuple(unique),
        since=window["since"], until=window["until"],
        first_call=window["first_call"] if _is_time(window["first_call"]) else None,
        last_call=window["last_call"] if _is_time(window["last_call"]) else None,
        calls=_count(document["calls"]), sessions=_count(document["sessions"]),
        catalog_listings=_count(document["catalog_listings"]),
        unknown_tool=OutcomeCount.from_json(document["unknown_tool"]))


def _is_time(value: Any) -> bool:
    from ..clock import valid_rfc3339

    return isinstance(value, str) and valid_rfc3339(value)


def profile_schema_text() -> str:
    """The ``mcpeval-nb.mock-profile/v1`` JSON Schema, exactly as shipped (``mcpeval-nb schema
    mock-profile``)."""
    return packaged_text("mock-profile")


def load_profile(path: str | Path) -> MockProfile:
    """Read a profile file (at most 16 MiB).

    Raises:
        DocumentError: unreadable, too large, not JSON, or not a profile (the file named).
    """
    name = str(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read(_MAX_PROFILE_BYTES + 1)
    except OSError as exc:
        raise DocumentError(f"cannot read {name}: {exc.strerror}") from None
    if len(data) > _MAX_PROFILE_BYTES:
        raise DocumentError(f"{name} is larger than 16 MiB; a mock profile is a small document")
    return parse_profile(data, source=name)
