"""``capture_phases``: walk a phase-swapped server through a capture manifest and snapshot each phase.

The first phase is captured before any call; each later phase runs exactly its listed advance calls, in
order (each through the same gate as ``sizes``: the mutation double gate before the server starts, the
catalog half against the tools listed in the phase before), then lists the tools again and captures.  One
connection for the whole walk (a phase lives in the server's memory).  Any advance call that errors, a
lost transport, or a refusal ends the capture: ``OUT-DIR`` is written like the share envelope (an
owner-only staging directory beside it, then one atomic rename), so a refused or failed capture leaves
the previous directory exactly as it was.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...clock import now_ts
from ...errors import ProbeError, ShareOutputError, TransportError
from ...jsonfmt import dumps
from ...probe.plan import Work, open_run
from ...root import Root
from ...root.outputs import PHASES
from ...transport.messages import Target
from ...transport.session import McpSession
from ..gate import check_authority, check_listed
from ..manifest import CaptureManifest, CapturePhase, coerce_manifest
from ..run import SizesOptions, plan_calls
from .snapshot import snapshot_of, surface_count

__all__ = ["INDEX_FILE", "INDEX_SCHEMA", "PhaseCapture", "capture_phases"]

INDEX_SCHEMA = "mcpeval-nb.phases/v1"
INDEX_FILE = "phases.json"

#: ``progress(index, total, phase_name, snapshot)`` after each phase is captured.
PhaseProgress = Callable[[int, int, str, dict[str, Any]], None]


@dataclass(frozen=True)
class PhaseCapture:
    """A published capture: where it is and what each phase holds (labels and numbers)."""

    dest: Path
    index: dict[str, Any]

    @property
    def phases(self) -> list[dict[str, Any]]:
        """The index entries: ``name``, ``file``, ``tool_count``, ``total_tokens``."""
        return list(self.index["phases"])


def _output(dest: str | Path, root: Path) -> Path:
    """The resolved OUT-DIR: absent, empty, or a previous capture (holding ``phases.json``)."""
    out = PHASES.resolve(dest, root=root)
    if out.is_dir() and os.listdir(out) and not (out / INDEX_FILE).is_file():
        raise ShareOutputError(
            f"capture-phases output is not empty and holds no earlier capture "
            f"({INDEX_FILE}); choose another directory: {out}"
        )
    return out


class _Walk:
    def __init__(self, session: McpSession, salt: bytes, journal: Any) -> None:
        self.session, self.salt, self.journal = session, salt, journal

    def advance(self, phase: CapturePhase) -> None:
        assert self.session is not None
        catalog = self.session.list_tools()
        check_listed(phase.advance, catalog, where=f"phase {phase.name} advance call")
        for call in phase.advance:
            try:
                outcome = self.session.call_tool(call.tool, dict(call.args))
            except TransportError as exc:
                raise ProbeError(
                    f"phase {phase.name}: advance call #{call.index} lost the transport "
                    f"({exc.reason}); nothing was published"
                ) from None
            if self.journal is not None:
                self.journal.record(call.tool, dict(call.args), outcome)
            if not outcome.ok:
                raise ProbeError(
                    f"phase {phase.name}: advance call #{call.index} answered {outcome.kind}; "
                    "nothing was published"
                )

    def capture(self, phase: CapturePhase, index: int) -> dict[str, Any]:
        catalog = self.session.list_tools()
        return snapshot_of(
            phase.name,
            index,
            catalog,
            self.salt,
            resources=surface_count(self.session, "resources"),
            prompts=surface_count(self.session, "prompts"),
        )


def _write(stage: Path, name: str, doc: Any) -> None:
    fd = os.open(stage / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(dumps(doc, sort_keys=True, indent=2) + "\n")


def _publish(out: Path, index: dict[str, Any], snapshots: list[dict[str, Any]]) -> None:
    def fill(stage: Path) -> None:
        for entry, snap in zip(index["phases"], snapshots, strict=True):
            _write(stage, entry["file"], snap)
        _write(stage, INDEX_FILE, index)

    PHASES.build(out, fill=fill)


def capture_phases(
    target: Target | str | Sequence[str],
    *,
    capture_manifest: CaptureManifest | str | Path | bytes | Mapping[str, Any],
    out_dir: str | Path,
    options: SizesOptions,
    progress: PhaseProgress | None = None,
    cancel: threading.Event | None = None,
) -> PhaseCapture:
    """Capture every phase of a capture manifest into ``out_dir`` (published atomically).

    Args:
        target: a ``StdioTarget``/``HttpTarget``, a URL string, or a command argv.
        capture_manifest: a validated ``CaptureManifest``, a YAML/JSON path, its bytes, or a mapping.
        out_dir: the output directory: absent, empty, or an earlier capture (replaced whole).
        options: label, mutation flag, root (for the salt and the synthetic journal), journal switch.
        progress: called after each phase with ``(index, total, name, snapshot)``.
        cancel: when set, the capture stops before the next call (nothing is published).

    Returns:
        The published capture.

    Raises:
        UsageError: invalid label or manifest, a mutating advance call without ``allow_mutation``, an
            advance tool the phase does not list or a read-only advance call of a writer, an unusable
            output (``ShareOutputError``).
        ProbeError: an advance call errored or lost the transport, or publishing failed.
        TransportError: the server could not be reached.  In every error case nothing is published.
    """
    def work() -> Work[CapturePhase]:
        loaded: CaptureManifest = coerce_manifest(capture_manifest, CaptureManifest)
        check_authority([c for p in loaded.phases for c in p.advance], allow_mutation=options.allow_mutation)
        return Work(items=loaded.phases, manifest_sha256=loaded.sha256)

    plan = plan_calls(target, options, work)
    home = Root.of(options.root)
    out = _output(out_dir, home.path)
    ctx = open_run(plan, cancel=cancel)
    snapshots: list[dict[str, Any]] = []
    with ctx.connect() as session:
        walk = _Walk(session, home.salt(), ctx.journal)
        for i, phase in enumerate(plan.work.items):
            ctx.check_cancel()
            if i:
                walk.advance(phase)
            snapshots.append(walk.capture(phase, i + 1))
            if progress is not None:
                progress(i + 1, len(plan.work.items), phase.name, snapshots[-1])
    entries = [
        {
            "name": s["phase"],
            "file": f"{i + 1:02d}-{s['phase']}.json",
            "tool_count": s["tool_count"],
            "total_tokens": s["total_tokens"],
        }
        for i, s in enumerate(snapshots)
    ]
    index = {
        "schema": INDEX_SCHEMA,
        "server": options.server,
        "manifest_sha256": plan.work.manifest_sha256,
        "captured_at": now_ts(),
        "phases": entries,
    }
    _publish(out, index, snapshots)
    return PhaseCapture(dest=out, index=index)
