"""The privacy boundary: everything that turns raw protocol content into storable tokens.

Raw payloads enter these functions in memory; only their outputs (tokens, buckets, salted ids) may
reach disk.  See docs/privacy.md.
"""

from __future__ import annotations

import sys
import types

from .._lazy import exports as _exports

TYPE_CHECKING = False  # typing's, without importing typing: the shim starts its server first
if TYPE_CHECKING:
    from .errorinfo import code_json as code_json
    from .errorinfo import code_text as code_text
    from .errorinfo import code_value as code_value
    from .errorinfo import error_info as error_info
    from .errorinfo import privacy_safe_code as privacy_safe_code
    from .errorinfo import safe_string_bucket as safe_string_bucket
    from .errorinfo import sanitize_error as sanitize_error
    from .errorinfo import tool_error_info as tool_error_info
    from .fingerprint import skeleton as skeleton
    from .fingerprint import template_id as template_id
    from .grammar import SERVER_LABEL_MESSAGE as SERVER_LABEL_MESSAGE
    from .grammar import opaque_session as opaque_session
    from .grammar import valid_identifier as valid_identifier
    from .grammar import valid_method as valid_method
    from .grammar import valid_server as valid_server
    from .grammar import valid_session_token as valid_session_token
    from .grammar import valid_template_id as valid_template_id
    from .grammar import valid_tool as valid_tool
    from .records import ANNOTATION_KINDS as ANNOTATION_KINDS
    from .records import AnnotationRecord as AnnotationRecord
    from .records import CallRecord as CallRecord
    from .records import Identity as Identity
    from .records import MeasurementProfile as MeasurementProfile
    from .records import TrendPoint as TrendPoint
    from .shape import EnumIndex as EnumIndex
    from .shape import is_canonical_token as is_canonical_token
    from .shape import sanitize_shape as sanitize_shape
    from .shape import shape as shape
    from .shape import string_bucket as string_bucket
    from .urls import classify_url as classify_url

_EXPORTS: dict[str, tuple[str, ...]] = {
    ".errorinfo": (
        "code_json", "code_text", "code_value", "error_info", "privacy_safe_code", "safe_string_bucket",
        "sanitize_error", "tool_error_info"
    ),
    ".fingerprint": ("skeleton", "template_id"),
    ".grammar": (
        "SERVER_LABEL_MESSAGE", "opaque_session", "valid_identifier", "valid_method", "valid_server",
        "valid_session_token", "valid_template_id", "valid_tool"
    ),
    ".records": (
        "ANNOTATION_KINDS", "AnnotationRecord", "CallRecord", "Identity", "MeasurementProfile", "TrendPoint"
    ),
    ".shape": ("EnumIndex", "is_canonical_token", "sanitize_shape", "shape", "string_bucket"),
    ".urls": ("classify_url",),
}

del TYPE_CHECKING  # not a public name
__all__, __getattr__, __dir__ = _exports(globals(), _EXPORTS)


class _Package(types.ModuleType):
    """``shape`` names a function and its module: importing the module (which sets the package's
    attribute to it) leaves the name to the function, which is loaded on first use like the rest."""

    def __setattr__(self, name: str, value: object) -> None:
        if name == "shape" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

