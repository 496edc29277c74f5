"""Result-size probing from a call manifest (mcp-xray's ``calls: [{tool, args}]``): docs/sizes.md.

``manifest`` reads call and capture manifests (YAML or JSON, schema-checked, 1 MiB), ``gate`` applies
the probe runner's mutation gate to them, ``measure`` turns one result into numbers, ``run`` makes the
calls (``probe_result_sizes``), ``report`` renders them, ``history`` keeps one point per run in
``store/probes/sizes.jsonl``, ``table`` turns the history into an Arrow table for charts.  ``phases``
captures a phase-swapped server phase by phase from a capture manifest (the same gate and run plan) and
says what changed between its phases.
"""

from __future__ import annotations

from .history import SizePoint, load_size_history, record_sizes, sizes_path
from .manifest import (
    CallManifest,
    CaptureManifest,
    CapturePhase,
    ListedCall,
    load_call_manifest,
    load_capture_manifest,
    parse_call_manifest,
    parse_capture_manifest,
)
from .measure import CallSize
from .report import RESULT_SIZES_SCHEMA, ResultSizes
from .run import SizesOptions, probe_result_sizes

__all__ = [
    "RESULT_SIZES_SCHEMA",
    "CallManifest",
    "CallSize",
    "CaptureManifest",
    "CapturePhase",
    "ListedCall",
    "ResultSizes",
    "SizePoint",
    "SizesOptions",
    "load_call_manifest",
    "load_capture_manifest",
    "load_size_history",
    "parse_call_manifest",
    "parse_capture_manifest",
    "probe_result_sizes",
    "record_sizes",
    "sizes_path",
]
