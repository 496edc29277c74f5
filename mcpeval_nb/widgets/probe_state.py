"""The probe panel's state: target, manifest, options, the mutation gate, progress and the last report.

Plain data plus the rules the view applies; no widgets here, so every rule is testable on its own.

The mutation gate: a run may touch state only when the validated manifest declares at least one
mutating case that names a declared sandbox AND the user ticked the separately labelled allow-mutation
box for this exact manifest.  Any change to the manifest (a new SHA-256, or an invalid document) clears
the tick; with no sandboxed mutating case the tick cannot be set at all.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

from mcpeval_nb import (
    Manifest,
    ManifestError,
    ProbeOptions,
    ProbeReport,
    ProgressEvent,
    RootLike,
    UsageError,
    hint_for,
    parse_manifest,
)

__all__ = ["CaseRow", "ProbeState", "mutating_cases"]

_AT = re.compile(r"^(?P<msg>.*) \(at (?P<path>/[^()]*)\)$", re.S)


def mutating_cases(manifest: Manifest | None) -> tuple[str, ...]:
    """Ids of the cases that declare ``access: mutating`` and name a declared sandbox."""
    if manifest is None:
        return ()
    return tuple(c.id for c in manifest.cases
                 if c.access == "mutating" and c.sandbox is not None and c.sandbox in manifest.sandboxes)


@dataclass
class CaseRow:
    """One case as the panel shows it (labels and numbers only).

    Attributes:
        id: the case id. probe: its kind. verdict: ``pending``, ``running``, ``pass``, ``fail``,
            ``error`` or ``not-run``. reason: the reason label. hint: the reason's fixed hint.
        attempts: calls made. measurements: ``name=value`` pairs of the case's measurements.
    """

    id: str
    probe: str
    verdict: str = "pending"
    reason: str | None = None
    hint: str | None = None
    attempts: int | None = None
    measurements: str = ""


@dataclass
class ProbeState:
    """Everything the probe panel shows; the view renders it and never holds more.

    Attributes:
        target_kind: ``stdio`` or ``http``. command: the stdio command line. url: the loopback URL.
        server: the server label for the report and journal.
        protocol: the protocol era (``auto``, ``legacy``, ``2026-07-28``), for probe and sizes runs.
        manifest_text: the editor's text (the user's own manifest; never server output).
        manifest: the validated manifest, or None. manifest_error / manifest_error_path: the first
            validation error and the JSON path it names.
        probe_kind: run only this kind (None: every case). gate_only: skip the readiness battery.
        confirm_read_only: attest unannotated tools are read-only. skip_tools: tools the battery skips.
        allow_mutation: the user's explicit tick (see the module docstring for when it counts).
        running: a run is in progress. done / total: cases finished / selected.
        rows: one row per selected case. battery: ``idle``, ``running``, ``done``, ``error``, ``skipped``.
        report: the last report. status: one short line for the user (labels and counts only).
    """

    target_kind: str = "stdio"
    command: str = ""
    url: str = ""
    server: str = "probe"
    protocol: str = "auto"
    manifest_text: str = ""
    manifest: Manifest | None = field(default=None, repr=False)
    manifest_error: str | None = None
    manifest_error_path: str | None = None
    probe_kind: str | None = None
    gate_only: bool = False
    confirm_read_only: bool = False
    skip_tools: tuple[str, ...] = ()
    allow_mutation: bool = False
    running: bool = False
    done: int = 0
    total: int = 0
    rows: list[CaseRow] = field(default_factory=list)
    battery: str = "idle"
    report: ProbeReport | None = field(default=None, repr=False)
    status: str = "no manifest yet"

    # -- manifest and the mutation gate ------------------------------------------------------------
    def set_manifest_text(self, text: str, *, source: str = "editor") -> None:
        """Validate ``text`` as a manifest; keep the manifest or the first error and its JSON path."""
        before = None if self.manifest is None else self.manifest.sha256
        self.manifest_text = text
        try:
            self.manifest = parse_manifest(text, source=source)
        except ManifestError as exc:
            self.manifest = None
            match = _AT.match(str(exc))
            self.manifest_error = match.group("msg") if match else str(exc)
            self.manifest_error_path = match.group("path") if match else None
        else:
            self.manifest_error = self.manifest_error_path = None
        if self.manifest is None or self.manifest.sha256 != before:
            self.allow_mutation = False
        self.status = self._manifest_status()

    def _manifest_status(self) -> str:
        if self.manifest is None:
            return "manifest invalid" if self.manifest_text.strip() else "no manifest yet"
        return f"manifest valid: {len(self.manifest.cases)} case(s)"

    @property
    def mutation_available(self) -> bool:
        """The manifest declares a sandboxed mutating case (the first half of the gate)."""
        return bool(mutating_cases(self.manifest))

    def set_allow_mutation(self, value: bool) -> bool:
        """Tick or clear the allow-mutation box; a tick without a sandboxed mutating case is refused.

        Returns:
            The value actually kept.
        """
        self.allow_mutation = bool(value) and self.mutation_available
        return self.allow_mutation

    @property
    def effective_allow_mutation(self) -> bool:
        """Both halves of the gate hold: the run may execute mutating cases."""
        return self.allow_mutation and self.mutation_available

    # -- target and options ------------------------------------------------------------------------
    def target(self) -> str | list[str]:
        """The run target: the URL, or the command line split like a shell would.

        Raises:
            UsageError: an empty command or URL, or a command line that does not split.
        """
        if self.target_kind == "http":
            if not self.url.strip():
                raise UsageError("target: enter the server's loopback URL")
            return self.url.strip()
        try:
            argv = shlex.split(self.command)
        except ValueError:
            raise UsageError("target: the command line has an unclosed quote") from None
        if not argv:
            raise UsageError("target: enter the command that starts the server")
        return argv

    def options(self, *, root: RootLike) -> ProbeOptions:
        """The ``ProbeOptions`` of a run from this state (no battery when gate-only; the runner skips it
        for a selected kind and records the full run's trend point under ``root``)."""
        return ProbeOptions(server=self.server.strip(), probe=self.probe_kind, root=root,
                            allow_mutation=self.effective_allow_mutation,
                            battery=None if self.gate_only else "standard",
                            confirm_read_only=self.confirm_read_only, skip_tools=tuple(self.skip_tools),
                            protocol=self.protocol)

    @staticmethod
    def parse_skip(text: str) -> tuple[str, ...]:
        """Tool names from a comma- or space-separated list."""
        return tuple(dict.fromkeys(part for part in re.split(r"[,\s]+", text) if part))

    # -- a run -------------------------------------------------------------------------------------
    def start(self, case_ids: Sequence[tuple[str, str]]) -> None:
        """Reset progress for a run of ``(id, probe)`` cases."""
        self.rows = [CaseRow(id=cid, probe=probe) for cid, probe in case_ids]
        self.total, self.done, self.running, self.report = len(self.rows), 0, True, None
        self.battery = "skipped" if self.gate_only else "idle"
        self.status = f"running 0/{self.total}"

    def _row(self, case_id: str | None) -> CaseRow | None:
        return next((r for r in self.rows if r.id == case_id), None)

    def apply(self, event: ProgressEvent) -> None:
        """Fold one progress event into the rows and the status line."""
        row = self._row(event.case_id)
        if event.phase == "start" and row is not None:
            row.verdict = "running"
        elif event.phase == "done" and row is not None:
            row.verdict, row.reason = event.verdict or "error", event.reason
            row.hint = None if event.reason is None else hint_for(event.reason)
            self.done += 1
        elif event.phase == "battery-start":
            self.battery = "running"
        elif event.phase == "battery-done":
            self.battery = "error" if event.verdict == "error" else "done"
        elif event.phase == "cancelled":
            for r in self.rows:
                if r.verdict in ("pending", "running"):
                    r.verdict = "not-run"
        self.status = ("running readiness battery" if self.battery == "running"
                       else f"running {self.done}/{self.total}")

    def finish(self, report: ProbeReport) -> None:
        """Keep the report and fill every row from it (a battery the runner never started is skipped)."""
        self.report, self.running = report, False
        if self.battery == "idle" and not report.cancelled:
            self.battery = "skipped"
        by_id = {c.id: c for c in report.cases}
        for row in self.rows:
            case = by_id.get(row.id)
            if case is None:
                row.verdict = "not-run"
                continue
            row.verdict = "pass" if case.passed else ("error" if case.errored else "fail")
            row.reason, row.hint, row.attempts = case.reason, case.hint, case.attempts
            row.measurements = " ".join(f"{k}={v}" for k, v in case.measurements.items()
                                        if isinstance(v, int | float) and not isinstance(v, bool))
        gate = report.gate or {"passed": 0, "total": 0}
        score = None if report.readiness is None else report.readiness.score
        parts = [f"gate {gate['passed']}/{gate['total']} passed"]
        if score is not None:
            parts.append(f"readiness {score}/100")
        if report.readiness_error is not None:
            parts.append(f"readiness error {report.readiness_error}")
        if report.cancelled:
            parts.append(f"cancelled: {len(report.not_run)} not run")
        self.status = "; ".join(parts)

    def fail(self, message: str) -> None:
        """End a run that raised: keep a content-free message."""
        self.running = False
        for r in self.rows:
            if r.verdict in ("pending", "running"):
                r.verdict = "not-run"
        self.status = message
