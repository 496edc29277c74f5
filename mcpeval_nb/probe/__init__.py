"""The probe engine: manifests, probe kinds, the runner and probe reports (SPEC 8-9)."""

from __future__ import annotations

from .manifest import (
    DEFAULT_MANIFEST,
    Manifest,
    ProbeCase,
    load_manifest,
    manifest_schema,
    manifest_schema_text,
    parse_manifest,
    select_cases,
)
from .reasons import PROBE_KINDS, REASON_LABELS, REASONS, TRANSPORT_REASONS, hint_for, is_reason

__all__ = [
    "DEFAULT_MANIFEST",
    "PROBE_KINDS",
    "REASONS",
    "REASON_LABELS",
    "TRANSPORT_REASONS",
    "Manifest",
    "ProbeCase",
    "hint_for",
    "is_reason",
    "load_manifest",
    "manifest_schema",
    "manifest_schema_text",
    "parse_manifest",
    "select_cases",
]
