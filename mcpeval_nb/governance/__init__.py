"""Data governance for the capture root: retention by days, erasure of a session or a server, the audit
log, and the resolved configuration (docs/governance.md).

``erase`` and ``retention`` rewrite journals in place under the journal locks (``rewrite.py``), with an
intent file the next command uses to finish an interrupted run (``intent.py``); every export, erasure,
retention pass and verify appends to ``<root>/audit.jsonl`` (``audit.py``), which never fails the
action it describes.
"""

from __future__ import annotations

from .audit import audit_lines, audit_log, read_audit, record
from .config import ConfigReport, resolve_config
from .erasure import EraseResult, erase, recover
from .retention import RetentionResult, RetentionTimer, apply_retention, configured_retention

__all__ = [
    "ConfigReport",
    "EraseResult",
    "RetentionResult",
    "RetentionTimer",
    "apply_retention",
    "audit_lines",
    "audit_log",
    "configured_retention",
    "erase",
    "read_audit",
    "record",
    "recover",
    "resolve_config",
]
