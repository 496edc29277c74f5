"""mcpeval-nb: privacy-preserving capture and probing for MCP servers, built for Jupyter.

The public API lives here, one sorted ``__all__`` (a test checks it).  Layers import in one direction:
errors/limits/jsonfmt -> privacy -> journal -> tables/analysis -> probe/capture/review -> this module ->
cli/charts/widgets.
"""

from __future__ import annotations

__version__ = "0.1.0"

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
    "ANNOTATION_KINDS",
    "AnnotationRecord",
    "BatteryHook",
    "Budget",
    "CallRecord",
    "CaseResult",
    "Catalog",
    "Correlator",
    "DocumentError",
    "Endpoint",
    "EnumIndex",
    "FlaggedLine",
    "GrammarError",
    "HTTPShim",
    "HTTPShimOptions",
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
    "ProbeCase",
    "ProbeError",
    "ProbeOptions",
    "ProbeReport",
    "ProfileError",
    "ProgressEvent",
    "RecordTooLarge",
    "RedactionReport",
    "Response",
    "ReviewError",
    "RpcError",
    "RunContext",
    "SaltError",
    "ShareOptions",
    "ShareOutputError",
    "ShareRefused",
    "ShareResult",
    "ShimOptions",
    "StdioTarget",
    "ToolOutcome",
    "TransportError",
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
    "error_info",
    "export_share",
    "hint_for",
    "load_manifest",
    "load_salt",
    "make_target",
    "manifest_schema",
    "manifest_schema_text",
    "opaque_session",
    "parse_manifest",
    "parse_report",
    "probe_kinds",
    "read_records",
    "reason_hints",
    "register_battery",
    "resolve_root",
    "run_probes",
    "run_shim",
    "run_shim_http",
    "sanitize_shape",
    "select_cases",
    "set_readiness_renderer",
    "shape",
    "skeleton",
    "template_id",
    "valid_identifier",
    "valid_method",
    "valid_server",
    "valid_tool",
]
