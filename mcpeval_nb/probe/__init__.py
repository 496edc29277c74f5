"""The probe engine: manifests, probe kinds, the runner and probe reports (SPEC 8-9)."""

from __future__ import annotations

from .cases import CaseResult, Detail, ProbeCase
from .context import ProbeOptions, ProgressEvent, RunContext
from .kinds.table import PROBE_KINDS, probe_kinds
from .manifest import (
    DEFAULT_MANIFEST,
    Manifest,
    load_manifest,
    manifest_schema,
    manifest_schema_text,
    parse_manifest,
    select_cases,
)
from .plan import make_target
from .reasons import REASON_LABELS, REASONS, TRANSPORT_REASONS, hint_for, is_reason, reason_hints
from .report import ProbeReport, parse_report
from .runner import run_probes

__all__ = [
    "DEFAULT_MANIFEST",
    "PROBE_KINDS",
    "REASONS",
    "REASON_LABELS",
    "TRANSPORT_REASONS",
    "CaseResult",
    "Detail",
    "Manifest",
    "ProbeCase",
    "ProbeOptions",
    "ProbeReport",
    "ProgressEvent",
    "RunContext",
    "hint_for",
    "is_reason",
    "load_manifest",
    "make_target",
    "manifest_schema",
    "manifest_schema_text",
    "parse_manifest",
    "parse_report",
    "probe_kinds",
    "reason_hints",
    "run_probes",
    "select_cases",
]
