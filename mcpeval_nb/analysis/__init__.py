"""Pure functions over the store's Arrow tables: call selection, latency, outcomes, error templates,
annotations, readiness history, protocol eras and multi-request operations.  Each takes a
``pyarrow.Table`` (or a pandas frame with the same columns) and returns a new ``pyarrow.Table`` whose
columns are documented on the function."""

from __future__ import annotations

from .annotations import join_annotations
from .filters import FILTER_COLUMNS, call_label, filter_calls
from .latency import PERCENTILES, format_ms, latency_over_time, latency_summary, slowest_tools
from .operations import OPERATIONS_SCHEMA, era_mix, operation_summary
from .outcomes import OUTCOMES, outcome_rates, wilson_interval
from .readiness import readiness_history, trend_delta
from .templates import error_templates, template_changes, template_daily

__all__ = [
    "FILTER_COLUMNS",
    "OPERATIONS_SCHEMA",
    "OUTCOMES",
    "PERCENTILES",
    "call_label",
    "era_mix",
    "error_templates",
    "filter_calls",
    "format_ms",
    "join_annotations",
    "latency_over_time",
    "latency_summary",
    "operation_summary",
    "outcome_rates",
    "readiness_history",
    "slowest_tools",
    "template_changes",
    "template_daily",
    "trend_delta",
    "wilson_interval",
]
