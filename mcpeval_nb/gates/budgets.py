"""Budgets files: the published schema, parsing with located messages, and the most specific entry.

A budgets file is strict JSON, version 1 (``mcpeval-nb schema budgets`` prints its schema)::

    {"version": 1,
     "budgets": [{"server": "docs", "tool": "search", "p95_ms": 500, "p99_ms": 2000,
                  "max_error_rate": 0.05, "min_calls": 20}],
     "no_new_templates": false,
     "catalog": {"fail_on": "any", "server": "*"}}

``server`` and ``tool`` may be ``"*"`` (and default to it); every limit is optional.  A bad file is
refused with the JSON path of the first problem in document order (``budgets.json: /budgets/0/p95_ms
must be a number at least 0``), never a value from the file.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DocumentError
from ..jsonfmt import JSONFormatError, dumps, loads
from ..schemacheck import Violation, packaged_checker, packaged_schema, packaged_text, unknown_field_words

__all__ = ["ANY", "BudgetEntry", "Budgets", "CatalogRule", "budgets_schema", "budgets_schema_text",
           "load_budgets", "parse_budgets"]

#: The selector that matches every server or every tool.
ANY = "*"
_TYPE_WORDS = {"number": "a number", "integer": "an integer", "string": "a string", "boolean": "a boolean",
               "array": "an array", "object": "an object"}


@dataclass(frozen=True)
class BudgetEntry:
    """One entry: the selectors and the limits it sets (None: not limited).

    Attributes:
        server / tool: a label, or ``*`` for every one.
        p95_ms / p99_ms: latency percentile bounds (milliseconds).
        max_error_rate: the error-rate bound in [0, 1].
        min_calls: fewer calls than this are not judged.
        index: the entry's position in the file (messages and reports name ``/budgets/<index>``).
    """

    server: str = ANY
    tool: str = ANY
    p95_ms: float | None = None
    p99_ms: float | None = None
    max_error_rate: float | None = None
    min_calls: int = 0
    index: int = 0

    @property
    def specificity(self) -> int:
        """3 for server and tool named, 2 server only, 1 tool only, 0 neither: the highest matching wins."""
        return 2 * (self.server != ANY) + (self.tool != ANY)

    def matches(self, server: str, tool: str) -> bool:
        """True when both selectors match."""
        return self.server in (ANY, server) and self.tool in (ANY, tool)


@dataclass(frozen=True)
class CatalogRule:
    """The optional ``catalog`` section: judge recorded catalogs against their pins (``catalog check``).

    Attributes:
        fail_on: ``drift``, ``flags`` or ``any``.
        server: a label, or ``*`` for every recorded or pinned server.
    """

    fail_on: str = "any"
    server: str = ANY


@dataclass(frozen=True)
class Budgets:
    """A parsed budgets file: the entries in file order, the template rule and the catalog rule."""

    budgets: tuple[BudgetEntry, ...]
    no_new_templates: bool = False
    catalog: CatalogRule | None = None

    def for_call(self, server: str, tool: str) -> BudgetEntry | None:
        """The most specific entry matching ``(server, tool)``, or None when none does."""
        found = [b for b in self.budgets if b.matches(server, tool)]
        return max(found, key=lambda b: b.specificity) if found else None


def budgets_schema_text() -> str:
    """The published budgets JSON Schema, exactly as shipped (``mcpeval-nb schema budgets``)."""
    return packaged_text("budgets")


def budgets_schema() -> dict[str, Any]:
    """The budgets JSON Schema as a fresh dict."""
    return packaged_schema("budgets")


@functools.cache
def _schema_names() -> frozenset[str]:
    """Every field name the budgets schema declares (safe to print: the schema's, not the file's)."""
    found: set[str] = set()
    stack: list[Any] = [budgets_schema()]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found.update(node.get("properties", {}))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return frozenset(found)


def _pointer(path: tuple[str | int, ...]) -> str:
    return "/" + "/".join(str(p) for p in path)


def _message(v: Violation) -> str:
    """What is wrong at ``v.path``, in words that quote nothing from the file."""
    where = _pointer(v.path)
    if v.validator == "type":
        return f"{where} must be {_TYPE_WORDS.get(str(v.validator_value), 'another JSON type')}"
    if v.validator == "required":
        missing = [k for k in v.validator_value if isinstance(v.instance, dict) and k not in v.instance]
        return f"{where} is missing `{missing[0]}`" if missing else f"{where} is missing a field"
    if v.validator == "additionalProperties":
        words = unknown_field_words(v, _schema_names())
        return f"{where} has an {words}" if words.startswith("unknown") else f"{where}: {words}"
    if v.validator == "const":
        return f"{where} must be {dumps(v.validator_value, sort_keys=True)}"
    if v.validator == "pattern":
        return f"{where} must be a label (1-128 of letters, digits, '.', '_', '-', ':') or \"*\""
    if v.validator == "enum":
        return f"{where} must be one of {', '.join(str(x) for x in v.validator_value)}"
    if v.validator == "minimum":
        return f"{where} must be at least {dumps(v.validator_value, sort_keys=True)}"
    if v.validator == "maximum":
        return f"{where} must be at most {dumps(v.validator_value, sort_keys=True)}"
    return f"{where} is not acceptable ({v.validator})"


def _order(v: Violation) -> list[tuple[int, str | int]]:
    return [(0, p) if isinstance(p, int) else (1, p) for p in v.path]


def _entry(raw: Mapping[str, Any], index: int) -> BudgetEntry:
    def number(key: str) -> float | None:
        value = raw.get(key)
        return None if value is None else float(value)

    return BudgetEntry(server=raw.get("server", ANY), tool=raw.get("tool", ANY), p95_ms=number("p95_ms"),
                  p99_ms=number("p99_ms"), max_error_rate=number("max_error_rate"),
                  min_calls=int(raw.get("min_calls", 0)), index=index)


def parse_budgets(data: bytes | str | Mapping[str, Any], *, source: str = "budgets") -> Budgets:
    """Parse and check a budgets document.

    Args:
        data: the file's bytes or text, or an already-parsed object.
        source: how messages name the document.

    Returns:
        The budgets, entries in file order.

    Raises:
        DocumentError: not JSON, or the first violation of the schema in document order, or two
            entries with the same selectors; the message names the JSON path, never a value (exit 2).
    """
    if isinstance(data, Mapping):
        doc: Any = dict(data)
    else:
        try:
            doc = loads(data)
        except JSONFormatError as exc:
            raise DocumentError(f"{source}: not valid JSON ({exc})") from None
    violations = list(packaged_checker("budgets").iter_errors(doc))
    if violations:
        raise DocumentError(f"{source}: {_message(min(violations, key=_order))}")
    entries = tuple(_entry(raw, i) for i, raw in enumerate(doc["budgets"]))
    seen: dict[tuple[str, str], int] = {}
    for b in entries:
        first = seen.setdefault((b.server, b.tool), b.index)
        if first != b.index:
            raise DocumentError(f"{source}: /budgets/{b.index} has the same server and tool as "
                                f"/budgets/{first}")
    raw = doc.get("catalog")
    rule = None if raw is None else CatalogRule(fail_on=raw.get("fail_on", "any"),
                                                server=raw.get("server", ANY))
    return Budgets(budgets=entries, no_new_templates=bool(doc.get("no_new_templates", False)), catalog=rule)


def load_budgets(path: str | Path) -> Budgets:
    """Read and check a budgets file.

    Raises:
        DocumentError: the file cannot be read or is not a valid budgets document (exit 2).
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise DocumentError(f"cannot read budgets file {path}: {exc.strerror}") from None
    return parse_budgets(raw, source=str(path))
