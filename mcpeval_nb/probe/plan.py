"""The run plan: what a run decides before any server starts, validated once; and the run it opens.

Every run that talks to a server (``run_probes``, ``verify``, ``compare``, ``score``, ``sizes``,
``capture-phases``) is built here first and opened second, the way httpx keeps building a request apart
from sending it (``Client.send`` -> auth -> redirects -> one request, ``_client.py:879-1030``):

1. ``plan_run`` builds a ``RunPlan``, checking in one order: the server label, the battery choice, the
   protocol era, then the run's work (``Work``: the manifest, its selection and the manifest half of the
   mutation gate, supplied by the kind of run), then the target; the limits come from the options and the
   manifest.  ``plan_probes`` is ``plan_run`` with a probe manifest's work (``select``).
2. ``open_run`` opens the plan's one ``RunContext``: the shared budget (its clock starts here), the
   synthetic journal (the root's salt is read here, not before), the cancel scope and the plan's era,
   through which every connection of the run is opened.

A plan has touched neither a server nor the capture root, so a refused run changes nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from ..errors import UsageError
from ..limits import MAX_EVAL_REQUESTS, MAX_EVAL_SECONDS
from ..privacy.grammar import valid_server
from ..root import Root
from ..transport.budget import Budget
from ..transport.messages import HttpTarget, StdioTarget, Target
from .cases import ProbeCase
from .context import BATTERIES, ProbeOptions, RunContext, SyntheticJournal
from .eras import check_era
from .manifest import Manifest, coerce_manifest, select_cases

__all__ = [
    "Limits",
    "RunPlan",
    "Work",
    "check_label",
    "make_target",
    "open_run",
    "plan_probes",
    "plan_run",
    "select",
]

W = TypeVar("W")

#: What ``run_probes`` accepts as its manifest: a validated ``Manifest``, a path, bytes or a parsed object.
ManifestInput = Manifest | str | Path | bytes | Mapping[str, Any]


def make_target(target: Target | str | Sequence[str], *, allow_remote_http: bool = False,
                env: Mapping[str, str] | None = None) -> Target:
    """Normalise a target: a URL string becomes an ``HttpTarget``, an argv sequence a ``StdioTarget``.

    Raises:
        UsageError: an empty command or a non-HTTP string.
    """
    if isinstance(target, StdioTarget | HttpTarget):
        return target
    if isinstance(target, str):
        if not target.startswith(("http://", "https://")):
            raise UsageError("a target string must be an http:// or https:// URL; pass a command as a list")
        return HttpTarget(target, allow_remote_http=allow_remote_http)
    argv = tuple(str(part) for part in target)
    if not argv:
        raise UsageError("an HTTP endpoint or stdio command is required")
    return StdioTarget(argv, env=env)


def check_label(server: str) -> None:
    """Refuse a server label outside the label grammar (every run checks it first).

    Raises:
        UsageError: ``server label is invalid``.
    """
    if not valid_server(server):
        raise UsageError("server label is invalid")


@dataclass(frozen=True, kw_only=True)
class Limits:
    """The bounds of one run.

    Attributes:
        max_requests / max_seconds: the shared evaluation budget (SPEC 8.4: 4096 and 300 s).
        timeout_s: the per-request timeout, or None for the transport's (30 s stdio, 5 s HTTP).
    """

    max_requests: int = MAX_EVAL_REQUESTS
    max_seconds: float = MAX_EVAL_SECONDS
    timeout_s: float | None = None

    def budget(self) -> Budget:
        """A fresh budget with these bounds (its wall clock starts now)."""
        return Budget(max_requests=self.max_requests, max_seconds=self.max_seconds)


@dataclass(frozen=True, kw_only=True)
class Work(Generic[W]):
    """What a run will do, past every check that needs no server (for a probe manifest: ``select``).

    Attributes:
        items: the cases (or listed calls, or phases) in the order they run.
        manifest_sha256: the hash of the manifest they came from, or None (a battery-only run).
        timeout_s: the manifest's per-request timeout, or None.
    """

    items: tuple[W, ...] = ()
    manifest_sha256: str | None = None
    timeout_s: float | None = None


@dataclass(frozen=True, kw_only=True)
class RunPlan(Generic[W]):
    """A validated run: built by ``plan_run`` (or ``plan_probes``), opened by ``open_run``.

    Attributes:
        target: the normalised server target. options: the run's options (label, journal, battery).
        work: what the run does. era: the protocol era of every connection (``eras.ERAS``).
        limits: the budget and the per-request timeout.
    """

    target: Target
    options: ProbeOptions
    work: Work[W]
    era: str
    limits: Limits

    @property
    def server(self) -> str:
        """The server label."""
        return self.options.server

    @property
    def runs_battery(self) -> bool:
        """The run ends with the battery: one is named and no ``probe``/``case_id`` selection was made."""
        o = self.options
        return o.battery is not None and o.probe is None and o.case_id is None


def plan_run(target: Target | str | Sequence[str], *, options: ProbeOptions, work: Callable[[], Work[W]],
             era: str | None = None, timeout_s: float | None = None) -> RunPlan[W]:
    """Build a run plan: the one place a run's checks and setup are assembled, in one order.

    Args:
        target: a ``StdioTarget``/``HttpTarget``, a URL string, or a command argv.
        options: the run's options (its label, budget, journal and battery choices).
        work: the kind of run's own checks, made after the label and before the target (manifest,
            selection, the manifest half of the mutation gate); returns what the run will do.
        era: the protocol era of every connection (default: ``options.protocol``, ``auto``).
        timeout_s: the per-request timeout when the work does not set one.

    Returns:
        The plan; nothing has started and nothing was written.

    Raises:
        UsageError: an invalid label, battery, era, work (``ManifestError`` included) or target.
    """
    check_label(options.server)
    if options.battery not in BATTERIES:
        raise UsageError('battery must be "standard" or None')
    era = options.protocol if era is None else era
    check_era(era)
    chosen = work()
    resolved = make_target(target, allow_remote_http=options.allow_remote_http, env=options.env)
    limits = Limits(max_requests=options.max_requests, max_seconds=options.max_seconds,
                    timeout_s=timeout_s if chosen.timeout_s is None else chosen.timeout_s)
    return RunPlan(target=resolved, options=options, work=chosen, era=era, limits=limits)


def select(manifest: ManifestInput, *, probe: str | None = None, case_id: str | None = None,
           allow_mutation: bool = False) -> Work[ProbeCase]:
    """A probe manifest's work: the manifest validated, its cases selected, the mutation gate passed.

    Args:
        manifest: a validated ``Manifest``, a path, manifest bytes, or a parsed manifest object.
        probe / case_id: the selection (``--probe`` / ``--case``). allow_mutation: ``--allow-mutation``.

    Raises:
        ManifestError: an invalid manifest. UsageError: see ``manifest.select_cases``.
    """
    loaded = coerce_manifest(manifest)
    cases = select_cases(loaded, probe=probe, case_id=case_id, allow_mutation=allow_mutation)
    timeout = None if loaded.timeout_ms is None else loaded.timeout_ms / 1000
    return Work(items=cases, manifest_sha256=loaded.sha256, timeout_s=timeout)


def plan_probes(target: Target | str | Sequence[str], *, manifest: ManifestInput | Work[ProbeCase],
                options: ProbeOptions, era: str | None = None) -> RunPlan[ProbeCase]:
    """``run_probes``' plan: ``plan_run`` with the manifest's cases as ``options`` select them.

    Args:
        manifest: as ``select`` takes it, or its ``Work`` already selected (``verify``, ``compare``:
            chosen once, before any server starts).

    Raises:
        UsageError: as ``plan_run`` (an invalid manifest is a ``ManifestError``).
    """
    def work() -> Work[ProbeCase]:
        if isinstance(manifest, Work):
            return manifest
        return select(manifest, probe=options.probe, case_id=options.case_id,
                      allow_mutation=options.allow_mutation)

    return plan_run(target, options=options, work=work, era=era)


def open_run(plan: RunPlan[Any], *, cancel: threading.Event | None = None) -> RunContext:
    """Open the plan's run context: budget, synthetic journal (when the options ask for it), cancel scope.

    Args:
        plan: a plan from ``plan_run``. cancel: the run's cancel event (a ``CancelScope`` also closes
            every session the run opens when it is set).

    Raises:
        JournalError: the capture root's salt cannot be read or created (journaling runs only).
    """
    ctx = RunContext(target=plan.target, options=plan.options, budget=plan.limits.budget(),
                     timeout=plan.limits.timeout_s, era=plan.era, cancel=cancel)
    if plan.options.journal:
        home = Root.of(plan.options.root)
        ctx.journal = SyntheticJournal(home.path, server=plan.server, salt=home.salt(),
                                       session=ctx.session_id)
    return ctx
