"""``generate``: a read-only probe manifest that reproduces a finding (SPEC 8.5).

The arguments are rebuilt from the recorded shape, never from values (the journal holds none): an enum,
a boolean and a number come back as themselves, and every string, URL and id becomes a placeholder the
user fills in before ``verify``; the probe kind follows the finding's class, and the attempts follow its
failure rate (``attempts_to_observe``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..journal.audit import audited
from ..jsonfmt import JSONFormatError, dumps, loads
from ..privacy.grammar import valid_tool
from ..root import Root, RootLike
from ..root.outputs import write_new_file
from ..textsafe import escape_controls as escape
from .findings import get_finding
from .scoring import attempts_to_observe

__all__ = ["MAX_EXPECT_BYTES", "Generated", "Placeholder", "generate_case", "generate_manifest",
           "rebuild_arguments"]

MAX_EXPECT_BYTES = 64 * 1024
UUID_PLACEHOLDER = "00000000-0000-0000-0000-000000000000"
_NUM = re.compile(r"num:(-?[0-9][0-9.eE+\-]*)")


@dataclass(frozen=True)
class Placeholder:
    """An argument the user must fill: its dotted key path and the recorded shape (compact JSON text)."""

    path: str
    shape: str


@dataclass(frozen=True)
class Generated:
    """A generated manifest: the document, the probe kind, its attempts, and the placeholders."""

    probe_id: str
    kind: str
    max_attempts: int | None
    document: dict[str, Any]
    placeholders: tuple[Placeholder, ...] = field(default=())

    def manifest_text(self) -> str:
        """The manifest as pretty JSON with a trailing newline (what ``--output`` receives)."""
        return dumps(self.document, sort_keys=False, indent=2) + "\n"

    def stdout_lines(self, output: str) -> list[str]:
        """What ``generate`` prints (SPEC 8.5): the id, the probe line, one ``fill:`` line per
        placeholder, then the reminder when there are any."""
        attempts = "" if self.max_attempts is None else f" max_attempts={self.max_attempts}"
        probe = f"probe={self.kind}{attempts}"
        lines = [self.probe_id, probe,
                 *(f"fill: {escape(p.path, newlines=False)} ({p.shape})" for p in self.placeholders)]
        if self.placeholders:
            lines.append(f"fill the placeholders in {output} before mcpeval-nb verify")
        return lines


class _NotAShape(UsageError):
    def __init__(self) -> None:
        super().__init__("finding arguments are not a recorded argument shape")


def _scalar(token: str, path: str, holes: list[Placeholder]) -> Any:
    if token == "null":
        return None
    if token in ("bool:true", "bool:false"):
        return token == "bool:true"
    if token.startswith("enum:"):
        return token[5:]
    number = _NUM.fullmatch(token)
    if number is not None:
        value = loads(number.group(1))
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
    if token == "uuid":
        holes.append(Placeholder(path, token))
        return UUID_PLACEHOLDER
    if token.startswith(("str<", "str>", "url:")):
        holes.append(Placeholder(path, token))
        return ""
    raise _NotAShape()


def _rebuild(shape: Any, path: str, holes: list[Placeholder]) -> Any:
    if isinstance(shape, str):
        return _scalar(shape, path, holes)
    if not isinstance(shape, dict):
        raise _NotAShape()
    count = shape.get("array")
    if set(shape) == {"array", "items"} and isinstance(count, int) and not isinstance(count, bool) \
            and count >= 0:
        if count > 0:
            holes.append(Placeholder(path, dumps(shape, sort_keys=True)))
        return []
    return {key: _rebuild(value, f"{path}.{key}" if path else key, holes) for key, value in shape.items()}


def rebuild_arguments(shape: Any) -> tuple[dict[str, Any], tuple[Placeholder, ...]]:
    """Arguments that match a recorded shape, and the placeholders left to fill (in key-path order).

    Raises:
        UsageError: the value is not an argument shape (``finding arguments are not a recorded argument
            shape``).
    """
    if not isinstance(shape, dict):
        raise _NotAShape()
    holes: list[Placeholder] = []
    args = _rebuild(shape, "", holes)
    assert isinstance(args, dict)
    return args, tuple(sorted(holes, key=lambda h: h.path))


def _expectation(expect: bytes | None, klass: str) -> Any:
    if expect is None:
        return None
    if len(expect) > MAX_EXPECT_BYTES:
        raise UsageError("--expect must be at most 64 KiB of JSON")
    try:
        value = loads(expect)
    except JSONFormatError:
        raise UsageError("--expect is not valid JSON") from None
    if not isinstance(value, dict):
        raise UsageError("--expect must be an Expectation object")
    if klass == "false-success" and not (value.get("required_result_fields") or value.get("equals")
                                         or value.get("required_result_paths") or value.get("equals_paths")
                                         or value.get("outcome") == "error"):
        raise UsageError("a false-success finding needs --expect with a result assertion or an "
                         "expected error")
    return value


def _probe(klass: str, rate: float, retryable: int | None, expect: Any) -> tuple[str, dict[str, Any]]:
    if expect is not None:
        return "instruction-fidelity", {"expect": expect}
    if klass in ("false-success", "blocked-optimal-path"):
        raise UsageError(f"a {klass} finding needs --expect: say what the call should have returned")
    if klass == "unstable-error-code":
        if retryable is None:
            raise UsageError("the finding's failures disagree on retryability; write the case by hand")
        return "error-honesty", {"max_attempts": min(attempts_to_observe(rate), 20),
                                 "expect_retryable": bool(retryable)}
    return "degradation-over-n", {"max_attempts": attempts_to_observe(rate)}


def generate_case(finding_id: str, *, tool: str | None, args: Any, rate: float, klass: str,
                  retryable: int | None, expect: bytes | None = None) -> Generated:
    """The read-only, sandbox-free manifest of one finding.

    Args:
        finding_id: becomes the case id. tool: the finding's tool. args: the recorded argument shape.
        rate: the failure rate. klass: the finding class. retryable: 1, 0 or None (mixed).
        expect: an Expectation JSON document (``--expect``), at most 64 KiB.

    Raises:
        UsageError: no tool in the grammar, arguments that are not a shape, or a class that needs
            ``--expect``.
    """
    if tool is None or not valid_tool(tool):
        raise UsageError("the finding has no tool that can be called")
    arguments, holes = rebuild_arguments(args)
    kind, extra = _probe(klass, rate, retryable, _expectation(expect, klass))
    case: dict[str, Any] = {"id": finding_id, "probe": kind, "access": "read_only", "tool": tool,
                            "arguments": arguments, **extra}
    document = {"version": 1, "sandboxes": {}, "probes": [case]}
    return Generated(probe_id=finding_id, kind=kind, max_attempts=extra.get("max_attempts"),
                     document=document, placeholders=holes)


def generate_manifest(root: RootLike, finding_id: str, *, confirm_read_only: bool = False,
                      output: Path | str | None = None, force: bool = False,
                      expect: bytes | str | None = None) -> Generated:
    """The read-only manifest that reproduces a finding of the last promotion (SPEC 8.5).

    Args:
        root: the capture root. finding_id: the finding (any issue of the last promotion).
        confirm_read_only: the operator attests the finding's tool is read-only (required to write;
            a preview with ``output=None`` needs none).
        output: write the manifest there (a new file unless ``force``).
        expect: an Expectation JSON document (``--expect``), at most 64 KiB.

    Returns:
        The ``Generated`` manifest (``stdout_lines(output)`` is what ``generate`` prints).

    Raises:
        UsageError: no attestation, a class that needs ``expect``, an existing output without ``force``.
        FindingsError: no usable index, or no such finding.
    """
    if output is None:  # a preview writes nothing out of the store
        return _generate(root, finding_id, confirm_read_only=False, output=None, force=force, expect=expect)
    with audited(Root.of(root).path, "generate", finding=finding_id) as entry:
        entry.paths.append(output)
        generated = _generate(root, finding_id, confirm_read_only=confirm_read_only, output=output,
                              force=force, expect=expect)
        entry.counts.update(cases=1, placeholders=len(generated.placeholders))
    return generated


def _generate(root: RootLike, finding_id: str, *, confirm_read_only: bool, output: Path | str | None,
              force: bool, expect: bytes | str | None) -> Generated:
    if output is not None and not confirm_read_only:
        raise UsageError("read-only generation requires explicit --confirm-read-only attestation")
    finding = get_finding(root, finding_id)
    shape = {} if finding.repro is None else loads(finding.repro)
    data = expect.encode("utf-8") if isinstance(expect, str) else expect
    generated = generate_case(finding.finding_id, tool=finding.tool, args=shape, rate=finding.rate,
                              klass=finding.klass, retryable=finding.retryable, expect=data)
    if output is not None:
        write_new_file(Path(output), generated.manifest_text(), force=force)
    return generated
