"""Review: the redaction check (``doctor``) and the share envelope (SPEC 10, 11).

``check_redaction`` scans the store and reports flagged locations (never matched text);
``export_share`` writes a checked, normalised envelope and publishes it atomically.
"""

from __future__ import annotations

from .detectors import DETECTORS, is_shape_token, line_detectors, text_detectors
from .doctor import FlaggedLine, RedactionReport, check_redaction
from .share import ShareOptions, ShareResult, export_share, share_md

__all__ = [
    "DETECTORS",
    "FlaggedLine",
    "RedactionReport",
    "ShareOptions",
    "ShareResult",
    "check_redaction",
    "export_share",
    "is_shape_token",
    "line_detectors",
    "share_md",
    "text_detectors",
]
