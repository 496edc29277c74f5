"""Phase capture from a capture manifest (mcp-xray's ``phases: [{name, advance: [{tool, args}]}]``).

``snapshot`` turns one phase's catalog into content-free facts, ``capture`` walks the phases and
publishes ``OUT-DIR`` atomically (``capture_phases``), ``render`` reads a capture back and says what
changed between phases (``load_phases``).  See docs/sizes.md.
"""

from __future__ import annotations

from .capture import INDEX_SCHEMA, PhaseCapture, capture_phases
from .render import PHASE_DIFF_SCHEMA, PhaseChange, PhaseView, load_phases
from .snapshot import SNAPSHOT_SCHEMA

__all__ = [
    "INDEX_SCHEMA",
    "PHASE_DIFF_SCHEMA",
    "SNAPSHOT_SCHEMA",
    "PhaseCapture",
    "PhaseChange",
    "PhaseView",
    "capture_phases",
    "load_phases",
]
