"""Probe manifests: strict schema, semantic rules in SPEC order, case selection, mutation gate (SPEC 8.1-8.2).

Validation runs in two passes, the way the reference tool's serde parse and ``validate()`` do:

1. structure (``schemacheck`` against ``schemas/manifest.schema.json``: the package's own exact draft
   2020-12 checker, so that no command pays ``jsonschema``'s start-up before it starts a server): unknown
   fields, missing fields, wrong JSON types and unknown probe kinds, the first in document order;
2. the semantic rules of SPEC 8.1 in SPEC's order with SPEC's messages (ranges, grammars, access and
   sandbox rules, expectations).

The schema also encodes the semantic ranges (so editors can use it); those schema errors are left to the
second pass, which words them.  Messages name the source, the case id (when it is a valid identifier),
the rule and the JSON path, never a value from the manifest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ManifestError, UsageError
from ..jsonfmt import JSONFormatError, dumps, loads
from ..privacy.grammar import valid_identifier
from ..schemacheck import SchemaChecker, Violation, packaged_checker, packaged_schema, packaged_text
from .cases import ProbeCase
from .rules import SCHEMA_KEYS, case_rule_error, structural_message, top_rule_error

__all__ = [
    "DEFAULT_MANIFEST",
    "Manifest",
    "coerce_manifest",
    "load_manifest",
    "manifest_schema",
    "manifest_schema_text",
    "parse_manifest",
    "require_mutation",
    "select_cases",
]

#: The manifest the CLI reads when ``--manifest`` is not given.
DEFAULT_MANIFEST = "mcp-eval.manifest.json"


@dataclass(frozen=True)
class Manifest:
    """A validated manifest.

    Attributes:
        timeout_ms: the per-request timeout override, or None for the transport default.
        sandboxes: declared sandbox names (descriptions are never kept).
        cases: the cases in manifest order.
        sha256: lowercase hex SHA-256 of the bytes parsed (SPEC 8.1).
    """

    timeout_ms: int | None
    sandboxes: frozenset[str]
    cases: tuple[ProbeCase, ...]
    sha256: str
    version: int = 1


def manifest_schema_text() -> str:
    """The published manifest JSON Schema, exactly as shipped (what ``mcpeval-nb schema manifest`` prints)."""
    return packaged_text("manifest")


def manifest_schema() -> dict[str, Any]:
    """The manifest JSON Schema as a fresh dict."""
    return packaged_schema("manifest")


def _validator() -> SchemaChecker:
    return packaged_checker("manifest")


def _document_order(item: tuple[list[str | int], str | None]) -> list[tuple[int, str | int]]:
    return [(0, p) if isinstance(p, int) else (1, p) for p in item[0]]


def _case_label(doc: Any, path: Sequence[str | int]) -> str:
    if len(path) >= 2 and path[0] == "probes" and isinstance(path[1], int):
        case = doc["probes"][path[1]]
        cid = case.get("id") if isinstance(case, dict) else None
        return f"probe case {cid}: " if valid_identifier(cid) else f"probe case #{path[1] + 1}: "
    return ""


def _pointer(path: Sequence[str | int]) -> str:
    """A JSON Pointer of indexes and schema-defined keys (a key the manifest chose prints as ``*``)."""
    parts = [str(p) if isinstance(p, int) or p in SCHEMA_KEYS else "*" for p in path]
    return "/" + "/".join(parts) if parts else "/"


def _fail(source: str, doc: Any, path: Sequence[str | int], message: str) -> ManifestError:
    return ManifestError(f"{source}: {_case_label(doc, path)}{message} (at {_pointer(path)})")


def _validate(doc: Any, source: str) -> None:
    if not isinstance(doc, dict):
        raise ManifestError(f"{source}: manifest must be a JSON object (at /)")
    structural: list[tuple[list[str | int], str | None]] = []
    deferred: list[tuple[list[str | int], str | None]] = []
    error: Violation
    for error in _validator().iter_errors(doc):
        message = structural_message(error)
        (structural if message is not None else deferred).append((list(error.absolute_path), message))
    if structural:
        path, message = min(structural, key=_document_order)
        raise _fail(source, doc, path, str(message))
    found = top_rule_error(doc)
    for index, case in enumerate(doc["probes"]):
        if found is not None:
            break
        found = case_rule_error(doc, index, case)
    if found is not None:
        raise _fail(source, doc, found[0], found[1])
    if deferred:  # the schema refused something no semantic rule words: still refuse, generically
        path = min(deferred, key=_document_order)[0]
        raise _fail(source, doc, path, "value is outside the allowed range or grammar")


def parse_manifest(data: bytes | str | Mapping[str, Any], *, source: str = "manifest") -> Manifest:
    """Parse and validate a manifest.

    Args:
        data: the manifest's bytes or text, or an already-parsed object (hashed as sorted compact JSON).
        source: how messages name the manifest (a path or ``manifest``).

    Returns:
        The validated manifest.

    Raises:
        ManifestError: the text is not JSON, or a structural or semantic rule failed (exit 2).
    """
    if isinstance(data, Mapping):
        doc: Any = loads(dumps(dict(data), sort_keys=True))
        raw = dumps(doc, sort_keys=True).encode("utf-8")
    else:
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        try:
            doc = loads(raw)
        except JSONFormatError as exc:
            raise ManifestError(f"{source}: manifest is not valid JSON ({exc})") from None
    _validate(doc, source)
    cases = tuple(
        ProbeCase(id=c["id"], probe=c["probe"], access=c["access"], sandbox=c.get("sandbox"), index=i,
                  fields=c)
        for i, c in enumerate(doc["probes"]))
    return Manifest(timeout_ms=doc.get("timeout_ms"), sandboxes=frozenset(doc.get("sandboxes", {})),
                    cases=cases, sha256=hashlib.sha256(raw).hexdigest(), version=doc["version"])


def load_manifest(path: str | Path = DEFAULT_MANIFEST) -> Manifest:
    """Read and validate a manifest file (default ``mcp-eval.manifest.json`` in the working directory).

    Raises:
        ManifestError: the file cannot be read or the manifest is invalid (exit 2).
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ManifestError(f"cannot read manifest {path}: {exc.strerror}") from None
    return parse_manifest(raw, source=str(path))


