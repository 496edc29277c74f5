"""The audit log's public home in governance: the log itself is ``journal.audit`` (one layer down, so
that every export, the Parquet export of ``tables`` included, can record there)."""

from __future__ import annotations

from ..journal.audit import (
    ACTIONS,
    AUDIT_NAME,
    EXPORT_ACTIONS,
    OUTCOMES,
    AuditEntry,
    audit_lines,
    audit_log,
    audit_path,
    audited,
    outcome_of,
    read_audit,
    reason_of,
    record,
)

__all__ = ["ACTIONS", "AUDIT_NAME", "EXPORT_ACTIONS", "OUTCOMES", "AuditEntry", "audit_lines", "audit_log",
           "audit_path", "audited", "outcome_of", "read_audit", "reason_of", "record"]
