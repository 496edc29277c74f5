"""mcpeval-nb: privacy-preserving capture and probing for MCP servers, built for Jupyter.

The public API lives here.  ``_EXPORTS`` is the one table of public names (module -> names); the lazy
loader and the sorted ``__all__`` are derived from it, and the ``TYPE_CHECKING`` imports below mirror it
for type checkers (``tests/test_public_api.py`` checks that they agree).  Layers import in one direction:
errors/limits/jsonfmt/_version -> privacy -> journal -> tables/analysis -> probe/capture/review -> this
module -> cli/charts/widgets.

Every public name is loaded on first use (PEP 562), so ``import mcpeval_nb`` and the CLI stay fast:
the shim never pays for pyarrow, pandas, matplotlib or jsonschema.

Raw-content types (sessions, responses, the capture correlator) are deliberately not here: they live in
``mcpeval_nb.transport`` and ``mcpeval_nb.capture``, so code that imports only this module sees no payload.
"""

from __future__ import annotations

import importlib
import typing

from ._version import __version__ as __version__

if typing.TYPE_CHECKING:
    from .analysis import (
        FILTER_COLUMNS as FILTER_COLUMNS,
        OUTCOMES as OUTCOMES,
        PERCENTILES as PERCENTILES,
        call_label as call_label,
        error_templates as error_templates,
        filter_calls as filter_calls,
        join_annotations as join_annotations,
        latency_over_time as latency_over_time,
        latency_summary as latency_summary,
        outcome_rates as outcome_rates,
        readiness_history as readiness_history,
        slowest_tools as slowest_tools,
        template_changes as template_changes,
        template_daily as template_daily,
        wilson_interval as wilson_interval,
    )
    from .capture.annotate import annotate as annotate
    from .capture.correlate import Correlator as Correlator, classify_frame as classify_frame
    from .capture.shim import ShimOptions as ShimOptions, run_shim as run_shim
    from .capture.shim_http import (
        HTTPShim as HTTPShim,
        HTTPShimOptions as HTTPShimOptions,
        run_shim_http as run_shim_http,
    )
    from .errors import (
        DocumentError as DocumentError,
        GrammarError as GrammarError,
        InvalidRecord as InvalidRecord,
        JournalError as JournalError,
        LockTimeout as LockTimeout,
        MCPEvalError as MCPEvalError,
        ManifestError as ManifestError,
        ProbeError as ProbeError,
        ProfileError as ProfileError,
        RecordTooLarge as RecordTooLarge,
        ReviewError as ReviewError,
        SaltError as SaltError,
        ShareOutputError as ShareOutputError,
        ShareRefused as ShareRefused,
        TransportError as TransportError,
        TrendHistoryCorrupt as TrendHistoryCorrupt,
        UsageError as UsageError,
        describe as describe,
    )
    from .home import load_salt as load_salt, resolve_root as resolve_root
    from .journal import (
        JournalEntry as JournalEntry,
        append_record as append_record,
        append_records as append_records,
        read_records as read_records,
    )
    from .privacy import (
        ANNOTATION_KINDS as ANNOTATION_KINDS,
        AnnotationRecord as AnnotationRecord,
        CallRecord as CallRecord,
        EnumIndex as EnumIndex,
        MeasurementProfile as MeasurementProfile,
        TrendPoint as TrendPoint,
        error_info as error_info,
        opaque_session as opaque_session,
        sanitize_shape as sanitize_shape,
        shape as shape,
        skeleton as skeleton,
        template_id as template_id,
        valid_identifier as valid_identifier,
        valid_method as valid_method,
        valid_server as valid_server,
        valid_tool as valid_tool,
    )
    from .probe import (
        BatteryHook as BatteryHook,
        CaseResult as CaseResult,
        Manifest as Manifest,
        ProbeCase as ProbeCase,
        ProbeOptions as ProbeOptions,
        ProbeReport as ProbeReport,
        ProgressEvent as ProgressEvent,
        RunContext as RunContext,
        battery_hook as battery_hook,
        hint_for as hint_for,
        load_manifest as load_manifest,
        make_target as make_target,
        manifest_schema as manifest_schema,
        manifest_schema_text as manifest_schema_text,
        parse_manifest as parse_manifest,
        parse_report as parse_report,
        probe_kinds as probe_kinds,
        reason_hints as reason_hints,
        register_battery as register_battery,
        run_probes as run_probes,
        select_cases as select_cases,
        set_readiness_renderer as set_readiness_renderer,
    )
    from .probe.battery import (
        BatteryOptions as BatteryOptions,
        run_battery as run_battery,
        score_server as score_server,
    )
    from .probe.compare import Comparison as Comparison, compare_servers as compare_servers
    from .probe.diff import ProbeDiff as ProbeDiff, diff_reports as diff_reports
    from .probe.doc_schemas import (
        diff_schema as diff_schema,
        diff_schema_text as diff_schema_text,
        report_schema as report_schema,
        report_schema_text as report_schema_text,
    )
    from .probe.history import (
        load_trends as load_trends,
        record_report_trend as record_report_trend,
        record_trend as record_trend,
        render_trends as render_trends,
        select_recent as select_recent,
        trend_delta as trend_delta,
        trends_text as trends_text,
    )
    from .probe.readiness_text import readiness_lines as readiness_lines
    from .probe.sarif import report_sarif as report_sarif, report_sarif_text as report_sarif_text
    from .probe.scaffold import (
        Scaffold as Scaffold,
        scaffold_manifest as scaffold_manifest,
        write_manifest as write_manifest,
    )
    from .probe.score import (
        BatteryObservations as BatteryObservations,
        CallObservation as CallObservation,
        HonestyObservation as HonestyObservation,
        ToolFacts as ToolFacts,
        ToolRun as ToolRun,
        score_readiness as score_readiness,
    )
    from .probe.score_model import (
        Readiness as Readiness,
        measurement_profile as measurement_profile,
        parse_readiness as parse_readiness,
    )
    from .probe.synth import (
        Synthesis as Synthesis,
        invalid_arguments as invalid_arguments,
        synthesize as synthesize,
    )
    from .review import (
        FlaggedLine as FlaggedLine,
        RedactionReport as RedactionReport,
        ShareOptions as ShareOptions,
        ShareResult as ShareResult,
        check_redaction as check_redaction,
        export_share as export_share,
    )
    from .tables import (
        ANNOTATIONS_SCHEMA as ANNOTATIONS_SCHEMA,
        CALLS_SCHEMA as CALLS_SCHEMA,
        REPORT_SCHEMA as REPORT_SCHEMA,
        Store as Store,
        TRENDS_SCHEMA as TRENDS_SCHEMA,
        open_store as open_store,
    )
    from .transport import (
        Budget as Budget,
        Catalog as Catalog,
        HttpTarget as HttpTarget,
        McpSession as McpSession,
        Response as Response,
        RpcError as RpcError,
        StdioTarget as StdioTarget,
        ToolOutcome as ToolOutcome,
    )
    from .transport.policy import Endpoint as Endpoint, check_endpoint as check_endpoint

