"""The privacy boundary: everything that turns raw protocol content into storable tokens.

Raw payloads enter these functions in memory; only their outputs (tokens, buckets, salted ids) may
reach disk.  See docs/privacy.md.
"""

from __future__ import annotations

from .errorinfo import error_info, privacy_safe_code, safe_string_bucket, sanitize_error, tool_error_info
from .fingerprint import skeleton, template_id
from .grammar import (
    SERVER_LABEL_MESSAGE,
    opaque_session,
    valid_identifier,
    valid_method,
    valid_server,
    valid_session_token,
    valid_template_id,
    valid_tool,
)
from .records import (
    ANNOTATION_KINDS,
    AnnotationRecord,
    CallRecord,
    Identity,
    MeasurementProfile,
    TrendPoint,
)
from .shape import EnumIndex, is_canonical_token, sanitize_shape, shape, string_bucket
from .urls import classify_url

__all__ = [
    "ANNOTATION_KINDS",
    "SERVER_LABEL_MESSAGE",
    "AnnotationRecord",
    "CallRecord",
    "EnumIndex",
    "Identity",
    "MeasurementProfile",
    "TrendPoint",
    "classify_url",
    "error_info",
    "is_canonical_token",
    "opaque_session",
    "privacy_safe_code",
    "safe_string_bucket",
    "sanitize_error",
    "sanitize_shape",
    "shape",
    "skeleton",
    "string_bucket",
    "template_id",
    "tool_error_info",
    "valid_identifier",
    "valid_method",
    "valid_server",
    "valid_session_token",
    "valid_template_id",
    "valid_tool",
]
