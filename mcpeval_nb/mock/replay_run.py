"""``replay``: the recorded traffic's shape mix against a new build, compared per tool (docs/mock.md).

Built and run like every run that talks to a server: the recorded distributions (``mock_profile``) and
the draw (``replay_mix``: the manifest's authority, the mutation gate's manifest half, arguments from
shapes) are the run's work, planned with ``sizes.run.plan_calls`` over ``probe.plan.plan_run`` (label,
era, work, target: all before a server starts), opened once with ``open_run``, and made one call after
another on the run's ``Link`` (``sizes.run.CallRun``), each journaled as a synthetic record.  After the
first ``tools/list`` the catalog half of the gate (``probe.kinds.access_refusal``) skips tools the build
no longer lists or a read-only call of a writer.  Then ``replay_compare`` judges each tool.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..analysis.catalog import Source
from ..probe.kinds import access_refusal
from ..probe.manifest import Manifest, coerce_manifest
from ..probe.plan import Work, open_run
from ..root import Root
from ..sizes.manifest import ListedCall
from ..sizes.measure import CallSize
from ..sizes.run import CallRun, SizesOptions, plan_calls
from ..transport.messages import Target
from .build import mock_profile
from .profile import MockProfile
from .replay_compare import VERDICTS, compare_tool
from .replay_mix import Mix, authority_of, draw_mix
from .replay_report import ReplayReport

__all__ = ["DEFAULT_SAMPLE", "ReplayProgress", "replay"]

#: Calls drawn when ``sample`` is not given.
DEFAULT_SAMPLE = 200
#: ``progress(done, total, row)`` after each call made (the row holds labels and numbers only).
ReplayProgress = Callable[[int, int, CallSize], None]
_REFUSALS = {"undeclared": "not-listed", "writer": "writer"}


Rows = dict[str, list[CallSize]]


def _rows(run: CallRun, mix: Mix, progress: ReplayProgress | None) -> tuple[Rows, set[str]]:
    """Make the mix's calls; the rows per tool and the tools the build no longer lists."""
    rows: dict[str, list[CallSize]] = {}
    unlisted: set[str] = set()
    catalog = run.ctx.catalog
    for done, call in enumerate(mix.calls, start=1):
        refusal = access_refusal(catalog.get(call.tool), call.access) if catalog is not None else None
        if refusal is not None:
            mix.skip(call.tool, _REFUSALS[refusal])
            if refusal == "undeclared":
                unlisted.add(call.tool)
            continue
        row = run.one(call)
        rows.setdefault(call.tool, []).append(row)
        if progress is not None:
            progress(done, len(mix.calls), row)
    return rows, unlisted


def replay(target: Target | str | Sequence[str], *, server: str,
           manifest: Manifest | str | Path | bytes | Mapping[str, Any], root: Source = None,
           since: Any = None, until: Any = None, sample: int = DEFAULT_SAMPLE, seed: int = 0,
           allow_mutation: bool = False, allow_remote_http: bool = False, protocol: str = "auto",
           timeout_s: float | None = None, env: Mapping[str, str] | None = None,
           profile: MockProfile | None = None, progress: ReplayProgress | None = None,
           cancel: threading.Event | None = None) -> ReplayReport:
    """Replay the recorded mix of ``server`` against ``target`` and compare per tool.

    Args:
        target: the new build: a ``StdioTarget``/``HttpTarget``, a URL, or a command argv.
        server: the recorded server's label (also the synthetic records' label).
        manifest: a probe manifest (a ``Manifest``, a path, bytes or a mapping): which tools may be called,
            with which access, and the ``fill`` values of the placeholders.
        root: the capture root (or an open ``Store``). since / until: the recording's window (UTC days).
        sample: calls to draw. seed: the draw's seed.
        allow_mutation: the operator's half of the mutation gate. allow_remote_http: a remote HTTPS build.
        protocol: the protocol era (``auto``, ``legacy``, ``2026-07-28``). timeout_s: per-call deadline.
        env: variables laid over the inherited environment of a stdio build.
        profile: the recorded distributions, when already built (default: ``mock_profile`` of the window).
        progress: called after each call made. cancel: stops the run between calls.

    Returns:
        The report (``exit_code`` 1 on any regression, 3 when the build was never reached).

    Raises:
        UsageError: an invalid label, day, sample or target, a manifest that is invalid
            (``ManifestError``), nothing recorded to replay. JournalError: the journal could not be written.
    """
    recorded = profile if profile is not None else mock_profile(root, server=server, since=since, until=until)
    home = Root.of(recorded_root(root))
    mix = Mix()

    def work() -> Work[ListedCall]:
        loaded = coerce_manifest(manifest)
        drawn = draw_mix(recorded, authority_of(loaded), sample=sample, seed=seed,
                         allow_mutation=allow_mutation)
        mix.calls, mix.skipped, mix.drawn = drawn.calls, drawn.skipped, drawn.drawn
        timeout = None if loaded.timeout_ms is None else loaded.timeout_ms / 1000
        return Work(items=tuple(drawn.calls), manifest_sha256=loaded.sha256, timeout_s=timeout)

    options = SizesOptions(server=server, allow_mutation=allow_mutation, allow_remote_http=allow_remote_http,
                           root=home.path, journal=True, history=False, env=env, timeout_s=timeout_s,
                           protocol=protocol)
    plan = plan_calls(target, options, work)
    run = CallRun(open_run(plan, cancel=cancel), home.salt(), None)
    try:
        reached = not mix.calls or run.link.open() is not None
        rows, unlisted = _rows(run, mix, progress) if reached else ({}, set())
    finally:
        run.link.close()
    verdicts = [compare_tool(tool, rows.get(tool.name, []), listed=tool.name not in unlisted,
                             skipped=mix.skipped.get(tool.name))
                for tool in recorded.tools if tool.name in mix.drawn]
    verdicts.sort(key=lambda v: (VERDICTS.index(v.verdict), v.tool))
    totals: dict[str, int] = {}
    for reasons in mix.skipped.values():
        for reason, n in reasons.items():
            totals[reason] = totals.get(reason, 0) + n
    return ReplayReport(server=server, seed=seed, sample=sample, made=sum(len(r) for r in rows.values()),
                        tools=tuple(verdicts), skipped=totals, reached=reached, since=recorded.since,
                        until=recorded.until)


def recorded_root(root: Source) -> Any:
    """The capture root of ``root`` (a root path, None, or an open ``Store``)."""
    from ..tables.store import Store

    return root.root if isinstance(root, Store) else root