#: module (relative to this package) -> the public names it defines
_EXPORTS: dict[str, tuple[str, ...]] = {
    ".analysis": (
        "FILTER_COLUMNS", "OUTCOMES", "PERCENTILES", "call_label", "error_templates", "filter_calls",
        "join_annotations", "latency_over_time", "latency_summary", "outcome_rates", "readiness_history",
        "slowest_tools", "template_changes", "template_daily", "wilson_interval",
    ),
    ".capture.annotate": ("annotate",),
    ".capture.correlate": ("Correlator", "classify_frame",),
    ".capture.shim": ("ShimOptions", "run_shim",),
    ".capture.shim_http": ("HTTPShim", "HTTPShimOptions", "run_shim_http",),
    ".errors": (
        "DocumentError", "GrammarError", "InvalidRecord", "JournalError", "LockTimeout", "MCPEvalError",
        "ManifestError", "ProbeError", "ProfileError", "RecordTooLarge", "ReviewError", "SaltError",
        "ShareOutputError", "ShareRefused", "TransportError", "TrendHistoryCorrupt", "UsageError", "describe",
    ),
    ".home": ("load_salt", "resolve_root",),
    ".journal": ("JournalEntry", "append_record", "append_records", "read_records",),
    ".privacy": (
        "ANNOTATION_KINDS", "AnnotationRecord", "CallRecord", "EnumIndex", "MeasurementProfile", "TrendPoint",
        "error_info", "opaque_session", "sanitize_shape", "shape", "skeleton", "template_id",
        "valid_identifier", "valid_method", "valid_server", "valid_tool",
    ),
    ".probe": (
        "BatteryHook", "CaseResult", "Manifest", "ProbeCase", "ProbeOptions", "ProbeReport", "ProgressEvent",
        "RunContext", "battery_hook", "hint_for", "load_manifest", "make_target", "manifest_schema",
        "manifest_schema_text", "parse_manifest", "parse_report", "probe_kinds", "reason_hints",
        "register_battery", "run_probes", "select_cases", "set_readiness_renderer",
    ),
    ".probe.battery": ("BatteryOptions", "run_battery", "score_server",),
    ".probe.compare": ("Comparison", "compare_servers",),
    ".probe.diff": ("ProbeDiff", "diff_reports",),
    ".probe.doc_schemas": ("diff_schema", "diff_schema_text", "report_schema", "report_schema_text",),
    ".probe.history": (
        "load_trends", "record_report_trend", "record_trend", "render_trends", "select_recent", "trend_delta",
        "trends_text",
    ),
    ".probe.readiness_text": ("readiness_lines",),
    ".probe.sarif": ("report_sarif", "report_sarif_text",),
    ".probe.scaffold": ("Scaffold", "scaffold_manifest", "write_manifest",),
    ".probe.score": (
        "BatteryObservations", "CallObservation", "HonestyObservation", "ToolFacts", "ToolRun",
        "score_readiness",
    ),
    ".probe.score_model": ("Readiness", "measurement_profile", "parse_readiness",),
    ".probe.synth": ("Synthesis", "invalid_arguments", "synthesize",),
    ".review": (
        "FlaggedLine", "RedactionReport", "ShareOptions", "ShareResult", "check_redaction", "export_share",
    ),
    ".tables": (
        "ANNOTATIONS_SCHEMA", "CALLS_SCHEMA", "REPORT_SCHEMA", "Store", "TRENDS_SCHEMA", "open_store",
    ),
    ".transport": (
        "Budget", "Catalog", "HttpTarget", "McpSession", "Response", "RpcError", "StdioTarget", "ToolOutcome",
    ),
    ".transport.policy": ("Endpoint", "check_endpoint",),
}

#: public name -> its module, derived from ``_EXPORTS``
_LAZY: dict[str, str] = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted([*_LAZY, "__version__"])


def __getattr__(name: str) -> typing.Any:
    """Load a public name from its module on first access."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """Public names included, loaded or not."""
    return sorted(set(globals()) | set(__all__))
