"""Call manifests and capture manifests: mcp-xray's two shapes, read strictly (docs/sizes.md).

``calls: [{tool, args}]`` (``sizes``) and ``phases: [{name, advance: [{tool, args}]}]``
(``capture-phases``), in YAML (PyYAML ``safe_load`` rules, aliases refused) or JSON, at most 1 MiB.  Our
only extra keys are ``access`` and ``sandbox`` per call; anything else is refused.  The structure is
checked by the published schemas (``schemas/calls.schema.json``, ``schemas/capture.schema.json``) with the
package's own checker, then the access rules.  Messages name the file, the entry index and the field,
never a value: a key the manifest chose prints as ``*``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ManifestError, MCPEvalError
from ..jsonfmt import JSONFormatError, loads
from ..limits import MAX_CALL_MANIFEST_BYTES
from ..schemacheck import Violation, packaged_checker

__all__ = [
    "CallManifest",
    "CaptureManifest",
    "CapturePhase",
    "ListedCall",
    "coerce_manifest",
    "load_call_manifest",
    "load_capture_manifest",
    "parse_call_manifest",
    "parse_capture_manifest",
    "read_bounded",
]

_KNOWN_KEYS = frozenset({"calls", "phases", "tool", "args", "access", "sandbox", "name", "advance"})
_MESSAGES = {
    "additionalProperties": "unknown field (a call allows tool, args, access and sandbox; a phase name "
    "and advance; the document calls or phases)",
    "type": "has the wrong JSON type",
    "pattern": "is outside its grammar",
    "enum": "must be read_only or mutating",
    "minItems": "must list at least one entry",
    "maxItems": "lists too many entries",
}


@dataclass(frozen=True)
class ListedCall:
    """One call a human wrote down.

    Attributes:
        index: 1-based position in its list. tool: the tool name (tool grammar).
        args: the arguments (in memory only: sent as written, journaled only as shapes).
        access: ``read_only`` or ``mutating``. sandbox: the sandbox a mutating call names, else None.
    """

    index: int
    tool: str
    args: Mapping[str, Any] = field(repr=False)
    access: str = "read_only"
    sandbox: str | None = None


@dataclass(frozen=True)
class CallManifest:
    """A validated call manifest: the calls in order and the SHA-256 of the bytes parsed."""

    calls: tuple[ListedCall, ...]
    sha256: str


@dataclass(frozen=True)
class CapturePhase:
    """One phase: its label and the advance calls made before it is captured."""

    name: str
    advance: tuple[ListedCall, ...]


@dataclass(frozen=True)
class CaptureManifest:
    """A validated capture manifest: the phases in order and the SHA-256 of the bytes parsed."""

    phases: tuple[CapturePhase, ...]
    sha256: str


def _pointer(path: tuple[str | int, ...]) -> str:
    parts = [str(p) if isinstance(p, int) or p in _KNOWN_KEYS else "*" for p in path]
    return "/" + "/".join(parts)


def _where(path: tuple[str | int, ...]) -> str:
    """``calls entry #2: `` / ``phase #1 advance call #3: `` for a path, or nothing at the top."""
    text = ""
    for i, part in enumerate(path[:-1]):
        nxt = path[i + 1]
        if isinstance(nxt, int) and part in ("calls", "phases", "advance"):
            text += {"calls": "calls entry", "phases": "phase", "advance": "advance call"}[str(part)]
            text += f" #{nxt + 1} "
    return text.rstrip() + ": " if text else ""


def _field(path: tuple[str | int, ...]) -> str:
    last = path[-1] if path else None
    return f"field `{last}`" if isinstance(last, str) and last in _KNOWN_KEYS else "value"


def _message(error: Violation) -> tuple[tuple[str | int, ...], str]:
    path = tuple(error.absolute_path)
    if error.validator == "required":
        missing = next(n for n in error.validator_value if n not in error.instance)
        return path, f"missing field `{missing}`"
    if error.validator == "additionalProperties":
        return path, _MESSAGES["additionalProperties"]
    return path, f"{_field(path)} {_MESSAGES.get(str(error.validator), 'breaks the schema')}"


