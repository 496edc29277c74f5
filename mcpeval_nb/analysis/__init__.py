"""Pure functions over the store's Arrow tables: call selection, latency, outcomes, error templates,
annotations, readiness history, protocol eras and multi-request operations.  Each takes a
``pyarrow.Table`` (or a pandas frame with the same columns) and returns a new ``pyarrow.Table`` whose
columns are documented on the function.

Names load from their modules on first use (``_lazy``): importing one module of the package (``catalog``
for serve, ``readiness`` for a trend's delta) runs no other, so what needs none of the frames does not load
pandas."""

from __future__ import annotations

from .._lazy import exports as _exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .annotations import join_annotations as join_annotations
    from .filters import FILTER_COLUMNS as FILTER_COLUMNS
    from .filters import call_label as call_label
    from .filters import filter_calls as filter_calls
    from .latency import PERCENTILES as PERCENTILES
    from .latency import format_ms as format_ms
    from .latency import latency_over_time as latency_over_time
    from .latency import latency_summary as latency_summary
    from .latency import slowest_tools as slowest_tools
    from .operations import OPERATIONS_SCHEMA as OPERATIONS_SCHEMA
    from .operations import era_mix as era_mix
    from .operations import operation_summary as operation_summary
    from .outcomes import OUTCOMES as OUTCOMES
    from .outcomes import outcome_rates as outcome_rates
    from .outcomes import wilson_interval as wilson_interval
    from .readiness import readiness_history as readiness_history
    from .readiness import trend_delta as trend_delta
    from .templates import error_templates as error_templates
    from .templates import template_changes as template_changes
    from .templates import template_daily as template_daily

_EXPORTS: dict[str, tuple[str, ...]] = {
    ".annotations": ("join_annotations",),
    ".filters": ("FILTER_COLUMNS", "call_label", "filter_calls"),
    ".latency": ("PERCENTILES", "format_ms", "latency_over_time", "latency_summary", "slowest_tools"),
    ".operations": ("OPERATIONS_SCHEMA", "era_mix", "operation_summary"),
    ".outcomes": ("OUTCOMES", "outcome_rates", "wilson_interval"),
    ".readiness": ("readiness_history", "trend_delta"),
    ".templates": ("error_templates", "template_changes", "template_daily"),
}

del TYPE_CHECKING  # not a public name
__all__, __getattr__, __dir__ = _exports(globals(), _EXPORTS)
