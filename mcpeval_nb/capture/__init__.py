"""Capture: the correlator and the recording shims (stdio and Streamable HTTP)."""

from __future__ import annotations

from .correlate import Correlator, classify_frame

__all__ = ["Correlator", "classify_frame"]
