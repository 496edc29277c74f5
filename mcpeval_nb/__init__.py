"""mcpeval-nb: privacy-preserving capture and probing for MCP servers, built for Jupyter.

The public API lives here.  ``_EXPORTS`` is the one table of public names (module -> names); the lazy
loader and the sorted ``__all__`` are derived from it, and the ``TYPE_CHECKING`` imports below mirror it
for type checkers (``tests/test_public_api.py`` checks that they agree).  Imports point down the floors
of docs/architecture.md (the bottom, clock/jsonfmt/root, privacy, journal ... serve, then this module,
then cli/charts/widgets); ``tests/test_imports.py`` checks them.

Every public name is loaded on first use (PEP 562), so ``import mcpeval_nb`` and the CLI stay fast:
the shim never pays for pyarrow, pandas, matplotlib or jsonschema.

Raw-content types (sessions, responses, the capture correlator) are deliberately not here: they live in
``mcpeval_nb.transport`` and ``mcpeval_nb.capture``, so code that imports only this module sees no payload.
"""

from __future__ import annotations

import importlib
import sys

from ._lazy import exports as _exports
from ._version import __version__ as __version__

TYPE_CHECKING = False  # typing's, without importing typing: the shim starts its server first
if TYPE_CHECKING:
    from .analysis import (
        FILTER_COLUMNS as FILTER_COLUMNS,
    )
    from .analysis import (
        OPERATIONS_SCHEMA as OPERATIONS_SCHEMA,
    )
    from .analysis import (
        OUTCOMES as OUTCOMES,
    )
    from .analysis import (
        PERCENTILES as PERCENTILES,
    )
    from .analysis import (
        call_label as call_label,
    )
    from .analysis import (
        era_mix as era_mix,
    )
    from .analysis import (
        error_templates as error_templates,
    )
    from .analysis import (
        filter_calls as filter_calls,
    )
    from .analysis import (
        format_ms as format_ms,
    )
    from .analysis import (
        join_annotations as join_annotations,
    )
    from .analysis import (
        latency_over_time as latency_over_time,
    )
    from .analysis import (
        latency_summary as latency_summary,
    )
    from .analysis import (
        operation_summary as operation_summary,
    )
    from .analysis import (
        outcome_rates as outcome_rates,
    )
    from .analysis import (
        readiness_history as readiness_history,
    )
    from .analysis import (
        slowest_tools as slowest_tools,
    )
    from .analysis import (
        template_changes as template_changes,
    )
    from .analysis import (
        template_daily as template_daily,
    )
    from .analysis import (
        wilson_interval as wilson_interval,
    )
    from .analysis.catalog import catalog_drift as catalog_drift
    from .analysis.catalog import catalog_history as catalog_history
    from .analysis.catalog_pins import CatalogPins as CatalogPins
    from .analysis.catalog_pins import load_pins as load_pins
    from .analysis.usage import DEAD_BELOW as DEAD_BELOW
    from .analysis.usage import tool_clusters as tool_clusters
    from .analysis.usage import tool_transitions as tool_transitions
    from .analysis.usage import tool_usage as tool_usage
    from .capture.annotate import annotate as annotate
    from .capture.shim import ShimOptions as ShimOptions
    from .capture.shim import run_shim as run_shim
    from .capture.shim_http import (
        HTTPShim as HTTPShim,
    )
    from .capture.shim_http import (
        HTTPShimOptions as HTTPShimOptions,
    )
    from .capture.shim_http import (
        run_shim_http as run_shim_http,
    )
    from .catalog import CatalogCheck as CatalogCheck
    from .catalog import CatalogReport as CatalogReport
    from .catalog import CatalogStatus as CatalogStatus
    from .catalog import PinResult as PinResult
    from .catalog import UsageReport as UsageReport
    from .catalog import catalog_report as catalog_report
    from .catalog import catalog_status as catalog_status
    from .catalog import check_catalogs as check_catalogs
    from .catalog import pin_catalogs as pin_catalogs
    from .catalog import usage_report as usage_report
    from .configuration import AuditLog as AuditLog
    from .configuration import ConfigReport as ConfigReport
    from .configuration import resolve_config as resolve_config
    from .errors import (
        Cancelled as Cancelled,
    )
    from .errors import (
        DocumentError as DocumentError,
    )
    from .errors import (
        EraseIncomplete as EraseIncomplete,
    )
    from .errors import (
        FindingsError as FindingsError,
    )
    from .errors import (
        GovernanceError as GovernanceError,
    )
    from .errors import (
        GrammarError as GrammarError,
    )
    from .errors import (
        InvalidRecord as InvalidRecord,
    )
    from .errors import (
        JournalError as JournalError,
    )
    from .errors import (
        LockTimeout as LockTimeout,
    )
    from .errors import (
        ManifestError as ManifestError,
    )
    from .errors import (
        MCPEvalError as MCPEvalError,
    )
    from .errors import (
        MissingExtra as MissingExtra,
    )
    from .errors import (
        ProbeError as ProbeError,
    )
    from .errors import (
        ProfileError as ProfileError,
    )
    from .errors import (
        ProtocolMismatch as ProtocolMismatch,
    )
    from .errors import (
        RecordTooLarge as RecordTooLarge,
    )
    from .errors import (
        ReviewError as ReviewError,
    )
    from .errors import (
        SaltError as SaltError,
    )
    from .errors import (
        ShareOutputError as ShareOutputError,
    )
    from .errors import (
        ShareRefused as ShareRefused,
    )
    from .errors import (
        TransportError as TransportError,
    )
    from .errors import (
        TrendHistoryCorrupt as TrendHistoryCorrupt,
    )
    from .errors import (
        UsageError as UsageError,
    )
    from .errors import (
        describe as describe,
    )
    from .gates.budgets import (
        BudgetEntry as BudgetEntry,
    )
    from .gates.budgets import (
        Budgets as Budgets,
    )
    from .gates.budgets import (
        budgets_schema as budgets_schema,
    )
    from .gates.budgets import (
        budgets_schema_text as budgets_schema_text,
    )
    from .gates.budgets import (
        load_budgets as load_budgets,
    )
    from .gates.budgets import (
        parse_budgets as parse_budgets,
    )
    from .gates.evaluate import gate as gate
    from .gates.report import GateCheck as GateCheck
    from .gates.report import GateReport as GateReport
    from .governance import EraseResult as EraseResult
    from .governance import RetentionResult as RetentionResult
    from .governance import apply_retention as apply_retention
    from .governance import audit_lines as audit_lines
    from .governance import audit_log as audit_log
    from .governance import erase as erase
    from .governance import read_audit as read_audit
    from .governance import recover as recover
    from .journal import (
        JournalEntry as JournalEntry,
    )
    from .journal import (
        append_record as append_record,
    )
    from .journal import (
        append_records as append_records,
    )
    from .journal import (
        read_records as read_records,
    )
    from .junit import JUnitCase as JUnitCase
    from .junit import JUnitSuite as JUnitSuite
    from .junit import render_junit as render_junit
    from .mock import MockEngine as MockEngine
    from .mock import MockOptions as MockOptions
    from .mock import MockProfile as MockProfile
    from .mock import MockServer as MockServer
    from .mock import ReplayReport as ReplayReport
    from .mock import export_mock_profile as export_mock_profile
    from .mock import load_profile as load_profile
    from .mock import mock_profile as mock_profile
    from .mock import parse_profile as parse_profile
    from .mock import profile_schema_text as profile_schema_text
    from .mock import replay as replay
    from .mock import run_mock as run_mock
    from .mock import serve_mock as serve_mock
    from .privacy import (
        ANNOTATION_KINDS as ANNOTATION_KINDS,
    )
    from .privacy import (
        AnnotationRecord as AnnotationRecord,
    )
    from .privacy import (
        CallRecord as CallRecord,
    )
    from .privacy import (
        EnumIndex as EnumIndex,
    )
    from .privacy import (
        MeasurementProfile as MeasurementProfile,
    )
    from .privacy import (
        TrendPoint as TrendPoint,
    )
    from .privacy import (
        error_info as error_info,
    )
    from .privacy import (
        opaque_session as opaque_session,
    )
    from .privacy import (
        sanitize_shape as sanitize_shape,
    )
    from .privacy import (
        shape as shape,
    )
    from .privacy import (
        skeleton as skeleton,
    )
    from .privacy import (
        template_id as template_id,
    )
    from .privacy import (
        valid_identifier as valid_identifier,
    )
    from .privacy import (
        valid_method as valid_method,
    )
    from .privacy import (
        valid_server as valid_server,
    )
    from .privacy import (
        valid_tool as valid_tool,
    )
    from .privacy.catalog_signals import SIGNAL_RULES as SIGNAL_RULES
    from .privacy.catalog_signals import SignalRule as SignalRule
    from .probe import (
        CaseResult as CaseResult,
    )
    from .probe import (
        Manifest as Manifest,
    )
    from .probe import (
        ProbeCase as ProbeCase,
    )
    from .probe import (
        ProbeOptions as ProbeOptions,
    )
    from .probe import (
        ProbeReport as ProbeReport,
    )
    from .probe import (
        ProgressEvent as ProgressEvent,
    )
    from .probe import (
        RunContext as RunContext,
    )
    from .probe import (
        hint_for as hint_for,
    )
    from .probe import (
        load_manifest as load_manifest,
    )
    from .probe import (
        make_target as make_target,
    )
    from .probe import (
        manifest_schema as manifest_schema,
    )
    from .probe import (
        manifest_schema_text as manifest_schema_text,
    )
    from .probe import (
        parse_manifest as parse_manifest,
    )
    from .probe import (
        parse_report as parse_report,
    )
    from .probe import (
        probe_kinds as probe_kinds,
    )
    from .probe import (
        reason_hints as reason_hints,
    )
    from .probe import (
        run_probes as run_probes,
    )
    from .probe import (
        select_cases as select_cases,
    )
    from .probe.compare import Comparison as Comparison
    from .probe.compare import compare_servers as compare_servers
    from .probe.conformance import Conformance as Conformance
    from .probe.conformance import ConformanceBaseline as ConformanceBaseline
    from .probe.conformance import judge_conformance as judge_conformance
    from .probe.conformance import load_conformance_baseline as load_conformance_baseline
    from .probe.conformance import read_conformance_results as read_conformance_results
    from .probe.corpus import Corpus as Corpus
    from .probe.corpus import load_corpus as load_corpus
    from .probe.diff import ProbeDiff as ProbeDiff
    from .probe.diff import diff_reports as diff_reports
    from .probe.doc_schemas import (
        diff_schema as diff_schema,
    )
    from .probe.doc_schemas import (
        diff_schema_text as diff_schema_text,
    )
    from .probe.doc_schemas import (
        report_schema as report_schema,
    )
    from .probe.doc_schemas import (
        report_schema_text as report_schema_text,
    )
    from .probe.era_matrix import EraMatrix as EraMatrix
    from .probe.era_matrix import era_matrix as era_matrix
    from .probe.guidance import Guidance as Guidance
    from .probe.guidance import guidance as guidance
    from .probe.history import (
        load_trends as load_trends,
    )
    from .probe.history import (
        record_report_trend as record_report_trend,
    )
    from .probe.history import (
        record_trend as record_trend,
    )
    from .probe.history import (
        render_trends as render_trends,
    )
    from .probe.history import (
        select_recent as select_recent,
    )
    from .probe.history import (
        trend_delta as trend_delta,
    )
    from .probe.history import (
        trends_text as trends_text,
    )
    from .probe.readiness.battery import (
        BatteryOptions as BatteryOptions,
    )
    from .probe.readiness.battery import (
        run_battery as run_battery,
    )
    from .probe.readiness.battery import (
        score_server as score_server,
    )
    from .probe.readiness.model import Readiness as Readiness
    from .probe.readiness.model import measurement_profile as measurement_profile
    from .probe.readiness.observations import (
        BatteryObservations as BatteryObservations,
    )
    from .probe.readiness.observations import (
        CallObservation as CallObservation,
    )
    from .probe.readiness.observations import (
        HonestyObservation as HonestyObservation,
    )
    from .probe.readiness.observations import (
        ToolFacts as ToolFacts,
    )
    from .probe.readiness.observations import (
        ToolRun as ToolRun,
    )
    from .probe.readiness.parse import parse_readiness as parse_readiness
    from .probe.readiness.score import score_readiness as score_readiness
    from .probe.readiness.synth import (
        Synthesis as Synthesis,
    )
    from .probe.readiness.synth import (
        invalid_arguments as invalid_arguments,
    )
    from .probe.readiness.synth import (
        synthesize as synthesize,
    )
    from .probe.readiness.text import readiness_lines as readiness_lines
    from .probe.render import render as render
    from .probe.sarif import report_sarif as report_sarif
    from .probe.sarif import report_sarif_text as report_sarif_text
    from .probe.scaffold import (
        Scaffold as Scaffold,
    )
    from .probe.scaffold import (
        scaffold_manifest as scaffold_manifest,
    )
    from .probe.scaffold import (
        write_manifest as write_manifest,
    )
    from .progress import Progress as Progress
    from .progress import byte_progress as byte_progress
    from .review import (
        FlaggedLine as FlaggedLine,
    )
    from .review import (
        RedactionReport as RedactionReport,
    )
    from .review import (
        ShareOptions as ShareOptions,
    )
    from .review import (
        ShareResult as ShareResult,
    )
    from .review import (
        check_redaction as check_redaction,
    )
    from .review import (
        export_share as export_share,
    )
    from .root import Root as Root
    from .root import RootLike as RootLike
    from .root import load_salt as load_salt
    from .root import resolve_root as resolve_root
    from .scale import (
        DaskEngine as DaskEngine,
    )
    from .scale import (
        DuckDBEngine as DuckDBEngine,
    )
    from .scale import (
        OTLPExport as OTLPExport,
    )
    from .scale import (
        dask_engine as dask_engine,
    )
    from .scale import (
        duckdb_engine as duckdb_engine,
    )
    from .scale import (
        export_otlp as export_otlp,
    )
    from .serve import FindingsServer as FindingsServer
    from .serve import ServeConfig as ServeConfig
    from .serve import ServeOptions as ServeOptions
    from .serve import run_serve as run_serve
    from .serve import serve_config as serve_config
    from .sizes import (
        CallManifest as CallManifest,
    )
    from .sizes import (
        CallSize as CallSize,
    )
    from .sizes import (
        CaptureManifest as CaptureManifest,
    )
    from .sizes import (
        ResultSizes as ResultSizes,
    )
    from .sizes import (
        SizePoint as SizePoint,
    )
    from .sizes import (
        SizesOptions as SizesOptions,
    )
    from .sizes import (
        load_call_manifest as load_call_manifest,
    )
    from .sizes import (
        load_capture_manifest as load_capture_manifest,
    )
    from .sizes import (
        load_size_history as load_size_history,
    )
    from .sizes import (
        parse_call_manifest as parse_call_manifest,
    )
    from .sizes import (
        parse_capture_manifest as parse_capture_manifest,
    )
    from .sizes import (
        probe_result_sizes as probe_result_sizes,
    )
    from .sizes.phases import (
        PhaseCapture as PhaseCapture,
    )
    from .sizes.phases import (
        PhaseView as PhaseView,
    )
    from .sizes.phases import (
        capture_phases as capture_phases,
    )
    from .sizes.phases import (
        load_phases as load_phases,
    )
    from .sizes.table import (
        result_size_history as result_size_history,
    )
    from .sizes.table import (
        sizes_schema_text as sizes_schema_text,
    )
    from .tables import (
        ANNOTATIONS_SCHEMA as ANNOTATIONS_SCHEMA,
    )
    from .tables import (
        CALLS_SCHEMA as CALLS_SCHEMA,
    )
    from .tables import (
        CATALOGS_SCHEMA as CATALOGS_SCHEMA,
    )
    from .tables import (
        LOAD_REPORT_SCHEMA as LOAD_REPORT_SCHEMA,
    )
    from .tables import (
        TRENDS_SCHEMA as TRENDS_SCHEMA,
    )
    from .tables import (
        Store as Store,
    )
    from .tables import (
        open_store as open_store,
    )
    from .tables.coerce import as_table as as_table
    from .textsafe import escape_controls as escape_controls
    from .transport import Budget as Budget
    from .transport import HttpTarget as HttpTarget
    from .transport import StdioTarget as StdioTarget
    from .transport.policy import Endpoint as Endpoint
    from .transport.policy import check_endpoint as check_endpoint
    from .triage.explain import Explanation as Explanation
    from .triage.explain import explain_finding as explain_finding
    from .triage.explain import failure_windows as failure_windows
    from .triage.export import ExportResult as ExportResult
    from .triage.export import export_issues as export_issues
    from .triage.findings import finding_history as finding_history
    from .triage.findings import findings as findings
    from .triage.formats import FINDINGS_FORMATS as FINDINGS_FORMATS
    from .triage.formats import FindingsView as FindingsView
    from .triage.formats import findings_view as findings_view
    from .triage.formats import render_findings as render_findings
    from .triage.generate import Generated as Generated
    from .triage.generate import generate_manifest as generate_manifest
    from .triage.index.build import build_index as build_index
    from .triage.index.result import IndexResult as IndexResult
    from .triage.lifecycle import FINDING_STATES as FINDING_STATES
    from .triage.promote import PromoteResult as PromoteResult
    from .triage.promote import promote as promote
    from .triage.rows import FINDINGS_SCHEMA as FINDINGS_SCHEMA
    from .triage.verify import VerifyResult as VerifyResult
    from .triage.verify import verify_finding as verify_finding

