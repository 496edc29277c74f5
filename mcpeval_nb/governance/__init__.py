"""Data governance for the capture root: retention by days, erasure of a session or a server, and the
audit log (docs/governance.md; the resolved configuration, ``config``, is ``mcpeval_nb.configuration``).

``erase`` and ``retention`` rewrite journals in place under the journal locks (``rewrite.py``), with an
intent file the next writer uses to finish an interrupted run (``intent.py``); every export, erasure,
retention pass and verify appends to ``<root>/audit.jsonl`` (``audit.py``), which never fails the
action it describes.
"""

from __future__ import annotations

from .audit import audit_lines, audit_log, read_audit, record
from .erasure import EraseResult, erase, recover
from .retention import RetentionResult, RetentionTimer, apply_retention, configured_retention

__all__ = [
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
]
