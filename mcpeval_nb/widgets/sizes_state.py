"""The probe panel's "result sizes" mode: its state and its table (labels and numbers only).

A call manifest file (mcp-xray's ``calls: [{tool, args}]``) is loaded and validated here; the run itself
is ``probe_result_sizes`` on the panel's target and label.  The mutation tick follows the probe mode's
rule: it can be set only when the loaded manifest has a mutating call that names a sandbox, and loading
another manifest clears it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mcpeval_nb import (
    CallManifest,
    CallSize,
    ManifestError,
    ResultSizes,
    RootLike,
    SizesOptions,
    load_call_manifest,
)

from ._html import table

__all__ = ["SizesState", "sizes_table"]


@dataclass
class SizesState:
    """What the result-sizes mode shows.

    Attributes:
        path: the call manifest file. manifest: the validated manifest, or None. error: why it was refused.
        allow_mutation: the user's tick (kept only when a sandboxed mutating call is listed).
        running: a run is in progress. done / total: calls made / listed. rows: the rows so far.
        result: the last run. status: one short line (labels and counts only).
    """

    path: str = ""
    manifest: CallManifest | None = field(default=None, repr=False)
    error: str | None = None
    allow_mutation: bool = False
    running: bool = False
    done: int = 0
    total: int = 0
    rows: list[CallSize] = field(default_factory=list)
    result: ResultSizes | None = field(default=None, repr=False)
    status: str = "no call manifest yet"

    def load(self, path: str | Path) -> bool:
        """Read and validate a call manifest file; keep it or the refusal (which never quotes a value)."""
        self.path, self.allow_mutation = str(path), False
        try:
            self.manifest = load_call_manifest(Path(path).expanduser())
        except ManifestError as exc:
            self.manifest, self.error = None, str(exc)
            self.status = "call manifest invalid"
            return False
        self.error = None
        self.status = f"call manifest valid: {len(self.manifest.calls)} call(s)"
        return True

    @property
    def mutation_available(self) -> bool:
        """The manifest lists a mutating call that names a sandbox (the first half of the gate)."""
        calls = () if self.manifest is None else self.manifest.calls
        return any(c.access == "mutating" and c.sandbox is not None for c in calls)

    def set_allow_mutation(self, value: bool) -> bool:
        """Tick or clear the box; refused without a sandboxed mutating call. Returns the value kept."""
        self.allow_mutation = bool(value) and self.mutation_available
        return self.allow_mutation

    def options(self, *, server: str, root: RootLike, protocol: str = "auto") -> SizesOptions:
        """The run's options from this state (``protocol``: the panel's era choice)."""
        return SizesOptions(
            server=server.strip(), root=root, allow_mutation=self.allow_mutation and self.mutation_available,
            protocol=protocol,
        )

    def start(self) -> None:
        """Reset progress for a run of the loaded manifest."""
        self.total = 0 if self.manifest is None else len(self.manifest.calls)
        self.done, self.rows, self.result, self.running = 0, [], None, True
        self.status = f"calling 0/{self.total}"

    def apply(self, index: int, total: int, row: CallSize) -> None:
        """Fold one finished call into the rows."""
        self.rows.append(row)
        self.done, self.total = index, total
        self.status = f"calling {index}/{total}"

    def finish(self, result: ResultSizes) -> None:
        """Keep the run and its totals line."""
        self.result, self.rows, self.running = result, list(result.calls), False
        t = result.totals()
        self.status = (
            f"{t['calls']} call(s), {t['errors']} error(s), {t['result_bytes']} result bytes, "
            f"~{t['tokens']} tokens" + ("" if result.reached else "; server not reached")
        )

    def fail(self, message: str) -> None:
        """End a run that raised, with a content-free message."""
        self.running, self.status = False, message


def _num(value: int | None) -> str:
    return "" if value is None else str(value)


def sizes_table(rows: list[CallSize]) -> str:
    """The "Result sizes (per call)" table as HTML."""
    if not rows:
        return ""
    body = [
        (
            r.index,
            r.tool,
            r.outcome if r.reason is None else f"{r.outcome}: {r.reason}",
            _num(r.text_chars),
            _num(r.result_bytes),
            _num(r.tokens),
            ", ".join(f"{k}:{n}" for k, n in sorted(r.content.items())),
            _num(r.structured_bytes),
            _num(r.latency_ms),
        )
        for r in rows
    ]
    return table(
        ("#", "tool", "outcome", "chars", "bytes", "tokens", "items", "structured", "latency ms"),
        body,
        css_class="mcpeval-sizes",
    )
