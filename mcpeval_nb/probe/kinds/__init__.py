"""Probe kinds: one function per kind label, taking a ``CaseContext`` and returning a ``CaseResult``.

``KIND_TABLE`` (``kinds.table``) describes every kind once: its runner, access rule, ranges and rule.
"""

from __future__ import annotations

from .base import CaseContext, KindFn, access_refusal, failed, is_writer, passed, undeclared_words
from .catalog import estimate_tokens, tool_tokens
from .expect import check_expectation, json_equal, resolve_pointer
from .features import output_conforms
from .table import KIND_TABLE, PROBE_KINDS, KindSpec, Range, probe_kinds

__all__ = [
    "KIND_TABLE",
    "PROBE_KINDS",
    "CaseContext",
    "access_refusal",
    "undeclared_words",
    "KindFn",
    "KindSpec",
    "Range",
    "check_expectation",
    "estimate_tokens",
    "failed",
    "is_writer",
    "json_equal",
    "output_conforms",
    "passed",
    "probe_kinds",
    "resolve_pointer",
    "tool_tokens",
]
