"""Catalog records (``catalogs-<day>.jsonl``): a tool listing without the listing's text (docs/catalog.md).

One record per completed ``tools/list`` listing a shim observed (all its pages): when, which capture
and session, the ``seq`` of the listing's first ``tools/list`` call, whether every page was seen, and
per tool, in the order listed: its name (tool grammar, else ``unlisted``), salted digests of its
definition (everything but the name, so a rename keeps it), description, input schema and
annotations, the description's length bucket, the input schema's skeleton and nesting depth, the four
annotation hints, the icon count, the token estimate of its listing entry, and the signal flags
(``catalog_signals``).  The description, schema and every other text are read in memory and dropped.

``CatalogRecord.sanitized()`` is the read rule applied on every append and every load, as for call
records: a hand-edited line can carry no text past it.
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any

from ..clock import day_of, valid_rfc3339
from ..jsonfmt import dumps
from .catalog_schema import schema_depth, skeleton_of
from .catalog_signals import FLAGS, flags_of, tool_text
from .fingerprint import content_digest
from .grammar import opaque_session, valid_server, valid_template_id, valid_tool
from .read_rules import ReadRule, apply_rules, keep, transform
from .records import Identity
from .shape import string_bucket

__all__ = ["CATALOG_RULES", "DESC_BUCKETS", "HINTS", "TOOL_RULES", "CatalogRecord", "CatalogTool",
           "ToolCache", "canonical", "catalog_tool", "estimate_tokens", "tool_tokens"]

#: The annotation hints a record keeps (true, false or null), in MCP's order.
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
#: The description length buckets (``privacy.shape.string_bucket``).
DESC_BUCKETS = ("str<8", "str<32", "str<128", "str<512", "str<4096", "str>4096")
#: The name stored for a tool whose name is outside the tool grammar (as call records do).
UNLISTED = "unlisted"


def canonical(value: Any) -> str:
    """Canonical JSON text of a raw value: compact, keys sorted (what digests and token estimates read)."""
    return dumps(value, sort_keys=True)


def estimate_tokens(encoded_bytes: int) -> int:
    """The token estimate of ``token-cost`` (SPEC 8.3): ``ceil(bytes / 4)`` of compact JSON text."""
    return math.ceil(encoded_bytes / 4)


def tool_tokens(entry: Any) -> int:
    """``ceil(entry_bytes / 4)`` of one raw ``tools/list`` entry (compact, key-sorted JSON)."""
    return estimate_tokens(len(canonical(entry).encode("utf-8", "surrogatepass")))


def _digest_or_none(value: Any) -> str | None:
    return value if valid_template_id(value) else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**64 else 0


def _hints(value: Any) -> dict[str, bool | None]:
    notes = value if isinstance(value, dict) else {}
    return {h: notes[h] if isinstance(notes.get(h), bool) else None for h in HINTS}


def _flags(value: Any) -> tuple[str, ...]:
    found = set(value) & set(FLAGS) if isinstance(value, list | tuple) else set()
    return tuple(f for f in FLAGS if f in found)


#: ``CatalogTool``: name (else ``unlisted``), digests (16 hex, else null), bucket, skeleton, counts, hints,
#: flags (known labels only).
TOOL_RULES: tuple[ReadRule, ...] = (
    keep("name", valid_tool, UNLISTED),
    transform("def_digest", _digest_or_none),
    transform("desc_digest", _digest_or_none),
    transform("schema_digest", _digest_or_none),
    transform("annotations_digest", _digest_or_none),
    keep("desc_bucket", DESC_BUCKETS.__contains__, None, optional=True),
    transform("skeleton", skeleton_of, optional=True),
    transform("depth", _count),
    transform("hints", _hints),
    transform("icons", _count),
    transform("tokens", _count),
    transform("flags", _flags),
)


@dataclass(frozen=True, kw_only=True)
class CatalogTool:
    """One listed tool in a catalog record: labels, digests, counts, a skeleton; never text."""

    name: str
    def_digest: str | None = None
    desc_digest: str | None = None
    schema_digest: str | None = None
    annotations_digest: str | None = None
    desc_bucket: str | None = None
    skeleton: dict[str, Any] | None = None
    depth: int = 0
    hints: dict[str, bool | None] = field(default_factory=lambda: _hints(None))
    icons: int = 0
    tokens: int = 0
    flags: tuple[str, ...] = ()
    #: Built by ``catalog_tool`` from the very rules ``sanitized`` applies (a read never sets it).
    _clean: bool = field(default=False, compare=False, repr=False)

    def sanitized(self) -> CatalogTool:
        """The read rules (``TOOL_RULES``); idempotent.  A tool ``catalog_tool`` built is returned as it
        is: its values came out of the same rules (a repeated listing of a large catalog would otherwise
        rebuild every skeleton on every append)."""
        if self._clean:
            return self
        clean: CatalogTool = apply_rules(TOOL_RULES, self)
        return replace(clean, _clean=True)

    def to_dict(self) -> dict[str, Any]:
        """The tool in field order (every key present; absent digests and bucket are null)."""
        return {"name": self.name, "def_digest": self.def_digest, "desc_digest": self.desc_digest,
                "schema_digest": self.schema_digest, "annotations_digest": self.annotations_digest,
                "desc_bucket": self.desc_bucket, "skeleton": self.skeleton, "depth": self.depth,
                "hints": dict(self.hints), "icons": self.icons, "tokens": self.tokens,
                "flags": list(self.flags)}

    @classmethod
    def from_dict(cls, d: Any) -> CatalogTool:
        """Read a stored tool (wrong types become their fallbacks in ``sanitized``).

        Raises:
            ValueError: not an object, or a name that is not a string.
        """
        if not isinstance(d, dict) or not isinstance(d.get("name"), str):
            raise ValueError("a catalog tool must be an object with a string name")
        return cls(name=d["name"], def_digest=d.get("def_digest"), desc_digest=d.get("desc_digest"),
                   schema_digest=d.get("schema_digest"), annotations_digest=d.get("annotations_digest"),
                   desc_bucket=d.get("desc_bucket"), skeleton=d.get("skeleton"), depth=d.get("depth", 0),
                   hints=_hints(d.get("hints")), icons=d.get("icons", 0), tokens=d.get("tokens", 0),
                   flags=d.get("flags") or ())


def _tools(tools: Any) -> tuple[CatalogTool, ...]:
    return tuple(t.sanitized() for t in tools)


#: ``CatalogRecord``: ts, session, server, complete, then every tool's rules.
CATALOG_RULES: tuple[ReadRule, ...] = (
    keep("ts", valid_rfc3339, "unknown"),
    transform("session", opaque_session),
    keep("server", valid_server, "invalid"),
    transform("complete", lambda v: v is True),
    transform("tools", _tools),
)


@dataclass(frozen=True, kw_only=True)
class CatalogRecord:
    """One line of ``catalogs-<day>.jsonl``: one completed listing of one server.

    Attributes:
        ts: when the listing completed (RFC 3339 UTC, milliseconds).
        session: the opaque session token (shared with the session's call records).
        seq: the ``seq`` of the call record of the listing's first ``tools/list`` call.
        server: the server label.
        complete: every page was seen (False: a page was missing, failed or never asked for).
        tools: the listed tools, in the order listed.
        identity: the capture (recorder) id and this record's event id.
    """

    ts: str
    session: str
    seq: int
    server: str
    complete: bool
    tools: tuple[CatalogTool, ...] = ()
    identity: Identity | None = None

    def sanitized(self) -> CatalogRecord:
        """The read rules (``CATALOG_RULES``); idempotent."""
        clean: CatalogRecord = apply_rules(CATALOG_RULES, self)
        return clean

    @property
    def day(self) -> str:
        """The journal day of the record (from its sanitised ``ts``)."""
        return day_of(self.ts)

    def to_dict(self) -> dict[str, Any]:
        """Field order: identity (when present), ts, session, seq, server, complete, tools."""
        d: dict[str, Any] = {}
        if self.identity is not None:
            d["identity"] = {"capture_id": self.identity.capture_id, "event_id": self.identity.event_id}
        d.update(ts=self.ts, session=self.session, seq=self.seq, server=self.server, complete=self.complete,
                 tools=[t.to_dict() for t in self.tools])
        return d

    def encode(self) -> str:
        """Compact JSON text of the record as it is (call ``sanitized()`` first to store it)."""
        return dumps(self.to_dict(), sort_keys=False)

    def without_skeletons(self) -> CatalogRecord:
        """The record with every skeleton dropped (a listing too large for one journal line)."""
        return replace(self, tools=tuple(replace(t, skeleton=None) for t in self.tools))

    @classmethod
    def from_dict(cls, d: Any) -> CatalogRecord:
        """Build a record from parsed JSON.

        Raises:
            ValueError: a required field is missing or has the wrong JSON type.
        """
        if not isinstance(d, dict):
            raise ValueError("record must be a JSON object")
        seq, tools = d.get("seq"), d.get("tools")
        if not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq < 2**64:
            raise ValueError("field `seq` must be an unsigned integer")
        if not isinstance(tools, list):
            raise ValueError("field `tools` must be an array")
        for key in ("ts", "session", "server"):
            if not isinstance(d.get(key), str):
                raise ValueError(f"field `{key}` must be a string")
        return cls(identity=Identity.from_record(d), ts=d["ts"], session=d["session"], seq=seq,
                   server=d["server"], complete=d.get("complete") is True,
                   tools=tuple(CatalogTool.from_dict(t) for t in tools))


def _digest(salt: bytes, kind: str, value: Any) -> str:
    return content_digest(salt, kind, value if isinstance(value, str) else canonical(value))


def _entry_bytes(rest: bytes, entry: dict[str, Any]) -> int:
    """UTF-8 bytes of ``canonical(entry)`` from those of the entry without ``name``: a sorted compact object
    holds the same members plus ``"name":<value>`` and one comma (none when it is the only member)."""
    if "name" not in entry:
        return len(rest)
    member = len(('"name":' + canonical(entry["name"])).encode("utf-8", "surrogatepass"))
    return len(rest) + member + (1 if len(entry) > 1 else 0)


class ToolCache:
    """Tools already built, by their definition's sorted JSON text and the names they could refer to.

    A server lists the same catalog again and again (every session, every ``list_changed``); a tool
    whose definition did not change costs one canonical encoding instead of its skeleton and every
    signal rule.  Bounded: the least recently used entries go first.
    """

    def __init__(self, size: int = 8192) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, frozenset[str]], CatalogTool] = OrderedDict()

    def get(self, key: tuple[str, frozenset[str]]) -> CatalogTool | None:
        """The tool built for ``key``, or None."""
        tool = self._items.get(key)
        if tool is not None:
            self._items.move_to_end(key)
        return tool

    def put(self, key: tuple[str, frozenset[str]], tool: CatalogTool) -> None:
        """Remember a built tool."""
        self._items[key] = tool
        if len(self._items) > self.size:
            self._items.popitem(last=False)


def catalog_tool(entry: Any, salt: bytes, names: frozenset[str] = frozenset(), *,
                 cache: ToolCache | None = None) -> CatalogTool:
    """The content-free facts of one raw ``tools/list`` entry (its text is read here and dropped).

    Every value is built by the same rules ``CatalogTool.sanitized`` applies, so the tool is stored as
    built (the journal writer sanitises it once more on the way to disk).

    Args:
        entry: the raw entry (in memory only).
        salt: the capture root's salt (digests are unlinkable across roots).
        names: names of the other tools the description could refer to (this listing's and the root's).
        cache: tools already built (one salt per cache).
    """
    entry = entry if isinstance(entry, dict) else {}
    if cache is None:
        return _build(entry, salt, names)
    key = (json.dumps(entry, sort_keys=True, ensure_ascii=False, separators=(",", ":")), names)
    found = cache.get(key)
    if found is None:
        found = _build(entry, salt, names)
        cache.put(key, found)
    return found


def _build(entry: dict[str, Any], salt: bytes, names: frozenset[str]) -> CatalogTool:
    rest = canonical({k: v for k, v in entry.items() if k != "name"}).encode("utf-8", "surrogatepass")
    name, desc, schema, notes = (entry.get(k) for k in ("name", "description", "inputSchema", "annotations"))
    schema_text = canonical(schema) if schema is not None else ""
    icons = entry.get("icons")
    return CatalogTool(
        name=str(name) if valid_tool(name) else UNLISTED,
        def_digest=content_digest(salt, "tool-definition", rest.decode("utf-8", "surrogatepass")),
        desc_digest=_digest(salt, "description", desc) if isinstance(desc, str) else None,
        schema_digest=content_digest(salt, "input-schema", schema_text) if schema is not None else None,
        annotations_digest=_digest(salt, "annotations", notes) if notes is not None else None,
        desc_bucket=string_bucket(desc) if isinstance(desc, str) else None,
        skeleton=skeleton_of(schema), depth=schema_depth(schema), hints=_hints(notes),
        icons=len(icons) if isinstance(icons, list) else 0,
        tokens=estimate_tokens(_entry_bytes(rest, entry)),
        flags=flags_of(tool_text(entry, schema_bytes=len(schema_text.encode("utf-8", "surrogatepass"))),
                       names), _clean=True)
