"""mcpeval-nb: privacy-preserving capture and probing for MCP servers, built for Jupyter.

The public API lives here, one sorted ``__all__`` (a test checks it).  Layers import in one direction:
errors/limits/jsonfmt -> privacy -> journal -> tables/analysis -> probe/capture/review -> this module ->
cli/charts/widgets.
"""

from __future__ import annotations

__version__ = "0.1.0"

# --- tables and analysis: Arrow tables over the store, pure analysis functions ---------------------
# (analysis.trend_delta also exists; the top-level name is probe.history's, which renders trends text)
from .analysis import (
    OUTCOMES,
    PERCENTILES,
    error_templates,
    join_annotations,
    latency_over_time,
    latency_summary,
    outcome_rates,
    readiness_history,
    slowest_tools,
    template_changes,
    template_daily,
    wilson_interval,
)

# --- foundation: errors, privacy boundary, capture root and journals -------------------------------
from .capture.annotate import annotate
from .capture.correlate import Correlator, classify_frame

# --- capture: stdio and Streamable HTTP recording shims, upstream endpoint policy -----------------
from .capture.shim import ShimOptions, run_shim
from .capture.shim_http import HTTPShim, HTTPShimOptions, run_shim_http
from .errors import (
    DocumentError,
    GrammarError,
    InvalidRecord,
    JournalError,
    LockTimeout,
    ManifestError,
    MCPEvalError,
    ProbeError,
    RecordTooLarge,
    ReviewError,
    SaltError,
    TransportError,
    UsageError,
)
from .home import load_salt, resolve_root
from .journal import JournalEntry, append_record, append_records, read_records
from .privacy import (
    ANNOTATION_KINDS,
    AnnotationRecord,
    CallRecord,
    EnumIndex,
    MeasurementProfile,
    ProfileError,
    TrendPoint,
    error_info,
    opaque_session,
    sanitize_shape,
    shape,
    skeleton,
    template_id,
    valid_identifier,
    valid_method,
    valid_server,
    valid_tool,
)

# --- probe: manifests, probe kinds, runner, probe reports ------------------------------------------
from .probe import (
    BatteryHook,
    CaseResult,
    Manifest,
    ProbeCase,
    ProbeOptions,
    ProbeReport,
    ProgressEvent,
    RunContext,
    battery_hook,
    hint_for,
    load_manifest,
    make_target,
    manifest_schema,
    manifest_schema_text,
    parse_manifest,
    parse_report,
    probe_kinds,
    reason_hints,
    register_battery,
    run_probes,
    select_cases,
    set_readiness_renderer,
)

# --- readiness: standard battery, input synthesis, score, trend history, report tools (issue 7) ------
from .probe.battery import BatteryOptions, run_battery, score_server
from .probe.compare import Comparison, compare_servers
from .probe.diff import ProbeDiff, diff_reports
from .probe.doc_schemas import diff_schema, diff_schema_text, report_schema, report_schema_text
from .probe.history import (
    TrendHistoryCorrupt,
    load_trends,
    record_report_trend,
    record_trend,
    render_trends,
    select_recent,
    trend_delta,
    trends_text,
)
from .probe.readiness_text import readiness_lines
from .probe.sarif import report_sarif, report_sarif_text
from .probe.scaffold import Scaffold, scaffold_manifest, write_manifest
from .probe.score import (
    BatteryObservations,
    CallObservation,
    HonestyObservation,
    ToolFacts,
    ToolRun,
    score_readiness,
)
from .probe.score_model import Readiness, measurement_profile, parse_readiness
from .probe.synth import Synthesis, invalid_arguments, synthesize

# --- review: redaction check (doctor) and share envelope ---------------------------------------------
from .review import (
    FlaggedLine,
    RedactionReport,
    ShareOptions,
    ShareOutputError,
    ShareRefused,
    ShareResult,
    check_redaction,
    export_share,
)

