"""ipywidgets panels over the public API: explore captures, probe a server, follow readiness, review,
rank and verify findings, watch tool catalogs.

Each panel keeps its state in a plain dataclass (``panel.state``) and renders it; long work runs on a
worker thread with progress and a Cancel button, and ``panel.wait(timeout)`` blocks until it settles.
Panels show labels, counts, shaped arguments and numbers only, never raw payloads.

``import mcpeval_nb.widgets`` loads nothing heavy: each name is imported from its module on first use
(``_NAMES``), and a panel loads ipywidgets, and matplotlib only when it draws its first picture.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .catalog_panel import CatalogPanel as CatalogPanel
    from .catalog_panel import CatalogState as CatalogState
    from .explorer_panel import ExplorerPanel as ExplorerPanel
    from .explorer_state import ExplorerFilters as ExplorerFilters
    from .explorer_state import ExplorerState as ExplorerState
    from .findings_panel import FindingsPanel as FindingsPanel
    from .findings_state import FindingRow as FindingRow
    from .findings_state import FindingsDetail as FindingsDetail
    from .findings_state import FindingsState as FindingsState
    from .probe_panel import ProbePanel as ProbePanel
    from .probe_state import CaseRow as CaseRow
    from .probe_state import ProbeState as ProbeState
    from .probe_state import mutating_cases as mutating_cases
    from .review_panel import ReviewPanel as ReviewPanel
    from .review_state import CHECKLIST as CHECKLIST
    from .review_state import ReviewState as ReviewState
    from .trends_panel import TrendsPanel as TrendsPanel
    from .trends_panel import TrendsState as TrendsState

#: Where each public name lives (the module is imported on first access).
_NAMES = {
    "CHECKLIST": "review_state", "CaseRow": "probe_state", "CatalogPanel": "catalog_panel",
    "CatalogState": "catalog_panel", "ExplorerFilters": "explorer_state",
    "ExplorerPanel": "explorer_panel", "ExplorerState": "explorer_state", "FindingRow": "findings_state",
    "FindingsDetail": "findings_state", "FindingsPanel": "findings_panel", "FindingsState": "findings_state",
    "ProbePanel": "probe_panel", "ProbeState": "probe_state", "ReviewPanel": "review_panel",
    "ReviewState": "review_state", "TrendsPanel": "trends_panel", "TrendsState": "trends_panel",
    "mutating_cases": "probe_state",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_NAMES])