#: module (relative to this package) -> the public names it defines
_EXPORTS: dict[str, tuple[str, ...]] = {
    ".analysis": (
        "FILTER_COLUMNS", "OPERATIONS_SCHEMA", "OUTCOMES", "PERCENTILES", "call_label", "era_mix",
        "error_templates", "filter_calls", "format_ms", "join_annotations", "latency_over_time",
        "latency_summary", "operation_summary", "outcome_rates", "readiness_history", "slowest_tools",
        "template_changes", "template_daily", "wilson_interval",
    ),
    ".analysis.catalog": ("catalog_drift", "catalog_history",),
    ".analysis.catalog_pins": ("CatalogPins", "load_pins",),
    ".analysis.usage": ("DEAD_BELOW", "tool_clusters", "tool_transitions", "tool_usage",),
    ".capture.annotate": ("annotate",),
    ".catalog": (
        "CatalogCheck", "CatalogReport", "CatalogStatus", "PinResult", "UsageReport", "catalog_report",
        "catalog_status", "check_catalogs", "pin_catalogs", "usage_report",
    ),
    ".capture.shim": ("ShimOptions", "run_shim",),
    ".textsafe": ("escape_controls",),
    ".capture.shim_http": ("HTTPShim", "HTTPShimOptions", "run_shim_http",),
    ".configuration": ("AuditLog", "ConfigReport", "resolve_config",),
    ".errors": (
        "Cancelled", "DocumentError", "EraseIncomplete", "FindingsError", "GovernanceError", "GrammarError",
        "InvalidRecord", "JournalError", "LockTimeout", "MCPEvalError", "ManifestError", "MissingExtra",
        "ProbeError", "ProfileError", "ProtocolMismatch", "RecordTooLarge", "ReviewError", "SaltError",
        "ShareOutputError",
        "ShareRefused", "TransportError", "TrendHistoryCorrupt", "UsageError", "describe",
    ),
    ".gates.budgets": (
        "BudgetEntry", "Budgets", "budgets_schema", "budgets_schema_text", "load_budgets", "parse_budgets",
    ),
    ".gates.evaluate": ("gate",),
    ".gates.report": ("GateCheck", "GateReport",),
    ".governance": (
        "EraseResult", "RetentionResult", "apply_retention", "audit_lines", "audit_log", "erase",
        "read_audit", "recover",
    ),
    ".journal": ("JournalEntry", "append_record", "append_records", "read_records",),
    ".mock": (
        "MockEngine", "MockOptions", "MockProfile", "MockServer", "export_mock_profile", "load_profile",
        "mock_profile",
        "ReplayReport", "parse_profile", "profile_schema_text", "replay", "run_mock", "serve_mock",
    ),
    ".junit": ("JUnitCase", "JUnitSuite", "render_junit",),
    ".privacy": (
        "ANNOTATION_KINDS", "AnnotationRecord", "CallRecord", "EnumIndex", "MeasurementProfile", "TrendPoint",
        "error_info", "opaque_session", "sanitize_shape", "shape", "skeleton", "template_id",
        "valid_identifier", "valid_method", "valid_server", "valid_tool",
    ),
    ".privacy.catalog_signals": ("SIGNAL_RULES", "SignalRule",),
    ".probe": (
        "CaseResult", "Manifest", "ProbeCase", "ProbeOptions", "ProbeReport", "ProgressEvent", "RunContext",
        "hint_for", "load_manifest", "make_target", "manifest_schema", "manifest_schema_text",
        "parse_manifest", "parse_report", "probe_kinds", "reason_hints", "run_probes", "select_cases",
    ),
    ".probe.compare": ("Comparison", "compare_servers",),
    ".probe.conformance": (
        "Conformance", "ConformanceBaseline", "judge_conformance", "load_conformance_baseline",
        "read_conformance_results",
    ),
    ".probe.corpus": ("Corpus", "load_corpus",),
    ".probe.era_matrix": ("EraMatrix", "era_matrix",),
    ".probe.guidance": ("Guidance", "guidance",),
    ".probe.diff": ("ProbeDiff", "diff_reports",),
    ".probe.doc_schemas": ("diff_schema", "diff_schema_text", "report_schema", "report_schema_text",),
    ".probe.history": (
        "load_trends", "record_report_trend", "record_trend", "render_trends", "select_recent", "trend_delta",
        "trends_text",
    ),
    ".probe.readiness.battery": ("BatteryOptions", "run_battery", "score_server",),
    ".probe.readiness.model": ("Readiness", "measurement_profile",),
    ".probe.readiness.observations": (
        "BatteryObservations", "CallObservation", "HonestyObservation", "ToolFacts", "ToolRun",
    ),
    ".probe.readiness.parse": ("parse_readiness",),
    ".probe.readiness.score": ("score_readiness",),
    ".probe.readiness.synth": ("Synthesis", "invalid_arguments", "synthesize",),
    ".probe.readiness.text": ("readiness_lines",),
    ".probe.render": ("render",),
    ".probe.sarif": ("report_sarif", "report_sarif_text",),
    ".probe.scaffold": ("Scaffold", "scaffold_manifest", "write_manifest",),
    ".review": (
        "FlaggedLine", "RedactionReport", "ShareOptions", "ShareResult", "check_redaction", "export_share",
    ),
    ".root": ("Root", "RootLike", "load_salt", "resolve_root",),
    ".scale": ("DaskEngine", "DuckDBEngine", "OTLPExport", "dask_engine", "duckdb_engine", "export_otlp",),
    ".sizes": (
        "CallManifest", "CallSize", "CaptureManifest", "ResultSizes", "SizePoint", "SizesOptions",
        "load_call_manifest", "load_capture_manifest", "load_size_history", "parse_call_manifest",
        "parse_capture_manifest", "probe_result_sizes",
    ),
    ".sizes.phases": ("PhaseCapture", "PhaseView", "capture_phases", "load_phases",),
    ".sizes.table": ("result_size_history", "sizes_schema_text",),
    ".serve": ("FindingsServer", "ServeConfig", "ServeOptions", "run_serve", "serve_config",),
    ".progress": ("Progress", "byte_progress",),
    ".tables.coerce": ("as_table",),
    ".tables": (
        "ANNOTATIONS_SCHEMA", "CALLS_SCHEMA", "CATALOGS_SCHEMA", "LOAD_REPORT_SCHEMA", "Store",
        "TRENDS_SCHEMA", "open_store",
    ),
    ".transport": ("Budget", "HttpTarget", "StdioTarget",),
    ".triage.explain": ("Explanation", "explain_finding", "failure_windows",),
    ".triage.export": ("ExportResult", "export_issues",),
    ".triage.findings": ("finding_history", "findings",),
    ".triage.formats": ("FINDINGS_FORMATS", "FindingsView", "findings_view", "render_findings",),
    ".triage.generate": ("Generated", "generate_manifest",),
    ".triage.index.build": ("build_index",),
    ".triage.index.result": ("IndexResult",),
    ".triage.lifecycle": ("FINDING_STATES",),
    ".triage.promote": ("PromoteResult", "promote",),
    ".triage.rows": ("FINDINGS_SCHEMA",),
    ".triage.verify": ("VerifyResult", "verify_finding",),
    ".transport.policy": ("Endpoint", "check_endpoint",),
}

del TYPE_CHECKING  # not a public name
_names, __getattr__, __dir__ = _exports(globals(), _EXPORTS)  # each name loads on first use (_lazy.py)
__all__ = sorted([*_names, "__version__"])


if "IPython" in sys.modules:  # in a notebook, tables render as tables (tables/html.py; cheap check)
    importlib.import_module(".tables.html", __name__).register_table_html()