# --- tables (see the analysis block above) ---------------------------------------------------------
from .tables import (
    ANNOTATIONS_SCHEMA,
    CALLS_SCHEMA,
    REPORT_SCHEMA,
    TRENDS_SCHEMA,
    Store,
    open_store,
)

# --- transport: bounded stdio and Streamable HTTP MCP clients, the session layer, the shared budget ----
from .transport import (
    Budget,
    Catalog,
    HttpTarget,
    McpSession,
    Response,
    RpcError,
    StdioTarget,
    ToolOutcome,
)
from .transport.policy import Endpoint, check_endpoint

__all__ = [
    "ANNOTATIONS_SCHEMA",
    "ANNOTATION_KINDS",
    "AnnotationRecord",
    "BatteryHook",
    "BatteryObservations",
    "BatteryOptions",
    "Budget",
    "CALLS_SCHEMA",
    "CallObservation",
    "CallRecord",
    "CaseResult",
    "Catalog",
    "Comparison",
    "Correlator",
    "DocumentError",
    "Endpoint",
    "EnumIndex",
    "FlaggedLine",
    "GrammarError",
    "HTTPShim",
    "HTTPShimOptions",
    "HonestyObservation",
    "HttpTarget",
    "InvalidRecord",
    "JournalEntry",
    "JournalError",
    "LockTimeout",
    "MCPEvalError",
    "Manifest",
    "ManifestError",
    "McpSession",
    "MeasurementProfile",
    "OUTCOMES",
    "PERCENTILES",
    "ProbeCase",
    "ProbeDiff",
    "ProbeError",
    "ProbeOptions",
    "ProbeReport",
    "ProfileError",
    "ProgressEvent",
    "REPORT_SCHEMA",
    "Readiness",
    "RecordTooLarge",
    "RedactionReport",
    "Response",
    "ReviewError",
    "RpcError",
    "RunContext",
    "SaltError",
    "Scaffold",
    "ShareOptions",
    "ShareOutputError",
    "ShareRefused",
    "ShareResult",
    "ShimOptions",
    "StdioTarget",
    "Store",
    "Synthesis",
    "TRENDS_SCHEMA",
    "ToolFacts",
    "ToolOutcome",
    "ToolRun",
    "TransportError",
    "TrendHistoryCorrupt",
    "TrendPoint",
    "UsageError",
    "__version__",
    "annotate",
    "append_record",
    "append_records",
    "battery_hook",
    "check_endpoint",
    "check_redaction",
    "classify_frame",
    "compare_servers",
    "diff_reports",
    "diff_schema",
    "diff_schema_text",
    "error_info",
    "error_templates",
    "export_share",
    "hint_for",
    "invalid_arguments",
    "join_annotations",
    "latency_over_time",
    "latency_summary",
    "load_manifest",
    "load_salt",
    "load_trends",
    "make_target",
    "manifest_schema",
    "manifest_schema_text",
    "measurement_profile",
    "opaque_session",
    "open_store",
    "outcome_rates",
    "parse_manifest",
    "parse_readiness",
    "parse_report",
    "probe_kinds",
    "read_records",
    "readiness_history",
    "readiness_lines",
    "reason_hints",
    "record_report_trend",
    "record_trend",
    "register_battery",
    "render_trends",
    "report_sarif",
    "report_sarif_text",
    "report_schema",
    "report_schema_text",
    "resolve_root",
    "run_battery",
    "run_probes",
    "run_shim",
    "run_shim_http",
    "sanitize_shape",
    "scaffold_manifest",
    "score_readiness",
    "score_server",
    "select_cases",
    "select_recent",
    "set_readiness_renderer",
    "shape",
    "skeleton",
    "slowest_tools",
    "synthesize",
    "template_changes",
    "template_daily",
    "template_id",
    "trend_delta",
    "trends_text",
    "valid_identifier",
    "valid_method",
    "valid_server",
    "valid_tool",
    "wilson_interval",
    "write_manifest",
]
