"""A finding, declared once (SPEC 12.2, 12.5): ``Issue`` is the ``issues`` row ``promote`` writes,
``Finding`` the row every reader returns (an issue with its lifecycle and severity), and
``FINDING_FIELDS`` the order and shape of a finding's output.

Everything else that spells a finding's columns is derived from these, as sqlite-utils derives its
statements from a table's columns: the ``issues`` DDL (``ISSUES_TABLE``, part of ``index.db``'s layout),
its insert and select (``insert_issues``, ``select_issues``), the Arrow schema (``FINDINGS_SCHEMA``,
``table_of``), the JSON object (``Finding.to_json``, SPEC 12.5's order) and serve's output schema
(``FINDING_JSON_SCHEMA``).  A field's SQL, Arrow and JSON types follow its Python type (``X | None`` is
nullable); a field's metadata names a column whose name differs (``class``, ``args``) and marks compact
JSON text (decoded in the JSON object).  Every value is a label, a count, a score, a template
id or a shaped argument token: nothing else exists in ``index.db``.

This module is the bottom of ``triage``: ``index/database.py`` builds its layout from ``ISSUES_TABLE``
and ``lifecycle.py`` takes its states from ``STATES``.
"""

from __future__ import annotations

import sqlite3
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from typing import Any

import pyarrow as pa

from ..jsonfmt import loads
from ..wilson import wilson_interval

__all__ = [
    "FIELDS",
    "FINDINGS_SCHEMA",
    "FINDING_FIELDS",
    "FINDING_ID_SCHEMA",
    "FINDING_JSON_SCHEMA",
    "HINTS",
    "ISSUES_TABLE",
    "ISSUE_COLUMNS",
    "LIFECYCLE_COLUMNS",
    "LIFECYCLE_TABLES",
    "STATES",
    "Column",
    "Finding",
    "Issue",
    "OutputField",
    "insert_issues",
    "select_issues",
    "table_of",
]

#: The lifecycle states of a finding, in order (SPEC 12.4).
STATES = ("open", "fix-claimed", "verifying", "closed")
#: SPEC 12.4's lifecycle tables: ``lifecycle.db`` holds them (the authoritative record) and ``index.db``
#: a mirror of them, which is where the reference tool reads and writes a finding's lifecycle.
LIFECYCLE_TABLES = f"""CREATE TABLE IF NOT EXISTS finding_lifecycle (
  finding_id TEXT PRIMARY KEY, server TEXT, tool TEXT, err_code TEXT, err_template_id TEXT, probe_id TEXT,
  state TEXT NOT NULL CHECK (state IN ({",".join(f"'{state}'" for state in STATES)})),
  consecutive_passes INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS probe_history (
  id INTEGER PRIMARY KEY, finding_id TEXT NOT NULL, probe_id TEXT NOT NULL,
  passed INTEGER NOT NULL CHECK (passed IN (0, 1)), ts INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS probe_history_finding ON probe_history(finding_id, id);
"""
#: Each lifecycle table's columns, in order (SPEC 12.4).
LIFECYCLE_COLUMNS = {
    "finding_lifecycle": ("finding_id", "server", "tool", "err_code", "err_template_id", "probe_id", "state",
                          "consecutive_passes", "updated_at"),
    "probe_history": ("id", "finding_id", "probe_id", "passed", "ts"),
}
#: The remediation hint of each finding class.
HINTS = {
    "recurring-error": "the same failure recurs across sessions: reproduce it with generate, fix it, then "
    "run verify until it closes",
    "unstable-error-code": "one failure answers with more than one error code: return one stable code",
    "false-success": "calls reported success but were annotated false-success: assert the result "
    "(generate --expect)",
    "blocked-optimal-path": "the agent was kept off its best path: state what the call should return "
    "(generate --expect)",
    "recovers-on-retry": "a retry of the same tool succeeded: the failure is transient, fix its cause",
    "retry-did-not-recover": "the error says retryable but retries did not recover: fix the cause or "
    "stop marking it retryable",
}
#: A finding id's JSON Schema (SPEC 12.3's form).
FINDING_ID_SCHEMA: dict[str, Any] = {"type": "string", "pattern": "^finding-[0-9a-f]{16}$"}


#: A field's storage notes are its ``dataclasses.field`` metadata: ``column`` names a column whose name
#: differs from the attribute's, ``json`` marks compact JSON text.
_JSON_TEXT = {"json": True}


