"""ipywidgets panels over the public API: explore captures, probe a server, follow readiness, review,
rank and verify findings, watch tool catalogs.

Each panel keeps its state in a plain dataclass (``panel.state``) and renders it; long work runs on a
worker thread with progress and a Cancel button, and ``panel.wait(timeout)`` blocks until it settles.
Panels show labels, counts, shaped arguments and numbers only, never raw payloads.
"""

from __future__ import annotations

from .catalog_panel import CatalogPanel, CatalogState
from .explorer_panel import ExplorerPanel
from .explorer_state import ExplorerFilters, ExplorerState
from .findings_panel import FindingsPanel
from .findings_state import FindingRow, FindingsDetail, FindingsState
from .probe_panel import ProbePanel
from .probe_state import CaseRow, ProbeState, mutating_cases
from .review_panel import ReviewPanel
from .review_state import CHECKLIST, ReviewState
from .trends_panel import TrendsPanel, TrendsState

__all__ = [
    "CHECKLIST",
    "CaseRow",
    "CatalogPanel",
    "CatalogState",
    "ExplorerFilters",
    "ExplorerPanel",
    "ExplorerState",
    "FindingRow",
    "FindingsDetail",
    "FindingsPanel",
    "FindingsState",
    "ProbePanel",
    "ProbeState",
    "ReviewPanel",
    "ReviewState",
    "TrendsPanel",
    "TrendsState",
    "mutating_cases",
]
