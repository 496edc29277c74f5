"""``verify``: run one probe case against a server and move the finding's lifecycle (SPEC 12.4).

Every precondition is checked before any server starts: the case id is an identifier, the manifest is
valid and holds the case, the case calls a tool, the mutation double gate passes, the finding was
promoted and its tool is the case's tool, and it has a lifecycle.  The case is selected once
(``probe.plan.select``: the mutation gate) and runs through the one probe run (``plan_probes`` with
``case_id``, then ``run_plan``: the same limits, mutation gate and synthetic journal records as
``probe``).  A case that could not complete (a transport reason) changes nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..clock import now_ms
from ..errors import UsageError
from ..governance import audit
from ..htmltext import lines_html
from ..privacy.grammar import valid_identifier
from ..probe.context import ProbeOptions, ProgressEvent
from ..probe.eras import DEFAULT_ERA
from ..probe.manifest import Manifest, coerce_manifest
from ..probe.plan import plan_probes, select
from ..probe.report import ProbeReport
from ..probe.runner import run_plan
from ..root import Root, RootLike
from ..transport.messages import Target
from .findings import list_findings
from .lifecycle import lifecycle
from .mirror import mirror_verify

__all__ = ["VerifyResult", "verify_finding"]


@dataclass(frozen=True)
class VerifyResult:
    """One verify run.

    Attributes:
        finding_id / probe_id: the finding and the case that verified it.
        state / consecutive_passes: the lifecycle after the run (unchanged when ``errored``).
        passed: the case's verdict. errored: it could not complete (transport); nothing changed.
        reason / hint: the failure reason label and its remediation hint (red or errored runs).
        report: the probe report of the run.
    """

    finding_id: str
    probe_id: str
    state: str
    consecutive_passes: int
    passed: bool
    errored: bool
    reason: str | None
    hint: str | None
    report: ProbeReport

    @property
    def exit_code(self) -> int:
        """0 green, 1 red, 3 when the case could not complete (SPEC 9.4)."""
        return 3 if self.errored else (0 if self.passed else 1)

    def lines(self) -> list[str]:
        """SPEC 9.5's verify line (red adds the reason), then a hint line when there is one."""
        line = (
            f"{self.finding_id} state={self.state} probe={self.probe_id} "
            f"consecutive_passes={self.consecutive_passes}"
        )
        if not self.passed:
            line += f" reason={self.reason}"
        out = [line]
        if self.errored:
            out.append("  the case could not complete: the lifecycle is unchanged")
        if self.hint:
            out.append(f"  hint: {self.hint}")
        return out

    def _repr_html_(self) -> str:
        """How a notebook cell shows it (the same lines as the CLI prints)."""
        return lines_html("verify", self.lines())

def verify_finding(
    root: RootLike,
    finding_id: str,
    *,
    case: str,
    manifest: Manifest | str | Path | bytes | Mapping[str, Any],
    target: Target | str | Sequence[str],
    allow_mutation: bool = False,
    allow_remote_http: bool = False,
    progress: Callable[[ProgressEvent], None] | None = None,
    cancel: threading.Event | None = None,
    protocol: str = DEFAULT_ERA,
) -> VerifyResult:
    """Verify a finding with one manifest case and apply the SPEC 12.4 transition.

    Every run, and every refused one, appends a record to ``<root>/audit.jsonl`` (finding id, case,
    verdict; docs/governance.md).  ``protocol`` is the era (``--protocol``: ``auto``, ``legacy``,
    ``2026-07-28``).  The rest is ``_verify_finding``'s contract, below.
    """
    base = Root.of(root).path
    labels = {"finding": finding_id, "case": case}
    try:
        result = _verify_finding(base, finding_id, case=case, manifest=manifest, target=target,
                                 allow_mutation=allow_mutation, allow_remote_http=allow_remote_http,
                                 progress=progress, cancel=cancel, protocol=protocol)
    except BaseException as exc:
        refused = isinstance(exc, UsageError)
        audit.record(base, action="verify", outcome="refused" if refused else "failed",
                     reason="usage-error" if refused else "error", labels=labels)
        raise
    verdict = "errored" if result.errored else ("green" if result.passed else "red")
    audit.record(base, action="verify", outcome="failed" if result.errored else "done",
                 reason=result.reason if result.errored else None,
                 labels={**labels, "verdict": verdict, "state": result.state},
                 counts={"consecutive_passes": result.consecutive_passes})
    return result