@dataclass(frozen=True)
class Issue:
    """One scored (server, tool, template) group of the last promotion: a row of ``issues``.

    JSON-valued fields (``err_code``, ``err_codes``, ``repro``) hold compact JSON text; ``repro`` is the
    group's most frequent argument shape, ``klass`` its class; ``last_seen_ms`` is 0 when no failure had
    a time; ``severity`` is SPEC 12.2's label as of the last promotion or verify (readers compute it
    again from the lifecycle they read); ``promoted_at`` is the time the score was computed with;
    ``since_ms``/``until_ms`` the window the promotion was restricted to.
    """

    finding_id: str
    server: str | None
    tool: str | None
    err_code: str | None = field(metadata=_JSON_TEXT)
    err_codes: str = field(metadata=_JSON_TEXT)
    err_template_id: str | None
    failures: int
    calls: int
    sessions: int
    last_seen: str | None
    last_seen_ms: int
    cost: float
    blast: int
    rate: float
    confidence: float
    recency: float
    score: float
    threshold: float
    severity: str
    klass: str = field(metadata={"column": "class"})
    retryable: bool | None
    annotated: bool
    repro: str | None = field(metadata={"column": "args", **_JSON_TEXT})
    promoted_at: int
    since_ms: int | None
    until_ms: int | None


@dataclass(frozen=True)
class Finding(Issue):
    """An issue of the last promotion with its lifecycle (``open`` when it has none) and severity."""

    state: str
    probe_id: str | None
    consecutive_passes: int

    @property
    def hint(self) -> str:
        """The remediation hint of the finding's class."""
        return HINTS.get(self.klass, HINTS["recurring-error"])

    @property
    def rate_high(self) -> float:
        """The Wilson interval's upper bound (``confidence`` is its lower bound)."""
        return wilson_interval(self.failures, self.calls)[1]

    @property
    def last_seen_at(self) -> int | None:
        """``last_seen`` as milliseconds since the epoch (None when unknown)."""
        return None if self.last_seen is None else self.last_seen_ms

    def to_json(self) -> dict[str, Any]:
        """The ``findings --format json`` object, in SPEC's field order."""
        return {f.name: f.json_value(self) for f in FINDING_FIELDS if f.in_json}


# -- types ----------------------------------------------------------------------------------------------
def _type_of(hint: Any) -> tuple[type, bool]:
    """``(base type, nullable)`` of a field's type hint (``X`` or ``X | None``)."""
    if typing.get_origin(hint) in (types.UnionType, typing.Union):
        base = [a for a in typing.get_args(hint) if a is not type(None)]
        return base[0], True
    return hint, False


_SQL = {str: "TEXT", int: "INTEGER", bool: "INTEGER", float: "REAL"}
_ARROW = {str: pa.string(), int: pa.int64(), bool: pa.bool_(), float: pa.float64()}
_JSON = {str: "string", int: "integer", bool: "boolean", float: "number"}


@dataclass(frozen=True)
class Column:
    """One ``issues`` column: the ``Issue`` attribute, the column name, its base type and nullability."""

    attr: str
    name: str
    base: type
    nullable: bool
    json_text: bool

    @property
    def ddl(self) -> str:
        """``<name> <SQL type>[ NOT NULL]``."""
        return f"{self.name} {_SQL[self.base]}{'' if self.nullable else ' NOT NULL'}"

    def read(self, value: Any) -> Any:
        """A stored value as the attribute holds it (SQLite keeps booleans as 0/1)."""
        return bool(value) if self.base is bool and value is not None else value


def _columns() -> tuple[Column, ...]:
    hints = typing.get_type_hints(Issue)
    out = []
    for f in fields(Issue):
        base, nullable = _type_of(hints[f.name])
        out.append(Column(f.name, f.metadata.get("column") or f.name, base, nullable,
                          bool(f.metadata.get("json"))))
    return tuple(out)


#: The ``issues`` columns after ``id``, in table order.
ISSUE_COLUMNS = _columns()
_BY_ATTR = {c.attr: c for c in ISSUE_COLUMNS}


def _wrapped(head: str, items: list[str], width: int = 100) -> str:
    """``head`` and the comma-separated items, wrapped at ``width`` columns with a two-space indent (the
    text index.db's schema digest has always covered: an unchanged layout keeps its digest)."""
    lines = [head]
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else ");")
        glue = "" if lines[-1].endswith("(") else " "
        if len(lines[-1] + glue + piece) > width:
            lines.append("  " + piece)
        else:
            lines[-1] += glue + piece
    return "\n".join(lines) + "\n"


#: ``CREATE TABLE issues``: ``id`` and the declared columns (part of index.db's layout and its digest).
ISSUES_TABLE = _wrapped("CREATE TABLE issues (", ["id INTEGER PRIMARY KEY", *(c.ddl for c in ISSUE_COLUMNS)])
_INSERT = (f"INSERT INTO issues ({', '.join(c.name for c in ISSUE_COLUMNS)}) "
           f"VALUES ({', '.join('?' * len(ISSUE_COLUMNS))})")


def insert_issues(db: sqlite3.Connection, issues: Iterable[Issue]) -> None:
    """Append these issues to ``issues`` (ids assigned by SQLite)."""
    db.executemany(_INSERT, (tuple(getattr(i, c.attr) for c in ISSUE_COLUMNS) for i in issues))