def coerce_manifest(manifest: Manifest | str | Path | bytes | Mapping[str, Any]) -> Manifest:
    """A validated manifest from what ``run_probes`` accepts: itself, a file path, bytes or a parsed object.

    Raises:
        ManifestError: the file cannot be read or the manifest is invalid (exit 2).
    """
    if isinstance(manifest, Manifest):
        return manifest
    if isinstance(manifest, str | Path):
        return load_manifest(manifest)
    return parse_manifest(manifest)


def select_cases(manifest: Manifest, *, probe: str | None = None, case_id: str | None = None,
                 allow_mutation: bool = False) -> tuple[ProbeCase, ...]:
    """Select the cases to run and apply the mutation double gate (SPEC 8.1-8.2).

    Args:
        manifest: a validated manifest.
        probe: run only cases of this kind.
        case_id: run only the case with this id (exclusive with ``probe``).
        allow_mutation: the operator's ``--allow-mutation``.

    Returns:
        The selected cases in manifest order.

    Raises:
        UsageError: both selectors, nothing selected, or a mutating case without ``allow_mutation``.
    """
    if probe is not None and case_id is not None:
        raise UsageError("select a probe kind or a case id, not both")
    cases = manifest.cases
    if probe is not None:
        cases = tuple(c for c in cases if c.probe == probe)
    if case_id is not None:
        cases = tuple(c for c in cases if c.id == case_id)
    if not cases:
        raise UsageError("no probe cases selected")
    for case in cases:
        sandboxed = case.sandbox is not None and case.sandbox in manifest.sandboxes
        require_mutation(case.access, sandboxed=sandboxed, allow_mutation=allow_mutation, what="probes")
    return cases


def require_mutation(access: str, *, sandboxed: bool, allow_mutation: bool, what: str) -> None:
    """The mutation double gate (SPEC 8.1): a mutating entry needs a declared sandbox AND the operator's
    ``--allow-mutation``; read-only entries pass.

    Args:
        access: the entry's declared access. sandboxed: it names a declared sandbox.
        allow_mutation: the operator's flag. what: the entries' name in the message (``probes``, ``calls``).

    Raises:
        UsageError: ``mutating <what> require --allow-mutation``.
    """
    if access == "mutating" and not (sandboxed and allow_mutation):
        raise UsageError(f"mutating {what} require --allow-mutation")