def _verify_finding(
    root: RootLike,
    finding_id: str,
    *,
    case: str,
    manifest: Manifest | str | Path | bytes | Mapping[str, Any],
    target: Target | str | Sequence[str],
    allow_mutation: bool = False,
    allow_remote_http: bool = False,
    progress: Callable[[ProgressEvent], None] | None = None,
    cancel: threading.Event | None = None,
    protocol: str = DEFAULT_ERA,
) -> VerifyResult:
    """Verify a finding with one manifest case and apply the SPEC 12.4 transition.

    Args:
        root: the capture root. finding_id: a promoted finding. case: the manifest case id.
        manifest: a path, bytes, parsed object or ``Manifest``. target: the server (command or URL).
        allow_mutation: the operator's half of the mutation double gate (``--allow-mutation``).
        allow_remote_http: permit a non-loopback HTTPS endpoint.
        progress / cancel: as for ``run_probes``.
        protocol: the protocol era (``--protocol``: ``auto``, ``legacy`` or ``2026-07-28``).

    Returns:
        The ``VerifyResult`` (``exit_code``: 0 green, 1 red, 3 could not complete).

    Raises:
        UsageError: a precondition failed (nothing was started). FindingsError: no usable index or
            lifecycle.
    """
    if not valid_identifier(case):
        raise UsageError("--case must be an identifier (a letter, then letters, digits, '_', '.', ':', '-')")
    loaded = coerce_manifest(manifest)
    named = [c for c in loaded.cases if c.id == case]
    if not named:
        raise UsageError(f"probe case {case} is not in the manifest")
    tool = named[0].primary_tool
    if tool is None:
        raise UsageError(
            f"probe case {case} calls no tool; verify needs a case that calls the finding's tool"
        )
    work = select(loaded, case_id=case, allow_mutation=allow_mutation)  # the mutation gate, kept
    base = Root.of(root).path
    promoted = {f.finding_id: f for f in list_findings(base)}
    finding = promoted.get(finding_id)
    if finding is None:
        raise UsageError(
            f"finding {finding_id} is not promoted; run mcpeval-nb promote and mcpeval-nb findings"
        )
    if finding.tool != tool:
        raise UsageError(
            f"probe case {case} calls {tool}, but finding {finding_id} is about {finding.tool or 'unlisted'}"
        )
    with lifecycle(base) as life:
        if life.get(finding_id) is None:
            raise UsageError(f"finding {finding_id} has no lifecycle; run mcpeval-nb promote")
    options = ProbeOptions(
        server=finding.server or "invalid",
        case_id=case,
        allow_mutation=allow_mutation,
        allow_remote_http=allow_remote_http,
        root=base,
        protocol=protocol,
    )
    plan = plan_probes(target, manifest=work, options=options)
    report = run_plan(plan, progress=progress, cancel=cancel)
    result = report.cases[0] if report.cases else None
    if result is None or result.errored:
        with lifecycle(base) as life:
            row = life.get(finding_id)
        assert row is not None
        reason = result.reason if result is not None else "cancelled"
        return VerifyResult(
            finding_id,
            case,
            row.state,
            row.consecutive_passes,
            False,
            True,
            reason,
            None if result is None else result.hint,
            report,
        )
    with lifecycle(base, write=True) as life:
        row = life.record_verify(finding_id, case, passed=result.passed, at=now_ms())
    mirror_verify(base, row, passed=result.passed)  # index.db's copy, for the reference tool (best effort)
    return VerifyResult(
        finding_id,
        case,
        row.state,
        row.consecutive_passes,
        result.passed,
        False,
        result.reason,
        result.hint,
        report,
    )