def select_issues(db: sqlite3.Connection, *, promoted: bool) -> list[Issue]:
    """Every issue of the last promotion, or only the promoted ones (those in ``findings``)."""
    join = " JOIN findings f ON f.issue_id = i.id" if promoted else ""
    cursor = db.execute(f"SELECT {', '.join('i.' + c.name for c in ISSUE_COLUMNS)} FROM issues i{join}")
    return [Issue(**{c.attr: c.read(v) for c, v in zip(ISSUE_COLUMNS, row, strict=True)}) for row in cursor]


# -- a finding's output ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class OutputField:
    """One field of a finding's output: the JSON key and Arrow column ``name``, the ``Finding`` attribute
    it comes from, its type, and what its type alone does not say.

    Attributes:
        name: the key and column. attr: the attribute (a field or a property).
        base / nullable / json_text: the attribute's type (``json_text``: compact JSON text).
        required: serve's output schema requires it. schema: the JSON Schema, when not the type's own.
        arrow: the Arrow type and the attribute its value comes from, when not the field's own.
        in_json: part of the JSON object (``rate_high`` is a table column only).
    """

    name: str
    attr: str
    base: type
    nullable: bool
    json_text: bool
    required: bool = False
    schema: dict[str, Any] | None = None
    arrow: tuple[pa.DataType, str] | None = None
    in_json: bool = True

    def json_value(self, finding: Finding) -> Any:
        """The value in the JSON object (JSON text decoded)."""
        value = getattr(finding, self.attr)
        return loads(value) if self.json_text and value is not None else value

    def json_schema(self) -> dict[str, Any]:
        """The field's JSON Schema (any value for JSON text)."""
        if self.schema is not None:
            return self.schema
        if self.json_text:
            return {}
        return {"type": [_JSON[self.base], "null"] if self.nullable else _JSON[self.base]}

    def arrow_field(self) -> pa.Field:
        """The Arrow column (JSON text stays text)."""
        return pa.field(self.name, self.arrow[0] if self.arrow else _ARROW[self.base])

    def arrow_value(self, finding: Finding) -> Any:
        """The value in the Arrow table."""
        return getattr(finding, self.arrow[1] if self.arrow else self.attr)


_FINDING_HINTS = typing.get_type_hints(Finding)


def _out(name: str, attr: str | None = None, **options: Any) -> OutputField:
    """The output field ``name`` of attribute ``attr`` (default ``name``), typed as the attribute is."""
    attr = attr or name
    column = _BY_ATTR.get(attr)
    if column is not None:
        return OutputField(name, attr, column.base, column.nullable, column.json_text, **options)
    hint = _FINDING_HINTS.get(attr) or typing.get_type_hints(getattr(Finding, attr).fget)["return"]
    base, nullable = _type_of(hint)
    return OutputField(name, attr, base, nullable, False, **options)


#: A finding's output, in SPEC 12.5's order (then ``class``, ``hint``, ``err_codes``, ``retryable``).
FINDING_FIELDS: tuple[OutputField, ...] = (
    _out("finding_id", required=True, schema=FINDING_ID_SCHEMA),
    _out("state", required=True, schema={"type": "string", "enum": list(STATES)}),
    _out("probe_id"),
    _out("consecutive_passes"),
    _out("server", required=True),
    _out("tool", required=True),
    _out("err_code"),
    _out("err_template_id"),
    _out("failures", required=True),
    _out("calls", required=True),
    _out("sessions", required=True),
    _out("last_seen", arrow=(pa.timestamp("ms", tz="UTC"), "last_seen_at")),
    _out("cost"),
    _out("blast"),
    _out("rate"),
    _out("confidence"),
    _out("recency"),
    _out("score"),
    _out("threshold"),
    _out("severity", required=True),
    _out("repro"),
    _out("class", "klass", required=True),
    _out("hint"),
    _out("err_codes", schema={"type": "array"}),
    _out("retryable"),
    _out("rate_high", in_json=False),
)
#: The JSON object's keys, in order.
FIELDS = tuple(f.name for f in FINDING_FIELDS if f.in_json)
FINDINGS_SCHEMA = pa.schema([f.arrow_field() for f in FINDING_FIELDS],
                            metadata={b"mcpeval_nb.schema": b"mcpeval-nb.findings/1"})
#: serve's JSON Schema of one finding object.
FINDING_JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {f.name: f.json_schema() for f in FINDING_FIELDS if f.in_json},
    "additionalProperties": False,
    "required": [f.name for f in FINDING_FIELDS if f.required],
}


def table_of(findings: list[Finding]) -> pa.Table:
    """The findings as a ``FINDINGS_SCHEMA`` table (JSON-valued columns as compact JSON text)."""
    getters: list[Callable[[Finding], Any]] = [f.arrow_value for f in FINDING_FIELDS]
    columns = [[get(f) for f in findings] for get in getters]
    return pa.table([pa.array(c, t.type) for c, t in zip(columns, FINDINGS_SCHEMA, strict=True)],
                    schema=FINDINGS_SCHEMA)
