"""The run plan: every check in one order before any server starts, built once, opened once, its era used."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpeval_nb import ManifestError, ProbeOptions, StdioTarget, UsageError
from mcpeval_nb.probe.eras import DEFAULT_ERA, LEGACY_ERA
from mcpeval_nb.probe.plan import RunPlan, Work, open_run, plan_probes, plan_run, select
from mcpeval_nb.probe.runner import run_plan
from tests.probe_support import SANDBOXES, case, fixture, manifest, writer_case

PAGES = case("pages", "pagination", max_pages=2)
NOT_A_MANIFEST = {"version": 1, "probes": []}


def _options(**extra: object) -> ProbeOptions:
    return ProbeOptions(**{"server": "fixture", "journal": False, "battery": None, **extra})  # type: ignore[arg-type]


def test_checks_run_in_one_order_label_battery_era_manifest_target() -> None:
    with pytest.raises(UsageError, match="server label is invalid"):
        plan_probes([], manifest=NOT_A_MANIFEST, options=_options(server="bad label"), era="1999-01-01")
    with pytest.raises(UsageError, match='battery must be "standard" or None'):
        plan_probes([], manifest=NOT_A_MANIFEST, options=_options(battery="other"), era="1999-01-01")
    with pytest.raises(UsageError, match="--protocol must be auto, legacy or 2026-07-28"):
        plan_probes([], manifest=NOT_A_MANIFEST, options=_options(), era="1999-01-01")
    with pytest.raises(ManifestError):
        plan_probes([], manifest=NOT_A_MANIFEST, options=_options())
    doc = manifest(writer_case("w", "degradation-over-n", tool="t", arguments={}, max_attempts=2),
                   sandboxes=SANDBOXES)
    with pytest.raises(UsageError, match="mutating probes require --allow-mutation"):
        plan_probes([], manifest=doc, options=_options())
    with pytest.raises(UsageError, match="stdio command is required"):
        plan_probes([], manifest=manifest(PAGES), options=_options())


def test_a_plan_holds_the_selection_limits_and_era_and_touches_nothing(root: Path) -> None:
    doc = manifest(PAGES, case("more", "pagination", max_pages=3), timeout_ms=2500)
    plan = plan_probes(fixture("probe_clean"), manifest=doc,
                       options=_options(case_id="more", journal=True, max_requests=7, root=root))
    assert [c.id for c in plan.work.items] == ["more"] and plan.work.manifest_sha256 is not None
    assert plan.limits.timeout_s == 2.5 and plan.limits.max_requests == 7
    assert plan.era == DEFAULT_ERA == "auto" and isinstance(plan.target, StdioTarget)
    assert not plan.runs_battery
    assert not root.exists()  # no salt, no store: building a plan writes nothing
    ctx = open_run(plan)
    assert ctx.journal is not None and (root / ".salt").exists()  # the run is opened: its journal's salt
    assert ctx.budget.max_requests == 7 and ctx.timeout == 2.5 and ctx.era == plan.era


def test_a_selection_made_once_is_the_plan_s_work_as_it_was() -> None:
    work = select(manifest(PAGES, case("more", "pagination", max_pages=3)), case_id="pages")
    plan = plan_probes(fixture("probe_clean"), manifest=work, options=_options(case_id="pages"))
    assert plan.work is work
    assert [c.id for c in run_plan(plan).cases] == ["pages"]


def test_every_connection_of_a_run_is_opened_in_the_plan_s_era() -> None:
    plan: RunPlan[None] = plan_run(fixture("probe_clean"), options=_options(protocol=LEGACY_ERA), work=Work)
    ctx = open_run(plan)
    with ctx.connect() as session:
        assert session.protocol_version == "2025-06-18" and ctx.negotiated is not None
    assert ctx.budget.used == 1  # the handshake, charged to the run's budget


def test_auto_negotiates_on_the_first_connection_only() -> None:
    plan: RunPlan[None] = plan_run(fixture("probe_clean"), options=_options(), work=Work)
    ctx = open_run(plan)
    with ctx.connect() as session:
        assert session.negotiated is not None and session.negotiated.era == "legacy"
    assert ctx.budget.used == 1  # the handshake; the discover probe a legacy server refused is free
    with ctx.connect():
        pass
    assert ctx.budget.used == 2  # the era is the run's: no second probe