def _fail(source: str, path: tuple[str | int, ...], message: str) -> ManifestError:
    return ManifestError(f"{source}: {_where(path)}{message} (at {_pointer(path)})")


def read_bounded(path: str | Path, limit: int, *, what: str, error: type[MCPEvalError],
                 note: str = "") -> bytes:
    """The bytes of a small input file, never reading more than one byte past ``limit``.

    Raises:
        MCPEvalError: (``error``) unreadable (``cannot read <what> <path>: <reason>``) or over the limit
            (``<path>: <what> exceeds <n> MiB<note>``).
    """
    try:
        with open(path, "rb") as handle:
            raw = handle.read(limit + 1)
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror}") from None
    if len(raw) > limit:
        raise error(f"{path}: {what} exceeds {limit // (1024 * 1024)} MiB{note}")
    return raw


def _read(path: str | Path) -> bytes:
    return read_bounded(path, MAX_CALL_MANIFEST_BYTES, what="manifest", error=ManifestError,
                        note="; refused before any call")


#: Nesting a manifest may use (serde_json's limit, SPEC 0.5).
_MAX_DEPTH = 128


def _yaml(text: str, source: str) -> Any:
    import yaml

    class _NoAliases(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no types
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                line = self.peek_event().start_mark.line + 1
                raise ManifestError(f"{source}: YAML aliases are refused (line {line})")
            return super().compose_node(parent, index)

    try:
        return yaml.load(text, Loader=_NoAliases)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ManifestError(f"{source}: manifest is not valid YAML or JSON{where}") from None
    except RecursionError:  # PyYAML composes nested nodes recursively
        raise ManifestError(f"{source}: manifest is nested too deeply (at most {_MAX_DEPTH} levels)") \
            from None
    except ValueError:  # an integer past the interpreter's digit limit (4300 digits)
        raise ManifestError(f"{source}: manifest holds a number too long to read") from None


def _decode(raw: bytes, source: str) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ManifestError(f"{source}: manifest is not UTF-8 text") from None
    if source.endswith(".json"):
        try:
            return loads(raw)
        except JSONFormatError:
            raise ManifestError(f"{source}: manifest is not valid JSON") from None
    try:
        return loads(raw)
    except JSONFormatError:
        return _yaml(text, source)


def _json_data(value: Any, path: tuple[str | int, ...], source: str, depth: int = 0) -> None:
    """Refuse what YAML can say and JSON cannot (dates, binary, sets, non-string keys, inf/nan)."""
    bad = depth > _MAX_DEPTH
    if isinstance(value, dict):
        bad = bad or not all(isinstance(k, str) for k in value)
        for key, item in value.items() if not bad else ():
            _json_data(item, (*path, key), source, depth + 1)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _json_data(item, (*path, i), source, depth + 1)
    elif isinstance(value, float):
        bad = not math.isfinite(value)
    elif not (value is None or isinstance(value, str | int | bool)):
        bad = True
    if bad:
        raise _fail(
            source,
            path,
            "value is not JSON data (YAML dates, binary, sets, non-string keys, "
            "non-finite numbers and nesting past 128 levels are refused)",
        )


def _document(data: bytes | str | Mapping[str, Any], source: str, schema: str) -> tuple[Any, bytes]:
    if isinstance(data, Mapping):
        from ..jsonfmt import dumps

        raw = dumps(dict(data), sort_keys=True).encode("utf-8")
    else:
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    if len(raw) > MAX_CALL_MANIFEST_BYTES:
        raise ManifestError(f"{source}: manifest exceeds 1 MiB; refused before any call")
    doc = _decode(raw, source)
    if not isinstance(doc, dict):
        raise ManifestError(f"{source}: manifest must be a mapping (at /)")
    _json_data(doc, (), source)
    errors = [_message(e) for e in packaged_checker(schema).iter_errors(doc)]
    if errors:
        path, message = min(errors, key=lambda e: [(0, p) if isinstance(p, int) else (1, p) for p in e[0]])
        raise _fail(source, path, message)
    return doc, raw


def _call(entry: dict[str, Any], index: int, path: tuple[str | int, ...], source: str) -> ListedCall:
    access, sandbox = entry.get("access", "read_only"), entry.get("sandbox")
    if access == "read_only" and sandbox is not None:
        raise _fail(source, (*path, "sandbox"), "a read-only call must not name a sandbox")
    if access == "mutating" and sandbox is None:
        raise _fail(source, path, "a mutating call must name a sandbox")
    return ListedCall(index=index + 1, tool=entry["tool"], args=entry["args"], access=access, sandbox=sandbox)


def parse_call_manifest(
    data: bytes | str | Mapping[str, Any], *, source: str = "call manifest"
) -> CallManifest:
    """Parse and validate a call manifest (``calls: [{tool, args}]``).

    Args:
        data: the file's bytes or text (YAML or JSON), or a parsed mapping.
        source: how messages name it (a path).

    Returns:
        The calls in order.

    Raises:
        ManifestError: over 1 MiB, not YAML/JSON data, an unknown or missing key, a wrong type, a name
            outside its grammar, or an access rule broken (exit 2; nothing was called).
    """
    doc, raw = _document(data, source, "calls")
    calls = tuple(_call(c, i, ("calls", i), source) for i, c in enumerate(doc["calls"]))
    return CallManifest(calls=calls, sha256=hashlib.sha256(raw).hexdigest())


def parse_capture_manifest(
    data: bytes | str | Mapping[str, Any], *, source: str = "capture manifest"
) -> CaptureManifest:
    """Parse and validate a capture manifest (``phases: [{name, advance: [{tool, args}]}]``).

    The first phase is captured before any call, so it may not list advance calls; names are unique.

    Raises:
        ManifestError: as ``parse_call_manifest``, a repeated phase name, or advance calls on the first
            phase (exit 2; nothing was called).
    """
    doc, raw = _document(data, source, "capture")
    phases: list[CapturePhase] = []
    for i, phase in enumerate(doc["phases"]):
        if phase["name"] in {p.name for p in phases}:
            raise _fail(source, ("phases", i, "name"), "phase names must be unique")
        if i == 0 and phase.get("advance"):
            raise _fail(
                source,
                ("phases", 0, "advance"),
                "the first phase is captured before any call; it must not list advance calls",
            )
        advance = tuple(
            _call(c, j, ("phases", i, "advance", j), source) for j, c in enumerate(phase.get("advance", ()))
        )
        phases.append(CapturePhase(name=phase["name"], advance=advance))
    return CaptureManifest(phases=tuple(phases), sha256=hashlib.sha256(raw).hexdigest())


def load_call_manifest(path: str | Path) -> CallManifest:
    """Read (at most 1 MiB) and validate a call manifest file.

    Raises:
        ManifestError: unreadable, too large or invalid (see ``parse_call_manifest``).
    """
    return parse_call_manifest(_read(path), source=str(path))


def load_capture_manifest(path: str | Path) -> CaptureManifest:
    """Read (at most 1 MiB) and validate a capture manifest file.

    Raises:
        ManifestError: unreadable, too large or invalid (see ``parse_capture_manifest``).
    """
    return parse_capture_manifest(_read(path), source=str(path))


def coerce_manifest(value: Any, kind: type[CallManifest] | type[CaptureManifest]) -> Any:
    """A validated manifest of ``kind`` from itself, a file path (``str`` or ``Path``), its bytes, or a
    parsed mapping.

    Raises:
        ManifestError: as ``load_call_manifest`` / ``parse_call_manifest`` (or their capture twins).
    """
    if isinstance(value, kind):
        return value
    calls = kind is CallManifest
    if isinstance(value, str | Path):
        return load_call_manifest(value) if calls else load_capture_manifest(value)
    return parse_call_manifest(value) if calls else parse_capture_manifest(value)
