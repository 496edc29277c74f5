"""Which calls a replay makes: the recorded mix sampled, arguments synthesised from shapes and the manifest.

1. **Draw.** ``sample`` calls from the recorded mix, weighted as recorded: a tool by its calls, then one
   of its kept argument shapes by its calls (a call of a shape the profile did not keep is drawn too,
   with its weight, and skipped as ``shape-not-kept``), from ``random.Random(("replay", seed))``.
2. **Authority.** A tool is called only because a human wrote it into the manifest: its cases (every
   field that names a tool: ``tool``, ``failure_tool``, ... and workflow steps) give its access.  A tool no
   case names is skipped (``not-in-manifest``); a tool with a mutating case needs a sandbox and
   ``allow_mutation`` (the probe runner's gate, ``probe.manifest.require_mutation``), else it is skipped
   (``mutation-gated``).  After the first ``tools/list``, the catalog half (``probe.kinds.access_refusal``)
   skips a tool the build no longer lists (``not-listed``) and a read-only call of a writer (``writer``).
3. **Arguments.** ``generate``'s rules (``triage.generate.rebuild_arguments``): enums, booleans and numbers
   come back as themselves, and every string, URL, id and non-empty array is a placeholder that needs a
   ``fill`` value: the value at the same dotted key path in the arguments of a manifest case of that tool
   (the first that has one).  A call with a placeholder no case fills is skipped (``unfillable``).

Skipped calls are counted per tool and reason; nothing about them is sent anywhere.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError
from ..probe.cases import ProbeCase
from ..probe.manifest import Manifest, require_mutation
from ..sizes.manifest import ListedCall
from ..triage.generate import rebuild_arguments
from .profile import MockProfile, ShapeProfile

__all__ = ["SKIP_REASONS", "Authority", "Mix", "ToolAuthority", "authority_of", "draw_mix"]

#: Why a drawn call was not made, in report order.
SKIP_REASONS = ("not-in-manifest", "mutation-gated", "not-listed", "writer", "unfillable", "shape-not-kept")
_ARGUMENT_FIELDS = (("tool", "arguments"), ("failure_tool", "failure_arguments"),
                    ("recovery_tool", "recovery_arguments"), ("validation_tool", "validation_arguments"),
                    ("trigger_tool", "trigger_arguments"))
_OTHER = object()


@dataclass(frozen=True)
class ToolAuthority:
    """What the manifest says about one tool: its access, the sandbox of a mutating case, and the
    arguments of every case that calls it (in manifest order; in memory only)."""

    access: str = "read_only"
    sandbox: str | None = None
    arguments: tuple[Mapping[str, Any], ...] = field(default=(), repr=False)


Authority = dict[str, ToolAuthority]


def _calls_of(case: ProbeCase) -> Iterable[tuple[str, Any]]:
    for tool_key, args_key in _ARGUMENT_FIELDS:
        if isinstance(case.fields.get(tool_key), str):
            yield case.fields[tool_key], case.fields.get(args_key)
    for step in case.fields.get("steps", ()):
        yield step["tool"], step.get("arguments")


def authority_of(manifest: Manifest) -> Authority:
    """Per tool, what the manifest's cases say (see the module docstring)."""
    out: Authority = {}
    for case in manifest.cases:
        for tool, args in _calls_of(case):
            known = out.get(tool, ToolAuthority())
            mutating = case.access == "mutating" or known.access == "mutating"
            sandbox = known.sandbox or (case.sandbox if case.access == "mutating" else None)
            kept = (*known.arguments, args) if isinstance(args, Mapping) else known.arguments
            out[tool] = ToolAuthority("mutating" if mutating else "read_only", sandbox, kept)
    return out


def _lookup(arguments: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    value: Any = arguments
    for key in path.split("."):
        if not isinstance(value, Mapping) or key not in value:
            return False, None
        value = value[key]
    return True, value


def _assign(arguments: dict[str, Any], path: str, value: Any) -> None:
    keys = path.split(".")
    node = arguments
    for key in keys[:-1]:
        node = node[key]
    node[keys[-1]] = value


def synthesise(shape: Any, cases: tuple[Mapping[str, Any], ...]) -> dict[str, Any] | None:
    """Arguments for a recorded shape, placeholders filled from the manifest's arguments; None when a
    placeholder has no fill value (or the shape is not an argument shape)."""
    if shape is None:
        return {}
    try:
        arguments, holes = rebuild_arguments(shape)
    except UsageError:
        return None
    for hole in holes:
        found = next((v for ok, v in (_lookup(c, hole.path) for c in cases) if ok), _OTHER)
        if found is _OTHER:
            return None
        _assign(arguments, hole.path, found)
    return arguments


@dataclass
class Mix:
    """The calls a replay will make, and the drawn calls it will not (counted per tool and reason)."""

    calls: list[ListedCall] = field(default_factory=list)
    skipped: dict[str, dict[str, int]] = field(default_factory=dict)
    drawn: dict[str, int] = field(default_factory=dict)

    def skip(self, tool: str, reason: str) -> None:
        """Count one drawn call of ``tool`` that is not made, and why."""
        reasons = self.skipped.setdefault(tool, {})
        reasons[reason] = reasons.get(reason, 0) + 1


def _gated(authority: ToolAuthority, allow_mutation: bool) -> bool:
    try:
        require_mutation(authority.access, sandboxed=authority.sandbox is not None,
                         allow_mutation=allow_mutation, what="probes")
    except UsageError:
        return True
    return False


def draw_mix(profile: MockProfile, authority: Authority, *, sample: int, seed: int,
             allow_mutation: bool) -> Mix:
    """Draw ``sample`` calls from the recorded mix and synthesise their arguments (module docstring).

    Raises:
        UsageError: ``sample`` is not a positive number, or the profile has no recorded call to draw.
    """
    if isinstance(sample, bool) or not isinstance(sample, int) or sample <= 0:
        raise UsageError("--sample must be a positive number of calls")
    tools = [t for t in profile.tools if t.calls > 0]
    if not tools:
        raise UsageError(f"no recorded calls of {profile.server} to replay in the window")
    rng = random.Random(f"replay\x00{seed}")
    mix = Mix()
    for index in range(1, sample + 1):
        tool = rng.choices(tools, weights=[t.calls for t in tools])[0]
        options: list[ShapeProfile | None] = [*tool.shapes, None]
        shape = rng.choices(options, weights=[s.calls for s in tool.shapes] + [tool.other_shape_calls])[0]
        mix.drawn[tool.name] = mix.drawn.get(tool.name, 0) + 1
        said = authority.get(tool.name)
        if said is None:
            mix.skip(tool.name, "not-in-manifest")
        elif _gated(said, allow_mutation):
            mix.skip(tool.name, "mutation-gated")
        elif shape is None:
            mix.skip(tool.name, "shape-not-kept")
        elif (arguments := synthesise(shape.shape, said.arguments)) is None:
            mix.skip(tool.name, "unfillable")
        else:
            mix.calls.append(ListedCall(index=index, tool=tool.name, args=arguments, access=said.access,
                                        sandbox=said.sandbox))
    return mix
