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
from .transport.policy import Endpoint, check_endpoint

__all__ = [
    "ANNOTATION_KINDS",
    "AnnotationRecord",
    "CallRecord",
    "Correlator",
    "DocumentError",
    "Endpoint",
    "EnumIndex",
    "FlaggedLine",
    "GrammarError",
    "HTTPShim",
    "HTTPShimOptions",
    "InvalidRecord",
    "JournalEntry",
    "JournalError",
    "LockTimeout",
    "MCPEvalError",
    "ManifestError",
    "MeasurementProfile",
    "ProbeError",
    "ProfileError",
    "RecordTooLarge",
    "RedactionReport",
    "ReviewError",
    "SaltError",
    "ShareOptions",
    "ShareOutputError",
    "ShareRefused",
    "ShareResult",
    "ShimOptions",
    "TransportError",
    "TrendPoint",
    "UsageError",
    "__version__",
    "annotate",
    "append_record",
    "append_records",
    "check_endpoint",
    "check_redaction",
    "classify_frame",
    "error_info",
    "export_share",
    "load_salt",
    "opaque_session",
    "read_records",
    "resolve_root",
    "run_shim",
    "run_shim_http",
    "sanitize_shape",
    "shape",
    "skeleton",
    "template_id",
    "valid_identifier",
    "valid_method",
    "valid_server",
    "valid_tool",
]
